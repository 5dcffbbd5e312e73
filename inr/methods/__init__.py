"""The library floor every command stands on: what a method is and how it trains, shared by the codec and the
comparisons alike.

- ``registry``: the one registry of every method (the paper's four mappings, SIREN, hash grids, WIRE, Gaussian
  activations, FINER, BACON, MFN) and its settings, resolved for where it runs, with the grid rule;
  ``configs/methods/*.yaml`` are generated from it (``python -m inr.methods --write-configs configs``);
- ``protocols``: each task's mapping settings (the paper's, read from its notebooks) and its Table 1 rows;
- ``training``: the quiet Trainer, one fit per row with its progress line, a step's seconds for estimates;
- ``fitting``: ``inr.fit``, a signal, image or volume fitted in one call;
- ``meta``: the one meta-training driver of learned inits (the learned-init study's and the codec's learn-init) and
  ``MetaSettings``, its settings stated once (``META``: the study's; the defaults: the codec's).

Nothing here imports ``inr.codec`` or ``inr.experiments`` (tests/test_layering.py).
"""
