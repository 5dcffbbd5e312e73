"""One-command reproductions, each a module run with ``python -m inr.experiments.<name>``.

- ``compare_encoders``: none / basic / positional / Gaussian (and any other row of its ``VARIANTS``) on an
  image, with the spectral-bias heatmaps side by side.
"""
