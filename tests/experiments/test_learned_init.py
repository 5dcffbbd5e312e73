"""The learned-initialisation study: one command meta-trains the learned rows, fits each test signal from every init
and scores it after 0, 1, 2, 3, 5, 10, 30, 100, 300 and the full steps, with the fit's seconds to each; the tuned row
takes the best rate row at each budget; a learned row starts where its init's own evaluation
says (Meta-SGD's is there after its 2 inner steps too, the modulations row after its shifts' steps); CT rows at two angle counts are summarised apart; a rerun keeps the rows and the inits; the analysis
functions against closed forms (a stationary kernel's Fourier diagonal is its circulant spectrum)."""

import json
import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from inr.errors import InputError
from inr.experiments import comparison
from inr.experiments.comparison import Context, Member, parse
from inr.experiments.init_analysis import band_means, class_energy, fourier_diagonal, subgrid
from inr.experiments.learned_init import KINDS, LearnedInit, columns_of, main, meta_identity


def comparison_context(study, p, name):
    """The context the comparison's loop makes for ``name``'s row on the first test signal (its spec resolved)."""
    return comparison.context(study, p, name, Member(study.signals(p)[0], p.seeds[0]))


TINY = ["--resolution", "16", "--steps", "12", "--test-signals", "2", "--train-signals", "6", "--meta-steps", "4"]


@pytest.mark.slow
def test_one_command_meta_trains_fits_and_explains(tmp_path, capsys):
    out = tmp_path / "natural"
    rows = main(["--kind", "natural", *TINY, "--out", str(out)])
    learned = ["reptile"] * 2 + ["maml"] * 2 + ["metasgd"] * 2 + ["modulations"] * 2
    then_adam = [f"{n}+adam" for n in learned]
    rates = ["adam3e-3"] * 2 + ["adam1e-2"] * 2 + ["adam3e-2"] * 2
    assert [r["method"] for r in rows] == learned + then_adam + ["paper"] * 2 + ["torch"] * 2 + rates + ["bicubic"] * 2
    model_rows = [r for r in rows if r["kind"] == "model"]
    assert all({"psnr_0", "psnr_1", "psnr_2", "psnr_3", "psnr_5", "psnr_10", "psnr"} <= set(r) for r in model_rows)
    assert all("psnr_30" not in r for r in model_rows)  # beyond the 12 steps of this run
    # the fit's clock, scoring left out: it runs forward from step 0 to the end
    for r in model_rows:
        clock = [r[f"seconds_{m}"] for m in (0, 1, 2, 3, 5, 10)] + [r["seconds_full"]]
        assert clock == sorted(clock) and 0 <= clock[0] < clock[-1] <= r["seconds"]
    # the rate rows differ from the paper's row in their rate alone: the same start
    paper = [r["psnr_0"] for r in model_rows if r["method"] == "paper"]
    assert all([r["psnr_0"] for r in model_rows if r["method"] == name] == paper for name in ("adam3e-3", "adam3e-2"))
    results = json.loads((out / "results.json").read_text())
    assert results["protocol"]["kind"] == "natural" and results["protocol"]["reptile"]["inner_steps"] == 2
    # a learned row starts at its init's field: the init's own evaluation after 0 inner steps, over the same signals
    # Meta-SGD's row takes its first 2 steps at its learned rates, as its evaluation's inner loop: the same after 1 and 2
    # and the modulations row its first 3 on the hidden biases alone, as its evaluation's inner loop on the shifts
    for name, marks in (("reptile", (0,)), ("maml", (0,)), ("metasgd", (0, 1, 2)), ("modulations", (0, 1, 2))):
        record = json.loads((out / "meta" / f"{name}.json").read_text())
        for mark in marks:
            mean = sum(r[f"psnr_{mark}"] for r in rows if r["method"] == name) / 2
            assert mean == pytest.approx(record["scores"][f"test/psnr@{mark}"], abs=1e-3)
    # a +adam row starts where its init's row starts and takes the same first steps, its inner loop (Reptile's and
    # MAML's 2 SGD steps at their inner rate, Meta-SGD's 2 at its learned rates, the modulations' 3 on the biases);
    # then Adam at the paper row's rate, where the learned row goes on with SGD
    by = {(r["method"], r["signal"]): r for r in model_rows}
    for k in {r["signal"] for r in model_rows}:
        for name, same in (("reptile", (0, 1, 2)), ("maml", (0, 1, 2)), ("metasgd", (0, 1, 2)), ("modulations", (0, 1, 2, 3))):
            assert all(by[f"{name}+adam", k][f"psnr_{m}"] == by[name, k][f"psnr_{m}"] for m in same)
            after = 5 if name == "modulations" else 3
            assert by[f"{name}+adam", k][f"psnr_{after}"] != by[name, k][f"psnr_{after}"]
    why = json.loads((out / "why.json").read_text())
    assert set(why["ntk"]) == {"reptile", "maml", "metasgd", "modulations", "paper", "torch"} and why["ntk_grid"] == "16×16"
    assert len(why["ntk"]["paper"]["band_means"]) == len(why["class_power"]) == 8
    assert set(why["bands"]["reptile"]) == {0, 2} or set(why["bands"]["reptile"]) == {"0", "2"}
    assert all((out / name).stat().st_size > 0 for name in ("bands.png", "ntk.png", "outer_loop.png"))
    text = (out / "results.md").read_text()
    assert "| row | PSNR @0 | PSNR @1 | PSNR @2 | PSNR @3 |" in text and "the tuned standard init's full-run psnr" in text
    # the tuned row: at each budget the rate row with the best mean, its per-signal values (results.json's summary)
    results = json.loads((out / "results.json").read_text())
    summary = {s["method"]: s for s in results["summary"]}
    for key in ("psnr_2", "psnr_10", "psnr"):
        best = max(("paper", "adam3e-3", "adam1e-2", "adam3e-2"), key=lambda n: summary[n][key])
        assert summary["tuned"][key] == pytest.approx(summary[best][key], abs=1e-9)
    assert "row − the tuned standard init" in text and "tuned, the rate row at each budget: @0 " in text
    # the curves: a learned row's seconds carry its meta-training shared over --amortised-over signals (default 100)
    curves = json.loads((out / "curves.json").read_text())["all"]
    maml = curves["rows"]["maml"]
    record = json.loads((out / "meta" / "maml.json").read_text())
    assert curves["amortised_over"] == 100 and maml["meta_seconds"] == pytest.approx(record["seconds"])
    assert maml["seconds"][-1] == pytest.approx(maml["fit_seconds"][-1] + record["seconds"] / 100)
    assert maml["steps"] == [0, 1, 2, 3, 5, 10, 12] and curves["rows"]["paper"]["meta_seconds"] == 0.0
    assert (out / "curves.png").read_bytes()[:4] == b"\x89PNG"

    capsys.readouterr()
    again = main(["--kind", "natural", *TINY, "--out", str(out)])
    err = capsys.readouterr().err
    assert "kept from the earlier run" in err and "reptile: the learned init in" in err
    assert [r["psnr"] for r in again] == [r["psnr"] for r in rows]
    # the time estimate counts no meta-training for the inits --out keeps
    assert main(["--kind", "natural", *TINY, "--out", str(out), "--estimate-only"]) == []
    err = capsys.readouterr().err
    assert "expected time: about" in err and "before the rows" not in err


def test_the_estimate_counts_each_learned_inits_meta_training_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "natural"
    argv = ["--kind", "natural", *TINY, "--methods", "reptile,maml,paper", "--out", str(out), "--estimate-only"]
    assert main(argv) == []
    err = capsys.readouterr().err
    assert "before the rows: about" in err
    assert "reptile's meta-training (4 outer steps)" in err and "maml's meta-training (2 outer steps)" in err
    assert "metasgd" not in err and not out.exists()


@pytest.mark.slow
def test_ct_rows_at_each_angle_count_are_summarised_apart(tmp_path, capsys):
    out = tmp_path / "ct"
    main(["--kind", "ct", *TINY, "--angles", "6", "--few-angles", "4,3", "--methods", "reptile,paper", "--out", str(out)])
    results = json.loads((out / "results.json").read_text())
    assert results["protocol"]["few_angles"] == [4, 3]
    summary = [(s["method"], s["angles"], s["n"]) for s in results["summary"]]
    assert summary[:2] == [("reptile", 6.0, 2), ("paper", 6.0, 2)]
    for angles in (4.0, 3.0):
        assert ("reptile", angles, 2) in summary and ("filtered back-projection", angles, 2) in summary
    text = (out / "results.md").read_text()
    assert "| row | angles | PSNR @0 |" in text
    assert set(json.loads((out / "curves.json").read_text())) == {"6", "4", "3"}
    # a rerun keeps the init: its record states the angle counts as JSON reads them back
    capsys.readouterr()
    main(["--kind", "ct", *TINY, "--angles", "6", "--few-angles", "4,3", "--methods", "reptile,paper", "--out", str(out)])
    assert "reptile: the learned init in" in capsys.readouterr().err
    # the rule's verdicts at each angle count apart: the learned init against the paper's, after 2 steps and at the end
    for angles in (6, 4, 3):
        assert (
            f"Paired differences of PSNR @2 at {angles} angles" in text
            and f"Paired differences of PSNR full at {angles} angles" in text
        )
    assert "- reptile − paper: " in text and " pairs from 2 signals" in text


@pytest.mark.slow
def test_inpainting_fits_each_test_crop_through_its_mask_from_the_natural_inits(tmp_path, capsys):
    from scipy.interpolate import griddata

    out = tmp_path / "inpaint"
    argv = ["--kind", "natural", *TINY, "--methods", "reptile,paper", "--keep", "0.25", "--out", str(out)]
    rows = main(argv)
    assert [r["method"] for r in rows] == ["reptile"] * 2 + ["paper"] * 2 + ["cubic"] * 2
    results = json.loads((out / "results.json").read_text())
    assert results["protocol"]["keep"] == 0.25
    text = (out / "results.md").read_text()
    assert "inpainting from 25% of the pixels" in text and "after 2 steps" in text and "target +8 dB" not in text
    # the cubic row against scipy's Clough–Tocher over the same mask, scored on the unobserved pixels in numpy
    study = LearnedInit()
    p = study.protocol(parse(study, argv))
    for k, row in enumerate(r for r in rows if r["method"] == "cubic"):
        data = study.signal_set(p).signal_data(k, keep=0.25)
        data.setup("fit")
        mask = data.operator.mask.numpy()
        truth = study.signal_set(p).signal_values(k, "test").double().numpy()  # (16, 16, 3)
        grid = tuple(np.meshgrid(np.arange(16), np.arange(16), indexing="ij"))
        filled = []
        for c in range(3):
            cubic = griddata(np.argwhere(mask), truth[..., c][mask], grid, method="cubic")
            nearest = griddata(np.argwhere(mask), truth[..., c][mask], grid, method="nearest")
            filled.append(np.clip(np.where(np.isnan(cubic), nearest, cubic), 0, 1))
        error = (np.stack(filled, -1) - truth)[~mask]
        assert row["psnr"] == pytest.approx(10 * math.log10(1 / np.mean(error**2)), abs=1e-4)  # float32 baseline
    # the networks: the unobserved pixels' PSNR, the whole image's beside it
    for r in rows[:4]:
        assert math.isfinite(r["psnr"]) and math.isfinite(r["full_psnr"]) and r["psnr"] != r["full_psnr"]
    # the init was meta-trained on the crops as they are (ImageFitting): a study without --keep keeps it
    record = json.loads((out / "meta" / "reptile.json").read_text())
    assert "keep" not in record["settings"]["data"]
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "meta").mkdir()
    for name in ("reptile.ckpt", "reptile.json"):
        (plain / "meta" / name).write_bytes((out / "meta" / name).read_bytes())
    capsys.readouterr()
    main(["--kind", "natural", *TINY, "--methods", "reptile", "--out", str(plain)])
    assert "reptile: the learned init in" in capsys.readouterr().err


def test_a_run_of_one_rate_row_alone_finishes_without_an_ntk_figure(tmp_path):
    """A rate row added on its own (``--methods adam3e-4``, to join a run later) has no init whose NTK is drawn: the
    run still writes its tables, and no empty figure."""
    out = tmp_path / "rate"
    rows = main(["--kind", "natural", *TINY, "--methods", "adam3e-4", "--out", str(out)])
    assert [r["method"] for r in rows] == ["adam3e-4"] * 2 + ["bicubic"] * 2
    assert (out / "results.md").is_file() and (out / "paired.json").is_file() and not (out / "ntk.png").exists()


def test_an_inpainting_score_is_the_unobserved_pixels():
    study = LearnedInit()
    p = study.protocol(parse(study, ["--kind", "natural", *TINY, "--keep", "0.5"]))
    data = study.signal_set(p).signal_data(0, keep=0.5)
    data.setup("fit")
    truth = data.values_grid()  # (3, 16, 16)
    right_where_unseen = torch.where(data.operator.mask, torch.zeros_like(truth), truth)
    scores = study.score(Context(p, Member(0, 0), data=data), right_where_unseen)
    assert scores["psnr"] == math.inf and math.isfinite(scores["full_psnr"])


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--inner-steps", "0"], "--inner-steps must be an int ≥ 1"),
        (["--meta-steps", "0"], "--meta-steps must be an int ≥ 1"),
        (["--few-angles", "0"], "--few-angles must be an int ≥ 1"),
        (["--few-angles", "10,x"], "--few-angles must be an int ≥ 1, got x"),
        (["--test-signals", "0"], "--test-signals must be an int ≥ 1"),
        (["--paper"], "--paper: learned_init runs at 64²"),
        (["--kind", "ct", "--keep", "0.1"], "--keep: inpainting is studied on images"),
        (["--keep", "1"], "--keep must be a fraction in"),
        (
            ["--kind", "ct", "--methods", "warp"],
            "--methods: unknown warp; choose from reptile, maml, metasgd, modulations, reptile\\+adam, maml\\+adam, metasgd\\+adam, modulations\\+adam, paper",
        ),
    ],
)
def test_bad_flags_are_refused_in_one_line(extra, message):
    study = LearnedInit()
    with pytest.raises(InputError, match=message):
        study.protocol(parse(study, extra))


@pytest.mark.slow
def test_the_modulations_row_meta_trains_and_fits_through_ct_projections(tmp_path):
    """Shift modulations on a class other than images: the init adapts the hidden shifts alone (its checkpoint says
    so), is meta-trained through the projections, and its rows fit at each angle count and improve on its start."""
    from inr.tasks.init_from import inner_adapts

    out = tmp_path / "ct"
    rows = main(
        [
            "--kind",
            "ct",
            *TINY,
            "--angles",
            "6",
            "--few-angles",
            "3",
            "--methods",
            "modulations,modulations+adam",
            "--out",
            str(out),
        ]
    )
    assert inner_adapts(out / "meta" / "modulations.ckpt") == "modulations"
    record = json.loads((out / "meta" / "modulations.json").read_text())
    assert record["settings"]["adapt"] == "modulations" and record["settings"]["data"]["kind"] == "ct"
    fitted = [r for r in rows if r["kind"] == "model"]
    assert sorted({(r["method"], r["angles"]) for r in fitted}) == [
        ("modulations", 3),
        ("modulations", 6),
        ("modulations+adam", 3),
        ("modulations+adam", 6),
    ]
    assert all(math.isfinite(r["psnr"]) and r["psnr"] > r["psnr_0"] for r in fitted)


def test_the_modulations_row_is_every_kinds_and_in_the_protocol_when_it_runs():
    study = LearnedInit()
    p = study.protocol(parse(study, ["--kind", "natural", "--meta-steps", "8", "--inner-steps", "2"]))
    assert p.modulations is not None and p.modulations.algorithm == "metasgd"
    assert (p.modulations.steps, p.modulations.inner_steps) == (4, 2)  # half the outer steps, as MAML's and Meta-SGD's
    assert study.record(p)["modulations"]["inner_lr"] == 1.0
    without = study.protocol(parse(study, ["--kind", "natural", "--methods", "reptile,paper"]))
    assert without.modulations is None and "modulations" not in study.record(without)  # earlier --out stay readable
    for kind, steps in (("ct", 60), ("text", 1000), ("shape", 300)):  # MAML's outer steps for the class, 3 inner steps
        p = study.protocol(parse(study, ["--kind", kind, "--methods", "modulations+adam"]))
        assert (p.modulations.algorithm, p.modulations.steps, p.modulations.inner_steps) == ("metasgd", steps, 3)
        assert "modulations" in study.available(parse(study, ["--kind", kind]))


def test_the_rates_below_the_protocols_run_only_when_named():
    study = LearnedInit()
    default = comparison.chosen_methods(study, parse(study, ["--kind", "natural"]))
    assert "adam3e-3" in default and "adam3e-4" not in default and "adam1e-4" not in default
    named = comparison.chosen_methods(study, parse(study, ["--kind", "ct", "--methods", "paper,adam3e-4,adam1e-4"]))
    assert named == ["paper", "adam3e-4", "adam1e-4"]
    p = study.protocol(parse(study, ["--kind", "natural", "--methods", "paper,adam1e-4"]))
    spec = comparison_context(study, p, "adam1e-4").spec
    assert spec.optimizer.init_args["lr"] == 1e-4 and "paper init, Adam 0.0001" in spec.describe


def test_the_same_directory_for_train_and_test_is_refused(tmp_path, capsys):
    (tmp_path / "images").mkdir()
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "--kind",
                "text",
                "--train",
                str(tmp_path / "images"),
                "--test",
                str(tmp_path / "images"),
                "--out",
                str(tmp_path / "o"),
            ]
        )
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "train and test signals must be disjoint" in err[0]
    assert not (tmp_path / "o").exists()


def test_each_kind_has_its_columns():
    keys = [c.key for c in columns_of("shape")]
    assert keys == ["method", "iou_0", "iou_1", "iou_2", "iou_3", "iou_5", "iou_10", "iou_30", "iou_100", "iou", "seconds"]
    assert [c.key for c in columns_of("ct")][:2] == ["method", "angles"]
    assert set(KINDS) == {"natural", "text", "ct", "shape"}


def test_the_fourier_diagonal_of_a_stationary_kernel_is_its_spectrum():
    # a periodic Gaussian kernel on an 8 × 6 torus: circulant in each axis, diagonalised by the 2-D DFT
    shape = (8, 6)
    points = torch.stack(torch.meshgrid(torch.arange(8.0), torch.arange(6.0), indexing="ij"), -1).reshape(-1, 2)
    delta = points[:, None] - points[None]
    wrapped = torch.minimum(delta.abs(), torch.tensor(shape, dtype=torch.float32) - delta.abs())
    kernel = torch.exp(-(wrapped**2).sum(-1) / 4.0).double()
    expected = torch.fft.fftn(kernel[0].reshape(shape)).real  # the 2-D circulant spectrum of its first row
    assert torch.allclose(fourier_diagonal(kernel, shape), expected, atol=1e-10)


def test_band_means_and_the_class_power():
    means, edges = band_means(torch.ones(16, 16), (16, 16), 4)  # bands of 2 cycles: DC apart, every band has bins
    assert torch.allclose(means, torch.ones(4, dtype=torch.float64)) and edges.tolist() == [0, 2, 4, 6, 8]
    signals = torch.zeros(2, 1, 16, 16)
    signals[:, 0] = torch.cos(2 * math.pi * 2 * torch.arange(16) / 16)[None, :]  # 2 cycles along x: |k| = 2, band 1
    power, edges = class_energy(signals, 4)
    assert int(torch.argmax(power)) == 1 and edges[1] <= 2 < edges[2]


@pytest.mark.parametrize("shape", [(12,), (8, 6), (6, 4, 5)])
def test_the_class_power_transforms_each_channel_over_its_spatial_axes_alone(shape):
    """Against numpy.fft, float64, for 1 to 3 spatial axes and 3 channels: the mean of |c_k|² over signals and
    channels (the channel axis is not transformed, which would divide the power of 3 channels by 3)."""
    signals = torch.randn(4, 3, *shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    x = signals.numpy()
    axes = tuple(range(2, x.ndim))
    power = (np.abs(np.fft.fftn(x, axes=axes) / np.prod(shape)) ** 2).mean(axis=(0, 1))
    expected, _ = band_means(torch.from_numpy(power), shape, 3)
    got, _ = class_energy(signals, 3)
    assert torch.allclose(got, expected, rtol=1e-12, atol=0, equal_nan=True)  # NaN: a band with no bin


def test_the_ntk_subgrid_keeps_the_grids_coordinates():
    coords, shape = subgrid((64, 64), 1024)
    assert shape == (32, 32) and coords.shape == (1024, 2)
    assert torch.equal(coords[1], torch.tensor([0.0, 2 / 64]))
    coords, shape = subgrid((16, 16, 16), 600)
    assert shape == (8, 8, 8)


def test_a_then_adam_row_fits_its_learned_init_with_the_protocols_optimiser():
    study = LearnedInit()
    args = parse(study, ["--kind", "ct", *TINY, "--methods", "metasgd+adam,paper"])
    p = study.protocol(args)
    assert "metasgd+adam" in study.available(args) and "modulations+adam" in study.available(args)
    assert p.metasgd.algorithm == "metasgd"  # its init's settings are in the protocol, as that row's
    ctx = comparison_context(study, p, "metasgd+adam")
    paper = comparison_context(study, p, "paper")
    assert ctx.spec.optimizer == paper.spec.optimizer and ctx.spec.scheduler == paper.spec.scheduler
    assert "metasgd init, its 2 inner steps at its learned rates, then Adam" in ctx.spec.describe
    assert not study.model(ctx).init_inner_loop  # its init holds its rates: it takes them by itself
    reptile = comparison_context(study, p, "reptile+adam")
    assert study.model(reptile).init_inner_loop  # the inner loop its checkpoint records, then Adam
    assert not study.model(comparison_context(study, p, "reptile")).init_inner_loop
    assert f"reptile init, its 2 inner steps at SGD {p.reptile.inner_lr:g}, then Adam" in reptile.spec.describe
    p = replace(p, meta_paths=(("metasgd", "METASGD.ckpt"),))  # as prepare sets it: the row starts from that init
    assert study.model(comparison_context(study, p, "metasgd+adam")).init_from == "METASGD.ckpt"


@pytest.mark.slow
def test_a_run_of_a_then_adam_row_alone_charts_its_learned_inits_kernel(tmp_path):
    # the +adam row starts from its learned row's θ: the kernel figure shows that init under the learned row's name
    out = tmp_path / "natural"
    main(["--kind", "natural", *TINY, "--methods", "reptile+adam", "--out", str(out)])
    why = json.loads((out / "why.json").read_text())
    assert list(why["ntk"]) == ["reptile"] and len(why["ntk"]["reptile"]["eigenvalues"]) > 1
    assert (out / "ntk.png").stat().st_size > 0 and "reptile+adam" in json.loads((out / "curves.json").read_text())["all"]["rows"]


def test_an_adam_warm_up_ramps_the_then_adam_rows_rate_and_leaves_the_inits_alone():
    study = LearnedInit()
    plain = study.protocol(parse(study, ["--kind", "natural", *TINY, "--methods", "metasgd+adam,paper"]))
    p = study.protocol(parse(study, ["--kind", "natural", *TINY, "--methods", "metasgd+adam,paper", "--adam-warmup", "4"]))
    assert study.record(p)["adam_warmup"] == 4 and "adam_warmup" not in study.record(plain)
    # the inits are made from the training signals: a warm-up of the fits after them reuses them
    assert meta_identity(study, p, p.metasgd, "metasgd") == meta_identity(study, plain, plain.metasgd, "metasgd")
    assert comparison_context(study, p, "paper").spec.scheduler is None
    ctx = comparison_context(study, p, "metasgd+adam")
    assert ctx.spec.describe.endswith("then Adam 0.001, warmed up over 4 steps")
    model = study.model(ctx)
    configured = model.configure_optimizers()
    optimiser, schedule = configured["optimizer"], configured["lr_scheduler"]["scheduler"]
    rates = []
    for _ in range(6):
        rates.append(optimiser.param_groups[0]["lr"])
        optimiser.step()
        schedule.step()
    # lr_t = lr·(1/W + (1 − 1/W)·min(t, W)/W), W = 4
    assert rates == pytest.approx([0.001 * (0.25 + 0.75 * min(t, 4) / 4) for t in range(6)], rel=1e-12)
    assert rates[0] == pytest.approx(0.00025) and rates[4:] == pytest.approx([0.001, 0.001])
    with pytest.raises(InputError, match="--adam-warmup must be an int ≥ 1, got 0"):
        study.protocol(parse(study, ["--kind", "natural", *TINY, "--adam-warmup", "0"]))


@pytest.mark.slow
def test_the_warm_up_acts_after_the_inner_steps_alone(tmp_path):
    # Reptile's 2 inner SGD steps come first either way; Adam's warmed-up steps after them
    argv = ["--kind", "natural", *TINY, "--methods", "reptile+adam"]
    plain = {r["signal"]: r for r in main([*argv, "--out", str(tmp_path / "plain")]) if r["kind"] == "model"}
    warm = {r["signal"]: r for r in main([*argv, "--adam-warmup", "5", "--out", str(tmp_path / "warm")]) if r["kind"] == "model"}
    for signal, row in warm.items():
        assert [row[f"psnr_{m}"] for m in (0, 1, 2)] == [plain[signal][f"psnr_{m}"] for m in (0, 1, 2)]
        assert row["psnr_3"] != plain[signal]["psnr_3"] and row["psnr"] != plain[signal]["psnr"]
