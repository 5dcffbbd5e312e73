"""python -m inr.callbacks.ntk_figure on a tiny real NTKCallback run: the PNG is written and the figure shows the
logged numbers; a directory without an event file, or a run without the callback, is one error line, exit 2."""

from functools import partial

import imageio.v3 as iio
import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from inr.callbacks import NTKCallback
from inr.callbacks.ntk_figure import decode_png, main, ntk_figure
from inr.data import ImageDataModule
from inr.encoders import GaussianEncoding
from inr.networks import MLP
from inr.tasks import ImageFitting


def tiny_run(tmp_path, tiny_trainer, callbacks, name="run"):
    torch.manual_seed(0)
    model = ImageFitting(
        encoder=GaussianEncoding(in_dim=2, num_features=8, sigma=3.0, seed=0),
        network=partial(MLP, width=16, depth=1),
        optimizer=partial(torch.optim.Adam, lr=1e-2),
    )
    dm = ImageDataModule(resolution=16, split="every_other", steps_per_epoch=2)
    trainer = tiny_trainer(tmp_path, callbacks, max_epochs=3, name=name)
    trainer.fit(model, datamodule=dm)
    return trainer.log_dir


def test_the_command_draws_the_logged_numbers(tmp_path, tiny_trainer, capsys):
    run_dir = tiny_run(
        tmp_path, tiny_trainer, [NTKCallback(every_n_epochs=1, num_probes=16, num_eigenvalues=3, slice_resolution=8)]
    )
    out = tmp_path / "figures" / "ntk.png"
    main([run_dir, "-o", str(out)])
    assert capsys.readouterr().out.strip() == str(out)
    assert iio.imread(out).ndim == 3 and not list(out.parent.glob(".*.tmp"))

    acc = EventAccumulator(run_dir, size_guidance={"scalars": 0, "images": 0})
    acc.Reload()
    fig = ntk_figure(run_dir, slices=2)
    *slices, drift_ax, eig_ax = fig.axes
    images = {e.step: decode_png(e.encoded_image_string) for e in acc.Images("ntk/kernel_slice")}
    assert sorted(images) == [0, 2, 4, 6]  # at the start and after each of the 3 epochs of 2 steps
    assert [ax.get_title() for ax in slices] == ["Θ(x_c, v), step 0", "Θ(x_c, v), step 6"]  # the first and the last
    for ax, step in zip(slices, (0, 6)):
        shown = np.asarray(ax.images[0].get_array())
        assert shown.shape == (8, 8) and np.array_equal(shown, images[step])  # gray: one of TensorBoard's 3 channels
    (line,) = drift_ax.lines
    drift = [(e.step, e.value) for e in acc.Scalars("ntk/drift")]
    assert list(zip(line.get_xdata(), line.get_ydata())) == drift
    assert len(eig_ax.lines) == 3 and eig_ax.get_yscale() == "log"
    for i, line in enumerate(eig_ax.lines):
        assert list(zip(line.get_xdata(), line.get_ydata())) == [(e.step, e.value) for e in acc.Scalars(f"ntk/eigenvalue_{i}")]
    assert [t.get_text() for t in eig_ax.get_legend().get_texts()] == ["λ_0", "λ_2"]


@pytest.mark.parametrize("case", ["empty", "parent", "no_callback"])
def test_a_run_without_ntk_events_is_refused(case, tmp_path, tiny_trainer, capsys):
    if case == "empty":
        run_dir, says = str(tmp_path), "no TensorBoard event file"
    elif case == "parent":  # the logger's save_dir instead of the run's own folder: the message names the runs
        tiny_run(tmp_path, tiny_trainer, [], name="image")
        run_dir, says = str(tmp_path / "image"), "runs below it: version_0"
    else:
        run_dir, says = tiny_run(tmp_path, tiny_trainer, []), "no ntk/drift in its event file"
    out = tmp_path / "ntk.png"
    with pytest.raises(SystemExit) as exc:
        main([run_dir, "-o", str(out)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("python -m inr.callbacks.ntk_figure: error: ") and says in err
    assert not out.exists()
