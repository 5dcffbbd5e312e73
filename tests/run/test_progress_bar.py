"""The progress bar: the CLI's default is one that redraws at most every 0.1 s; a config's own bar or
``enable_progress_bar: false`` is respected; the redraw follows the clock, and the epoch's last batch is drawn."""

import lightning as L
import pytest
import torch
from lightning.pytorch.callbacks import ProgressBar as LightningProgressBar
from lightning.pytorch.callbacks import TQDMProgressBar

from inr.run.cli import build_cli, resolve_config_names
from inr.run.progress import ProgressBar

TINY = ["--config", "image.yaml", "--data.init_args.resolution", "16", "--trainer.max_steps", "1"]


def bars(trainer: L.Trainer) -> list:
    return [c for c in trainer.callbacks if isinstance(c, LightningProgressBar)]


def test_the_cli_installs_the_throttled_bar_by_default(tmp_path):
    cli = build_cli(resolve_config_names([*TINY, "--trainer.logger.init_args.save_dir", str(tmp_path)]))
    (bar,) = bars(cli.trainer)
    assert type(bar) is ProgressBar and bar.min_interval == 0.1


@pytest.mark.slow
def test_a_bar_turned_off_or_named_in_the_config_is_kept(tmp_path):
    save = ["--trainer.logger.init_args.save_dir", str(tmp_path)]
    off = build_cli(resolve_config_names([*TINY, *save, "--trainer.enable_progress_bar", "false"]))
    assert bars(off.trainer) == []
    own = ["--trainer.callbacks+=lightning.pytorch.callbacks.TQDMProgressBar", "--trainer.callbacks.refresh_rate=5"]
    named = build_cli(resolve_config_names([*TINY, *save, *own]))
    (bar,) = bars(named.trainer)
    assert type(bar) is TQDMProgressBar and bar.refresh_rate == 5


class Tiny(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        return self.layer(batch).square().mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.0)


@pytest.mark.parametrize(
    ("min_interval", "limits", "draws", "last"),
    [
        (0.0, {"max_epochs": 1}, 12, 11),
        (1e9, {"max_epochs": 1}, 2, 11),
    ],
)
def test_redraws_follow_the_clock_and_end_on_the_last_batch(
    tmp_path, monkeypatch, quiet_trainer, min_interval, limits, draws, last
):
    """12 batches an epoch: every batch is drawn when no time must pass; with an interval no run reaches,
    only each epoch's first batch (nothing drawn yet) and its last."""
    drawn = []
    original = TQDMProgressBar.on_train_batch_end

    def record(self, trainer, pl_module, outputs, batch, batch_idx):
        drawn.append(batch_idx)
        original(self, trainer, pl_module, outputs, batch, batch_idx)

    monkeypatch.setattr(TQDMProgressBar, "on_train_batch_end", record)
    bar = ProgressBar(min_interval=min_interval)
    trainer = quiet_trainer(**limits, callbacks=[bar], default_root_dir=tmp_path, enable_progress_bar=True)
    trainer.fit(Tiny(), torch.utils.data.DataLoader(torch.rand(12, 2), batch_size=1))
    assert len(drawn) == draws and drawn[-1] == last
    assert bar.train_progress_bar.n == last + 1  # the bar ends at its total


def test_a_max_steps_run_counts_the_runs_steps_and_a_resume_starts_at_its_step(tmp_path, quiet_trainer):
    """30 steps over epochs of 12 batches: one bar of 30 steps, not three bars of an epoch's batches; a run
    resumed at step 12 starts its bar there."""
    data = torch.utils.data.DataLoader(torch.rand(12, 2), batch_size=1)
    common = dict(default_root_dir=tmp_path, max_epochs=-1, enable_progress_bar=True, enable_checkpointing=True)
    bar = ProgressBar(min_interval=0.0)
    first = quiet_trainer(12, callbacks=[bar], **common)
    first.fit(Tiny(), data)
    assert (bar.train_progress_bar.total, bar.train_progress_bar.n) == (12, 12)
    first.save_checkpoint(tmp_path / "step12.ckpt")
    bar = ProgressBar(min_interval=1e9)  # only the last step is drawn
    quiet_trainer(30, callbacks=[bar], **common).fit(Tiny(), data, ckpt_path=tmp_path / "step12.ckpt")
    tqdm = bar.train_progress_bar
    assert (tqdm.total, tqdm.initial, tqdm.n) == (30, 12, 30)
    assert tqdm.desc.startswith("step (epoch ")
