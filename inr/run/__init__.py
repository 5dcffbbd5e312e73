"""The command floor: the training CLI (``cli``), the run it manages (session, resume, signals, the run lock,
checkpoints read as data, the bounded config loader, the checks made before training), one loader of trained
runs (``model_loader``), the progress bar and prediction writer, and the mesh and turntable commands."""
