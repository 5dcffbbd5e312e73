"""``python -m inr.codec``: the ``inr-codec`` command (``inr.codec.cli``)."""

from inr.codec.cli import main

if __name__ == "__main__":
    main()
