"""A member of a stacked run exported as a single run: every command takes it and finds the member there."""

import numpy as np
import pytest
import torch
import yaml

from inr.errors import InputError
from inr.run.checkpoints import CheckpointError, read_checkpoint
from inr.run.cli import cli_main
from inr.run.export_member import export_member, main
from inr.run.model_loader import load_model

MEMBERS = """
model:
  init_args:
    member_seeds: [4, 5, 6]
    member_encoders:
      - {class_path: inr.encoders.GaussianEncoding, init_args: {num_features: 16, sigma: 2.0, seed: 0}}
      - {class_path: inr.encoders.GaussianEncoding, init_args: {num_features: 16, sigma: 5.0, seed: 1}}
      - {class_path: inr.encoders.GaussianEncoding, init_args: {num_features: 16, sigma: 9.0, seed: 2}}
"""


def run(args):
    try:
        return 0, cli_main(list(args))
    except SystemExit as exc:
        return exc.code, None


@pytest.fixture(scope="module")
def stacked_run(tmp_path_factory, tiny_run_args):
    """A 10-step run of three members (seeds 4, 5, 6; σ 2, 5, 9) on two images and the camera image twice."""
    root = tmp_path_factory.mktemp("members")
    (root / "members.yaml").write_text(MEMBERS)
    images = ["data/astronaut.png", "data/camera.png", "data/camera.png"]
    args = tiny_run_args(root, "--config", str(root / "members.yaml"), "--data.init_args.path", str(images).replace("'", '"'))
    code, cli = run(args)
    assert code == 0
    return {"root": root, "args": args, "ckpt": root / "image/version_0/checkpoints/last.ckpt", "model": cli.model}


@pytest.mark.slow
def test_an_exported_member_is_a_single_run_that_every_command_takes(stacked_run, tmp_path, capsys, tiny_run_args):
    out = tmp_path / "member1"
    written = export_member(stacked_run["ckpt"], 1, out)
    assert written == out / "checkpoints/last.ckpt" and sorted(p.name for p in out.iterdir()) == ["checkpoints", "config.yaml"]
    config = yaml.safe_load((out / "config.yaml").read_text())
    init = config["model"]["init_args"]
    assert not {"members", "member_seeds", "member_encoders"} & set(init)
    assert (
        init["encoder"]["init_args"] == {"in_dim": 2, "num_features": 16, "sigma": 5.0, "seed": 1}
        and config["seed_everything"] == 5
    )
    assert config["data"]["init_args"]["path"].endswith("camera.png")
    checkpoint = read_checkpoint(written)
    assert "members" not in checkpoint["hyper_parameters"] and checkpoint["global_step"] == 10

    # the loader of inr-mesh and notebooks: the same field as the stack's member 1
    single, stacked = load_model(written), load_model(stacked_run["ckpt"])
    assert single.members is None and stacked.members == 3
    torch.testing.assert_close(single.render((16, 16)), stacked.render((16, 16))[1], rtol=0, atol=1e-6)

    # validate: the held-out PSNR of member 1 in the stacked run's own validation
    code, validated = run(
        [
            "validate",
            "--config",
            str(out / "config.yaml"),
            "--ckpt_path",
            str(written),
            "--trainer.logger.init_args.save_dir",
            str(tmp_path),
        ]
    )
    assert code == 0
    code, stacked_validated = run(["validate", *stacked_run["args"], "--ckpt_path", str(stacked_run["ckpt"])])
    assert code == 0
    single_psnr = float(validated.trainer.callback_metrics["val/psnr"])
    assert float(stacked_validated.trainer.callback_metrics["val/psnr/m1"]) == pytest.approx(single_psnr, abs=1e-4)

    # predict: the exported run's field is the stacked run's member 1 rendered with --member 1
    code, _ = run(
        ["predict", "--config", str(out / "config.yaml"), "--ckpt_path", str(written), "--out", str(tmp_path / "p_single")]
    )
    assert code == 0
    code, _ = run(
        [
            "predict",
            *stacked_run["args"],
            "--ckpt_path",
            str(stacked_run["ckpt"]),
            "--member",
            "1",
            "--out",
            str(tmp_path / "p_stack"),
        ]
    )
    assert code == 0
    np.testing.assert_allclose(
        np.load(tmp_path / "p_single/field.npy"), np.load(tmp_path / "p_stack/field.npy"), atol=1e-6, rtol=0
    )


def test_an_exported_member_resumes_as_the_single_run_it_is(stacked_run, tmp_path):
    """Ten more steps from the export (Adam's moments sliced) against ten more steps of the stacked run."""
    out = tmp_path / "member2"
    export_member(stacked_run["ckpt"], 2, out)
    code, single = run(
        ["--config", str(out / "config.yaml"), "--ckpt_path", str(out / "checkpoints/last.ckpt"), "--trainer.max_steps", "20"]
    )
    assert code == 0 and single.trainer.global_step == 20
    code, stacked = run(
        [
            *stacked_run["args"],
            "--ckpt_path",
            str(stacked_run["ckpt"]),
            "--trainer.max_steps",
            "20",
            "--trainer.logger.init_args.version",
            "resumed",
        ]
    )
    assert code == 0
    member = stacked.model.member(2)
    for key, value in single.model.state_dict().items():
        torch.testing.assert_close(member.state_dict()[key], value, rtol=0, atol=1e-5)


def test_predict_of_a_stacked_run_needs_a_member_in_range(stacked_run, tmp_path, capsys):
    for extra, message in (
        ([], "error: predict: the model holds 3 members; choose one with --member k (0..2)"),
        (["--member", "3"], "error: --member 3: the model holds members 0..2"),
    ):
        code, _ = run(
            ["predict", *stacked_run["args"], "--ckpt_path", str(stacked_run["ckpt"]), "--out", str(tmp_path / "p"), *extra]
        )
        assert code == 2 and capsys.readouterr().err.strip().splitlines()[-1] == message
    assert not (tmp_path / "p").exists()


def test_export_refuses_what_it_cannot_export_in_one_line(stacked_run, tmp_path, tiny_run_args, capsys):
    code, _ = run(tiny_run_args(tmp_path / "single"))
    assert code == 0
    with pytest.raises(CheckpointError, match=r"not a checkpoint of a model with members"):
        export_member(tmp_path / "single/image/version_0/checkpoints/last.ckpt", 0, tmp_path / "x")
    with pytest.raises(InputError, match=r"--member 3: .* holds members 0..2"):
        export_member(stacked_run["ckpt"], 3, tmp_path / "x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full/file").write_text("")
    with pytest.raises(SystemExit) as exit_:
        main(["--ckpt", str(stacked_run["ckpt"]), "--member", "0", "--out", str(tmp_path / "full")])
    assert exit_.value.code == 2
    assert [ln for ln in capsys.readouterr().err.strip().splitlines() if ln.startswith("error:")] == [
        f"error: --out {tmp_path / 'full'}: exists and is not an empty directory"
    ]
    assert not (tmp_path / "x").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["full", "single"]
