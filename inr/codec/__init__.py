"""An image codec built on coordinate networks: an image becomes a fitted network whose quantised, range-coded
weights are the file (docs/codec.md).

One concern per module, lowest first: ``quantise`` (uniform quantisers, straight-through fine-tuning), ``entropy``
(the range coder and its model), ``architecture`` (the registry's network a file names), ``bitstream`` (the file
format, its header and bounds), ``coding`` (network ↔ file ↔ pixels), ``fit`` (training, stacked members),
``search`` (the rate–distortion search), ``encode`` (targets: bpp, PSNR, weights), ``classical`` (JPEG, WebP and
AVIF at a rate), ``cli`` (the ``inr-codec`` command).
"""
