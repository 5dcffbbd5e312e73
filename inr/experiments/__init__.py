"""One-command reproductions, each a module run with ``python -m inr.experiments.<name>``.

- ``compare_encoders``: none / basic / positional / Gaussian (and any other row of its ``VARIANTS``) on an
  image with the paper's settings (``paper_settings``), beside the interpolation baselines (``baselines``),
  with the spectral-bias heatmaps side by side; ``compare_report`` writes its table, ``estimate`` times it.
- ``ntk_1d``: the 1D NTK figures: kernel profiles and spectra of the encodings, and the training and test
  loss of a wide network under gradient descent against the kernel's closed-form prediction.
- ``conv_bottlenecks``: gains, padding and upsampling of randomly initialised conv decoders, and per-band
  error while fitting one image; ``conv_shift``: the cost of fitting a frequency-shifted target, over seeds;
  ``conv_autoencoder``: trained conv auto-encoders on image patches, per frequency band, against PCA and
  interpolation with a code of the same size.
"""
