"""The conv auto-encoder study's own pieces: its model, image patches, per-band patch metrics and the fitting
loop of the conv experiments (the analysis itself is ``inr.conv_decoders``)."""
