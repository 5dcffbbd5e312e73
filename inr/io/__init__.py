"""Input and output below every other floor: atomic file writing, video reading and writing, a trainer's run
directory, and the process settings a command makes before it starts (torch threads, malloc thresholds)."""
