"""docs/extending.md's "writing a new task" example runs as written and trains."""

import re
from pathlib import Path

EXTENDING = Path(__file__).resolve().parents[1] / "docs" / "extending.md"


def test_new_task_example_trains(quiet_trainer):
    section = EXTENDING.read_text().split("## Writing a new task", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "docs example", "exec"), namespace)
    from inr.encoders import GaussianEncoding

    model = namespace["L1Fitting"](encoder=GaussianEncoding(in_dim=2, num_features=16, sigma=2.0), out_channels=1)
    dm = namespace["HeightField"](split="every_other", batch_size=256, steps_per_epoch=10)
    trainer = quiet_trainer(max_epochs=3, limit_val_batches=1.0, num_sanity_val_steps=2)  # validation as Lightning's default
    trainer.fit(model, datamodule=dm)
    assert "val/mae" in trainer.callback_metrics
    untrained = namespace["L1Fitting"](encoder=GaussianEncoding(in_dim=2, num_features=16, sigma=2.0), out_channels=1)
    coords, values = dm.grid.coords(dm.test_index), dm.values[dm.test_index]
    untrained_mae = (untrained.predict(coords) - values).abs().mean().item()
    assert model.evaluate()["test/mae"] < 0.5 * untrained_mae


def test_inverse_example_operator_is_linear_with_its_adjoint_and_trains(quiet_trainer):
    """The operator example of docs/extending.md: ⟨Ax, y⟩ = ⟨x, Aᵀy⟩ (float64) and an InverseFitting run through it."""
    from functools import partial

    import torch

    from inr.data import SimulatedMeasurementDataModule
    from inr.encoders import GaussianEncoding
    from inr.networks import MLP
    from inr.operators import real_inner
    from inr.tasks import InverseFitting

    section = EXTENDING.read_text().split("## Writing a new task", 1)[1]
    code = re.findall(r"```python\n(.*?)```", section, re.S)[1]
    namespace: dict = {}
    exec(compile(code, "docs operator example", "exec"), namespace)
    op = namespace["BoxBlur"]((16, 16), k=3).double()
    x, y = torch.randn(2, 16, 16, dtype=torch.float64), torch.randn(2, 16, 16, dtype=torch.float64)
    torch.testing.assert_close(real_inner(op(x), y), real_inner(x, op.adjoint(y)))
    dm = SimulatedMeasurementDataModule(operator=namespace["BoxBlur"]((16, 16), k=3), resolution=16)
    torch.manual_seed(0)
    model = InverseFitting(
        encoder=GaussianEncoding(in_dim=2, num_features=16, sigma=2.0),
        out_channels=3,
        network=partial(MLP, width=32, depth=2, output_activation="sigmoid"),
        optimizer=partial(torch.optim.Adam, lr=1e-2),
    )
    residuals = []
    for steps in (1, 60):
        trainer = quiet_trainer(steps)
        trainer.fit(model, datamodule=dm)
        residuals.append(model.evaluate()["train/residual"])
    assert residuals[1] < 0.6 * residuals[0]


def test_subclass_example_takes_its_argument_and_every_inherited_one():
    """The ``**kwargs`` example of docs/extending.md: the config parser offers the subclass's argument and the parents'."""
    from jsonargparse import ArgumentParser

    section = EXTENDING.read_text().split("## Writing a new task", 1)[1]
    code = re.findall(r"```python\n(.*?)```", section, re.S)[2]
    namespace: dict = {}
    exec(compile(code, "README subclass example", "exec"), namespace)
    parser = ArgumentParser(exit_on_error=False)
    parser.add_class_arguments(namespace["NoisyImage"], "data")
    config = parser.parse_args(["--data.noise", "0.1", "--data.resolution", "16", "--data.batch_size", "32"])
    data = parser.instantiate(config).data
    assert (data.noise, data.resolution, data.batch_size, data.split) == (0.1, 16, 32, "every_other")
