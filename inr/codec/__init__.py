"""An image codec built on coordinate networks: an image becomes a fitted network whose quantised, range-coded
weights are the file (docs/codec.md).

One concern per module, lowest first: ``bounds`` (what a file may ask of a decoder), ``networks`` (the codec's own
frozen table of the networks a file may name, per format version), ``architecture`` (a network of the table at a
size, and the tensors a file stores), ``quantise`` (uniform quantisers, straight-through fine-tuning), ``entropy``
(the range coder and its model), ``bitstream`` (the file format, its header and bounds), ``cost`` (a decode's work,
known from the header), ``init`` (learned inits known to the decoder), ``coding`` (network ↔ file ↔ pixels), ``sizes``
(the network sizes an encoder chooses among), ``fit`` (training, stacked members), ``search`` (the rate–distortion
search), ``encode`` (targets: bpp, PSNR, weights), ``classical`` (JPEG, WebP and AVIF at a rate), ``learn`` (learned
inits), ``cli`` (the ``inr-codec`` command). Decoding stands on the modules up to ``coding`` and imports none of the
training.
"""
