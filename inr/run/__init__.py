"""Run management: atomic checkpoints read as data only, resume with fallback, config records, the run lock,
signals that stop with a checkpoint, the bounded config loader and the checks made before training."""
