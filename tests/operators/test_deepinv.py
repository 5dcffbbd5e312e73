"""DeepinvOperator: deepinv's physics as Operators — exact adjoints, agreement with this package's CT and MRI
operators once the conventions are mapped, seeded noise models, config errors, and a CT fit through train.py."""

import math
import re
import sys

import pytest
import torch
from deepinv.physics import MRI, Blur, Decolorize, Downsampling, GaussianNoise, Inpainting, Tomography
from deepinv.physics.blur import gaussian_blur

from inr.operators import DeepinvOperator, KSpaceSampling, ParallelBeamProjection, even_angles, gaussian_kspace_mask, real_inner
from inr.operators.base import Operator
from inr.operators.deepinv_physics import build_physics
from inr.run.cli import cli_main

F64 = torch.float64


def _physics():
    mask2 = gaussian_kspace_mask((12, 10), samples=60, seed=1).to(F64)
    mask3 = gaussian_kspace_mask((6, 8, 7), samples=100, seed=2).to(F64)
    keep = (torch.rand(3, 9, 11, generator=torch.Generator().manual_seed(3)) < 0.5).to(F64)
    return [
        ("tomography", Tomography(angles=7, img_width=16, normalize=False, dtype=F64), (1, 16, 16)),
        ("tomography-2-channels", Tomography(angles=5, img_width=12, normalize=False, dtype=F64), (2, 12, 12)),
        ("mri-2d", MRI(mask=mask2, img_size=(12, 10)), (1, 12, 10)),
        ("mri-3d", MRI(mask=mask3, img_size=(6, 8, 7), three_d=True), (1, 6, 8, 7)),
        ("blur", Blur(filter=gaussian_blur(sigma=1.5).to(F64), padding="circular"), (3, 10, 12)),
        ("inpainting", Inpainting(img_size=(3, 9, 11), mask=keep), (3, 9, 11)),
        ("downsampling", Downsampling(img_size=(1, 12, 12), factor=2, filter="bicubic").double(), (1, 12, 12)),
        ("decolorize", Decolorize(channels=3), (3, 8, 9)),  # mixes channels: (3, H, W) -> (1, H, W)
    ]


def _random_like(t: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    if t.is_complex():
        return torch.complex(torch.randn(t.shape, generator=gen, dtype=F64), torch.randn(t.shape, generator=gen, dtype=F64))
    return torch.randn(t.shape, generator=gen, dtype=F64)


@pytest.mark.parametrize("name,physics,shape", _physics(), ids=[p[0] for p in _physics()])
def test_adjoint_is_the_exact_transpose_in_float64(name, physics, shape):
    """⟨Ax, y⟩ = ⟨x, Aᵀy⟩ to 1e-10 relative in float64 (real inner product, Re Σ conj(u) v, for the complex
    k-space of the MRI physics), with A and Aᵀ deepinv's A and A_adjoint on its batch of one."""
    op = DeepinvOperator(physics, field_shape=shape[1:] if name in ("blur", "inpainting", "downsampling", "decolorize") else None)
    assert op.field_shape == shape[1:]
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(*shape, generator=gen, dtype=F64)
    ax = op(x)
    assert ax.is_complex() == name.startswith("mri")
    y = _random_like(ax, gen)
    aty = op.adjoint(y)
    assert aty.shape == x.shape and aty.dtype == F64
    lhs, rhs = float(real_inner(ax, y)), float(real_inner(x, aty))
    assert abs(lhs - rhs) <= 1e-10 * max(1.0, abs(lhs))
    _, pullback = torch.func.vjp(op, torch.zeros_like(x))
    torch.testing.assert_close(aty, pullback(y)[0], rtol=1e-10, atol=1e-10)  # and the autograd transpose of A


def test_the_identity_test_catches_an_approximate_physics_adjoint():
    """deepinv's Tomography with ``adjoint_via_backprop=False`` back-projects with its own interpolation, which
    is not the transpose (the gradient through its A uses the same back-projection): the identity is off by
    more than 0.1% here, so the float64 test above can fail."""
    op = DeepinvOperator(Tomography(angles=6, img_width=16, normalize=False, adjoint_via_backprop=False, dtype=F64))
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(1, 16, 16, generator=gen, dtype=F64)
    y = torch.randn(op(x).shape, generator=gen, dtype=F64)
    lhs, rhs = float(real_inner(op(x), y)), float(real_inner(x, op.adjoint(y)))
    assert abs(lhs - rhs) > 1e-3 * abs(lhs)


def test_deepinv_tomography_equals_parallel_beam_projection_after_mapping_conventions():
    """The same field through both CT operators. Conventions, and their mapping:

    - angles: deepinv in degrees, here radians (θ° = 180 θ/π); the rotation sense and the ray and detector
      directions are the same (deepinv's affine grid [[cos, sin], [−sin, cos]] gives row = −s sin θ + t cos θ,
      col = s cos θ + t sin θ about the centre, as ``ParallelBeamProjection``);
    - layout: deepinv (C, detectors, angles), here (C, angles, detectors);
    - scale: deepinv sums samples one pixel apart (pixel units), here the sum times Δt = 1/W, so deepinv = W · ours;
    - centring: deepinv rotates about the pixel-centred (W − 1)/2, here about index W/2 (v = ½ on the
      v = i/W grid). A W² field padded with one zero row and column is a (W + 1)² image whose centre W/2 is
      deepinv's; its ⌈√2 (W + 1)⌉ detector bins sit at k − that//2 pixels, ours at d − ⌈√2 W⌉//2, the same
      positions for W = 32 (47 and 46 bins, both centred on 23), and both sample rays at integer offsets.

    Agreement to 1e-6 absolute on line integrals of about 0.7: this operator's sampling grid is stored in
    float32 (the rest runs in float64).
    """
    width, angles = 32, even_angles(9)
    ours = ParallelBeamProjection(angles, (width, width)).double()
    theirs = DeepinvOperator(Tomography(angles=angles * 180 / math.pi, img_width=width + 1, normalize=False, dtype=F64))
    x = torch.rand(1, width, width, generator=torch.Generator().manual_seed(4), dtype=F64)
    padded = torch.nn.functional.pad(x, (0, 1, 0, 1))  # (1, W, W) -> (1, W + 1, W + 1), zeros after the last row/col
    y_ours, y_theirs = ours(x), theirs(padded)
    assert y_ours.shape == (1, 9, 46) and y_theirs.shape == (1, 47, 9)
    mapped = y_theirs.transpose(1, 2)[..., : ours.detectors] / width  # (1, D', K) -> (1, K, D)
    assert float(y_ours.abs().max()) > 0.5
    torch.testing.assert_close(mapped, y_ours, rtol=0, atol=1e-6)
    # without the half-pixel centring, the two differ by far more than the tolerance
    shifted = DeepinvOperator(Tomography(angles=angles * 180 / math.pi, img_width=width, normalize=False, dtype=F64))(x)
    assert float((shifted.transpose(1, 2)[..., : ours.detectors] / width - y_ours).abs().max()) > 1e-2


@pytest.mark.parametrize("shape", [(12, 10), (7, 9), (6, 8, 7)], ids=["2d", "2d-odd", "3d"])
def test_deepinv_mri_equals_kspace_sampling_after_mapping_conventions(shape):
    """deepinv's MRI is y = M · fftshift(FFT_ortho(ifftshift(x))) on (real, imaginary) channels, returned on the
    full grid with zeros off the mask; ``KSpaceSampling`` is fftshift(FFT_ortho(x)) read at the mask. Both are
    orthonormal with zero frequency at index N//2; deepinv's image origin is at index N//2 (ifftshift), ours
    at 0. Mapped: DeepinvOperator(MRI)(fftshift(x)) at the mask equals KSpaceSampling(x) to 1e-12 (float64),
    odd sizes included."""
    mask = gaussian_kspace_mask(shape, samples=80, seed=5)
    theirs = DeepinvOperator(MRI(mask=mask.to(F64), img_size=shape, three_d=len(shape) == 3))
    x = torch.rand(1, *shape, generator=torch.Generator().manual_seed(6), dtype=F64)
    dims = tuple(range(1, x.ndim))
    y = theirs(torch.fft.fftshift(x, dim=dims))
    assert y.shape == (1, *shape) and y.is_complex()
    torch.testing.assert_close(y.flatten(1)[:, mask.flatten()], KSpaceSampling(mask)(x), rtol=0, atol=1e-12)
    assert float(y[:, ~mask].abs().max()) == 0.0


def test_simulate_draws_the_noise_model_reproducibly_with_its_stated_sigma():
    """N(Ax) with deepinv's GaussianNoise σ = 0.5: the same seed gives the same draw, another seed another;
    the residual's sample standard deviation over 20,000 values is σ to 2% (Monte-Carlo: ±3 s.e. ≈ 1.5%)."""
    physics = Inpainting(img_size=(1, 100, 200), mask=torch.ones(1, 100, 200), noise_model=GaussianNoise(sigma=0.5))
    op = DeepinvOperator(physics, field_shape=(100, 200))
    x = torch.rand(1, 100, 200, generator=torch.Generator().manual_seed(0))
    a, b, c = op.simulate(x, seed=3), op.simulate(x, seed=3), op.simulate(x, seed=4)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert torch.equal(op(x), x)  # forward is the noiseless A
    assert abs(float((a - x).std()) - 0.5) < 0.01
    assert torch.equal(Operator.simulate(op, x), op(x))  # the base class simulates without noise


def test_physics_from_a_config_mapping_and_its_errors():
    spec = {
        "class_path": "deepinv.physics.Tomography",
        "init_args": {
            "angles": 4,
            "img_width": 8,
            "normalize": False,
            "noise_model": {"class_path": "deepinv.physics.GaussianNoise", "init_args": {"sigma": 0.1}},
        },
    }
    physics = build_physics(spec)
    assert isinstance(physics, Tomography) and float(physics.noise_model.sigma) == pytest.approx(0.1)
    assert DeepinvOperator(spec).field_shape == (8, 8)
    bad = {**spec, "init_args": {**spec["init_args"], "normalise": False}}
    with pytest.raises(ValueError, match=r"normalise.*ignored"):
        build_physics(bad)
    with pytest.raises(ValueError, match="not a deepinv.physics.LinearPhysics"):
        build_physics({"class_path": "torch.nn.Identity"})
    with pytest.raises(ValueError, match="cannot import deepinv.physics.NoSuchPhysics"):
        build_physics({"class_path": "deepinv.physics.NoSuchPhysics"})
    with pytest.raises(ValueError, match="does not give its image size; set field_shape"):
        DeepinvOperator(Blur(filter=gaussian_blur(sigma=1.0)))


def _summary(capsys) -> dict[str, float]:
    line = [l for l in capsys.readouterr().out.splitlines() if l.startswith("summary:")][-1]
    return {k: float(v) for k, v in re.findall(r"(\w+/\w+) ([-\d.einf]+)", line)}


@pytest.mark.slow
def test_ct_fits_through_a_deepinv_operator_via_train_py(tmp_path, capsys):
    """configs/ct_deepinv.yaml at 16², 8 angles, a 32-wide network: after 40 steps the residual ‖Af − y‖/‖y‖
    (the square root of the loss over ‖y‖²) is below half of its value after one step and the PSNR against
    the phantom is 3 dB higher — the loss decreases through deepinv's operator."""
    physics = "{class_path: deepinv.physics.Tomography, init_args: {angles: 8, img_width: 16, normalize: false}}"
    args = [
        "--config",
        "ct_deepinv.yaml",
        "--data.init_args.resolution",
        "16",
        "--data.init_args.operator.init_args.physics",
        physics,
        "--model.init_args.network.init_args.width",
        "32",
        "--model.init_args.encoder.init_args.num_features",
        "32",
        "--trainer.logger.init_args.save_dir",
        str(tmp_path),
        "--trainer.enable_progress_bar",
        "false",
        "--trainer.check_val_every_n_epoch",
        "2",
    ]
    cli_main([*args, "--trainer.max_steps", "1"])
    start = _summary(capsys)
    cli_main([*args, "--trainer.max_steps", "40"])
    end = _summary(capsys)
    assert end["train/residual"] < 0.5 * start["train/residual"]
    assert end["full/psnr"] > start["full/psnr"] + 3.0
    saved = (tmp_path / "ct_deepinv" / "version_1" / "config.yaml").read_text()
    assert "deepinv.physics.Tomography" in saved and "Unable to serialize" not in saved


def test_without_deepinv_the_operator_names_the_extra_to_install(monkeypatch):
    import inr.operators

    for name in [m for m in sys.modules if m == "deepinv" or m.startswith("deepinv.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "inr.operators.deepinv_physics")
    with pytest.raises(ImportError, match=r"DeepinvOperator needs deepinv: pip install 'inr\[interop\]'"):
        inr.operators.DeepinvOperator  # noqa: B018


@pytest.mark.parametrize(
    "noise, message",
    [
        (
            {"class_path": "deepinv.physics.GaussianNoise", "init_args": {"sigma": -1.0}},
            "GaussianNoise: sigma must be ≥ 0, got -1",
        ),
        ({"class_path": "deepinv.physics.PoissonNoise", "init_args": {"gain": 0.0}}, "PoissonNoise: gain must be > 0, got 0"),
        ({"class_path": "deepinv.physics.SaltPepperNoise", "init_args": {"p": 1.5}}, "SaltPepperNoise: p must be ≥ 0 and ≤ 1"),
        ({"class_path": "deepinv.physics.GaussianNoise", "init_args": {"sigma": math.nan}}, "sigma must be ≥ 0, got nan"),
    ],
)
def test_a_noise_level_outside_its_range_is_refused(noise, message):
    spec = {"class_path": "deepinv.physics.Tomography", "init_args": {"angles": 4, "img_width": 8, "noise_model": noise}}
    with pytest.raises(ValueError, match=re.escape(message)):
        build_physics(spec)
    with pytest.raises(ValueError, match=re.escape(message)):  # a physics built elsewhere too
        DeepinvOperator(Tomography(angles=4, img_width=8, noise_model=build_physics_noise(noise)))
    assert build_physics({**spec, "init_args": {**spec["init_args"], "noise_model": None}}) is not None


def build_physics_noise(noise):
    from inr.operators.deepinv_physics import _build

    return _build(noise)


@pytest.mark.parametrize("angles", [0, -3, []])
def test_tomography_without_angles_is_refused_in_words(angles):
    with pytest.raises(
        ValueError, match=r"Tomography: angles must be a count ≥ 1 \(evenly in \[0°, 180°\)\) or a non-empty list"
    ):
        build_physics({"class_path": "deepinv.physics.Tomography", "init_args": {"angles": angles, "img_width": 8}})


def test_a_stray_override_names_the_whole_physics_to_give_instead():
    """What jsonargparse makes of ``--…physics.init_args.noise_model.init_args.sigma 0.5``: the rest of the key beside
    class_path. The line shows the physics with the override applied, the built noise model's own σ kept."""
    spec = {
        "class_path": "deepinv.physics.Tomography",
        "init_args": {"angles": 20, "img_width": 8, "noise_model": GaussianNoise(sigma=0.0)},
        "noise_model": {"init_args.sigma": "0.5"},
        "angles": 4,
    }
    with pytest.raises(ValueError) as info:
        build_physics(spec)
    assert str(info.value) == (
        "DeepinvOperator: physics.init_args.noise_model.init_args.sigma 0.5, physics.init_args.angles 4 does not reach "
        "the physics (a command-line override lands beside its class_path); give the whole physics: "
        "--data.init_args.operator.init_args.physics '{class_path: deepinv.physics.Tomography, init_args: {angles: 4, "
        "img_width: 8, noise_model: {class_path: deepinv.physics.noise.GaussianNoise, init_args: {sigma: 0.5}}}}', "
        "with every setting you need, or set it in the config file"
    )
    given = {
        "class_path": "deepinv.physics.Tomography",
        "init_args": {"angles": 20, "img_width": 8, "noise_model": GaussianNoise(sigma=0.0)},
        "angles": 4,
    }
    with pytest.raises(
        ValueError, match=re.escape("noise_model: {class_path: deepinv.physics.noise.GaussianNoise, init_args: {sigma: 0.0}}")
    ):
        build_physics(given)  # no override of it: its own σ, not GaussianNoise's default 0.1
