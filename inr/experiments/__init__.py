"""Comparisons and studies, each a module run with ``python -m inr.experiments.<name>``. What a method is and how
it trains (the registry, the protocols, the trainer helpers, ``inr.fit``) lies on the floor below, ``inr.methods``;
the command wrapper and parser, in ``inr.run.command``.

What every comparison shares:

- ``problems``: the inverse problems by name (measurement, held-out signal, classical reconstruction, Nyquist, the
  paper's runs, scores);
- ``comparison``: ``Comparison``, whose hooks hold a study's science, and the one ``run`` (methods × signals ×
  seeds, stacked where the task allows, baselines scored alike, results written after every row and resumed)
  and ``main`` (one command-line dialect, ``--config``/``--print_config``); ``results``: the one row vocabulary
  and ``results.json`` layout with its typed loader; ``runner``: mean ± std over seeds, tables, the paired
  difference and its verdict, the output directory; ``stats``: the paired test; ``heldout``: what the every_other
  comparisons share; ``baselines``: interpolation baselines and their scores; ``progress``: held-out PSNR over
  time; ``ranks``: one process per device.

The comparisons, each a ``Comparison`` declaration that imports no other:

- ``compare_encoders``: methods on an image with the paper's 2D protocol, beside interpolation, with the
  spectral-bias heatmaps side by side; ``compare_fields``: the same on a 1D signal or a 3D volume;
  ``inverse``: CT, MRI, inpainting and super-resolution against the classical reconstructions; ``table1``: the
  paper's Table 1 over a set of signals and seeds; ``view_synthesis``: radiance fields from posed views;
  ``shapes``: 3D shape occupancy from a mesh, beside a voxel grid and the nearest training point; ``codec``: the
  image codec's rate–distortion comparison (``codec_sizes``: the widths it trains, for learning inits first);
  ``band_timeline``: when each band was learned.
- ``ntk_1d``: the 1D NTK figures: kernel profiles and spectra of the encodings, and the training and test
  loss of a wide network under gradient descent against the kernel's closed-form prediction.
- ``conv_bottlenecks``: gains, padding and upsampling of randomly initialised conv decoders, and per-band
  error while fitting one image; ``conv_shift``: the cost of fitting a frequency-shifted target, over seeds;
  ``conv_autoencoder``: trained conv auto-encoders on image patches (the study's pieces: ``conv/``), per
  frequency band, against PCA and interpolation with a code of the same size.
- ``false_calls``: the paired test's false-call rate, simulated with no true difference.
- ``rd``: rate–distortion curves of any registered codec (``rd_codecs``: the classical anchors and the latent
  codec) on a set of images, one CompressAI-layout JSON per codec (``rd_results``, ``rd_curve``), BD-rate in both
  averaging conventions (``rd_bd``) and its table and figure (``rd_report``); ``rd_merge``: runs split by image
  joined into one.
"""

import sys as _sys

# ``python -m inr.experiments.<name>``: runpy imports this package (``sys.argv[0]`` still "-m") before the study's
# module, whose imports load Lightning, and Lightning reads the launcher's rank variables as it is imported: a
# malformed one (``SLURM_PROCID=abc``) is refused here in one line instead of a traceback from inside Lightning
if _sys.argv[:1] == ["-m"]:
    from inr.run.launch_env import refuse_bad_environment

    refuse_bad_environment()
