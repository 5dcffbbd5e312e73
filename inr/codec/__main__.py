"""``python -m inr.codec``: the ``inr-codec`` command (``inr.codec.cli``)."""

from inr.run.launch_env import refuse_bad_environment

if __name__ == "__main__":
    refuse_bad_environment()  # before the codec's imports load Lightning, which reads the rank when imported
    from inr.codec.cli import main

    main()
