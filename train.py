"""Train an implicit neural representation from a YAML config.

python train.py --config image.yaml                    # a bare name resolves to configs/
python train.py --config image.yaml --trainer.max_steps 200 --model.encoder.init_args.sigma 10
python train.py --config image.yaml --print_config     # the full config, a starting point for new ones
tensorboard --logdir runs
"""

from inr.run.launch_env import refuse_bad_environment


def cli_main(args=None):
    """``inr.run.cli.cli_main``, the launcher's variables checked first: Lightning reads the rank when imported."""
    refuse_bad_environment()
    from inr.run.cli import cli_main as main

    return main(args)


if __name__ == "__main__":
    cli_main()
