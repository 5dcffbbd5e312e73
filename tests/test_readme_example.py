"""The README's "writing a new task" example runs as written and trains."""
import re
from pathlib import Path

import lightning as L

README = Path(__file__).resolve().parents[1] / "README.md"


def test_new_task_example_trains():
    section = README.read_text().split("## Writing a new task", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "README example", "exec"), namespace)
    from inr.encoders import GaussianEncoding

    model = namespace["L1Fitting"](encoder=GaussianEncoding(in_dim=2, num_features=16, sigma=2.0), out_channels=1)
    dm = namespace["HeightField"](split="every_other", batch_size=256, steps_per_epoch=10)
    trainer = L.Trainer(max_epochs=3, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(model, datamodule=dm)
    assert "val/mae" in trainer.callback_metrics
    untrained = namespace["L1Fitting"](encoder=GaussianEncoding(in_dim=2, num_features=16, sigma=2.0), out_channels=1)
    coords, values = dm.grid.coords(dm.test_index), dm.values[dm.test_index]
    untrained_mae = (untrained.predict(coords) - values).abs().mean().item()
    assert model.evaluate()["test/mae"] < 0.5 * untrained_mae
