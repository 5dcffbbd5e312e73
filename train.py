"""Train an implicit neural representation from a YAML config.

python train.py --config image.yaml                    # a bare name resolves to configs/
python train.py --config image.yaml --trainer.max_steps 200 --model.encoder.init_args.sigma 10
python train.py --config image.yaml --print_config     # the full config, a starting point for new ones
tensorboard --logdir runs
"""

from inr.run.cli import cli_main

if __name__ == "__main__":
    cli_main()
