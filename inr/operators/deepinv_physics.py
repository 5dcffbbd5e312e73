"""``DeepinvOperator``: any ``deepinv.physics.LinearPhysics`` (CT, MRI, blur, inpainting, ... and its noise
model) used as an ``Operator`` here, its batch axis mapped onto the fields' lack of one. Needs the optional
``interop`` extra (``pip install 'inr[interop]'``)."""

from __future__ import annotations

import importlib
import inspect
import math
import warnings
from collections.abc import Sequence
from typing import Any, Optional, Union

import torch
from deepinv.physics import LinearPhysics
from deepinv.utils.mixins import MRIMixin
from torch import Tensor

from inr.operators.base import Operator


def build_physics(spec: Union[dict[str, Any], LinearPhysics]) -> LinearPhysics:
    """A physics from its config {class_path, init_args}; values that are themselves {class_path, init_args}
    (a noise model) are built first, unless LightningCLI built them already. An instance is returned as it is.
    An argument the physics does not take is refused (deepinv's constructors would only warn)."""
    if isinstance(spec, LinearPhysics):
        check_noise_model(spec.noise_model)
        return spec
    if not isinstance(spec, dict) or not isinstance(spec.get("class_path"), str):
        raise ValueError(f"DeepinvOperator: physics must be {{class_path, init_args}} or a LinearPhysics, got {spec!r}")
    stray = {k: v for k, v in spec.items() if k not in ("class_path", "init_args")}
    if stray:
        raise ValueError(override_advice(spec, stray))
    cls = _import(spec["class_path"])
    if not (isinstance(cls, type) and issubclass(cls, LinearPhysics)):
        raise ValueError(f"DeepinvOperator: physics {spec['class_path']} is not a deepinv.physics.LinearPhysics")
    kwargs = {k: _build(v) for k, v in (spec.get("init_args") or {}).items()}
    check_arguments(spec["class_path"], kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            physics = cls(**kwargs)
        except Exception as exc:  # the physics' own checks: TypeError, ValueError, RuntimeError
            raise ValueError(f"DeepinvOperator: {spec['class_path']}: {type(exc).__name__}: {_one_line(exc)}") from None
    for w in caught:
        if "are passed to" in str(w.message) and "ignored" in str(w.message):  # deepinv.physics.Physics.__init__
            raise ValueError(f"DeepinvOperator: {spec['class_path']}: {_one_line(w.message)}")
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    check_noise_model(physics.noise_model)
    return physics


# Settings deepinv takes without a check, that would fail later or be taken for something else: a noise model's
# levels (σ = −1 draws noise of σ = 1 with its sign flipped, silently), and a count of angles (0 fails deep in torch)
NOISE_BOUNDS = {  # attribute: (lowest, highest or None, lowest included)
    "sigma": (0.0, None, True),
    "sigma_min": (0.0, None, True),
    "sigma_max": (0.0, None, True),
    "gain": (0.0, None, False),
    "a": (0.0, None, True),
    "N0": (0.0, None, False),
    "mu": (0.0, None, True),
    "p": (0.0, 1.0, True),
    "s": (0.0, 1.0, True),
    "l": (0.0, None, False),
}


def _values(value: Any) -> Optional[list[float]]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    if isinstance(value, Tensor) and not value.is_complex():
        return [float(v) for v in value.detach().reshape(-1).tolist()]
    return None


def check_noise_model(noise: Any) -> None:
    """Refuse a noise model whose levels lie outside their range (``NOISE_BOUNDS``), or are not finite."""
    name = f"{type(noise).__module__.split('.')[0]}.physics.{type(noise).__name__}"
    for attribute, (low, high, closed) in NOISE_BOUNDS.items():
        values = _values(getattr(noise, attribute, None))
        if not values:
            continue
        for v in values:
            outside = not math.isfinite(v) or (v < low if closed else v <= low) or (high is not None and v > high)
            if outside:
                bound = f"{'≥' if closed else '>'} {low:g}" + (f" and ≤ {high:g}" if high is not None else "")
                shown = f"{v:g}" if len(values) == 1 else f"{v:g} (one of {len(values)})"
                raise ValueError(f"DeepinvOperator: {name}: {attribute} must be {bound}, got {shown}")


def check_arguments(class_path: str, kwargs: dict[str, Any]) -> None:
    """Counts a physics would take and fail on later: Tomography's ``angles`` (a count ≥ 1, or a non-empty list)."""
    if class_path.rpartition(".")[2] == "Tomography" and "angles" in kwargs:
        angles = kwargs["angles"]
        count = angles if isinstance(angles, int) and not isinstance(angles, bool) else None
        size = None if count is not None else len(angles) if hasattr(angles, "__len__") else None
        if (count is not None and count < 1) or size == 0:
            raise ValueError(
                f"DeepinvOperator: {class_path}: angles must be a count ≥ 1 (evenly in [0°, 180°)) or a non-empty list "
                f"of angles in degrees, got {angles!r}"
            )


def _flow(value: Any) -> str:
    """A config value in YAML flow style, for a message; what cannot be written back (a built object) is ``…``."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if hasattr(value, "as_dict") and hasattr(value, "class_path"):  # a jsonargparse Namespace of a class
        return _flow(value.as_dict())
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float, str)):
        return str(value)
    return "…"


def _dotted(stray: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """The overrides of a stray mapping as (dotted key, value): the parser keeps the rest of a nested override's key
    as one dotted key (``{'noise_model': {'init_args.sigma': '0.5'}}``)."""
    pairs = []
    for key, value in stray.items():
        if isinstance(value, dict) and "class_path" not in value:
            pairs += _dotted(value, f"{prefix}{key}.")
        else:
            pairs.append((f"{prefix}{key}", value))
    return pairs


def _writable(value: Any) -> Any:
    """A config value as a mapping that can take overrides: a jsonargparse Namespace as its dict, a built object
    (LightningCLI builds a physics' noise model) as its class_path and the settings it keeps under its arguments'
    names (GaussianNoise's ``sigma``)."""
    if isinstance(value, dict):
        return dict(value)
    if hasattr(value, "as_dict") and hasattr(value, "class_path"):
        return value.as_dict()
    if value is None or isinstance(value, (bool, int, float, str, list, tuple)):
        return value
    settings = {}
    for name, parameter in inspect.signature(type(value).__init__).parameters.items():
        kept = getattr(value, name, None) if name not in ("self", "rng", "device") else None
        if isinstance(kept, Tensor) and kept.numel() == 1:
            kept = kept.item()
        if isinstance(kept, (bool, int, float, str)) and parameter.kind is parameter.POSITIONAL_OR_KEYWORD:
            settings[name] = kept
    path = {"class_path": f"{type(value).__module__}.{type(value).__name__}"}
    return {**path, "init_args": settings} if settings else path


def override_advice(spec: dict[str, Any], stray: dict[str, Any]) -> str:
    """The one line for keys beside class_path and init_args, where a command-line override of one physics setting
    (``--…physics.init_args.angles 8``) lands, since the physics is a mapping and not a class the parser knows: what
    was given, and the whole physics with it applied, to give instead."""
    pairs = _dotted(stray)
    merged = {k: _writable(v) for k, v in (spec.get("init_args") or {}).items()}
    for dotted, value in pairs:
        node, *path = [merged, *dotted.split(".")]
        for part in path[:-1]:
            node[part] = _writable(node.get(part)) if isinstance(_writable(node.get(part)), dict) else {}
            node = node[part]
        node[path[-1]] = value
    given = ", ".join(f"physics.init_args.{k} {_flow(v)}" for k, v in pairs)
    whole = _flow({"class_path": spec["class_path"], "init_args": merged})
    return (
        f"DeepinvOperator: {given} does not reach the physics (a command-line override lands beside its class_path); "
        f"give the whole physics: --data.init_args.operator.init_args.physics '{whole}', with every setting you need, or "
        "set it in the config file"
    )


def _build(value: Any) -> Any:
    """A nested {class_path, init_args} built (recursively); anything else unchanged."""
    if isinstance(value, dict) and isinstance(value.get("class_path"), str) and set(value) <= {"class_path", "init_args"}:
        return _import(value["class_path"])(**{k: _build(v) for k, v in (value.get("init_args") or {}).items()})
    return value


def _import(path: str) -> Any:
    module, _, name = path.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        raise ValueError(f"DeepinvOperator: cannot import {path}") from None


def _one_line(message: Any) -> str:
    return " ".join(str(message).split())[:400]


def physics_field_shape(physics: LinearPhysics) -> Optional[tuple[int, ...]]:
    """The grid a physics reads, when it says: ``img_width`` (Tomography: a square (w, w)), the spatial axes of
    an MRI physics' ``img_size`` (the mask's (2, [D,] H, W) without its real/imaginary axis), or (H, W) of any
    other physics' image size (C, H, W) (``img_size``: Inpainting, CompressedSensing, BlurFFT, Demosaicing, ...;
    ``imsize``: Downsampling); else None (Blur, Denoising: any size).

    Example:
        >>> from deepinv.physics import Downsampling
        >>> physics_field_shape(Downsampling(img_size=(1, 12, 10), factor=2, filter="bicubic"))
        (12, 10)
    """
    width = getattr(physics, "img_width", None)
    if isinstance(width, int):
        return (width, width)
    size = getattr(physics, "img_size", None)
    if isinstance(physics, MRIMixin) and size is not None:
        return tuple(int(s) for s in size)[-(3 if getattr(physics, "three_d", False) else 2) :]
    for name in ("img_size", "imsize"):
        size = getattr(physics, name, None)
        if isinstance(size, (tuple, list, torch.Size)) and len(size) in (2, 3):
            return tuple(int(s) for s in size)[-2:]  # (C, H, W) or (H, W) -> (H, W)
    return None


class DeepinvOperator(Operator):
    """y = A(x) of a deepinv ``LinearPhysics``, noiseless; Aᵀy = its ``A_adjoint``; (C, *grid) -> (C', *m).

    deepinv works on batches (B, C, *grid); a field here is (C, *grid) with no batch axis, so the field
    is a batch of one whose channels are deepinv's channels: x -> x[None] -> A -> [0]. A real-valued
    physics therefore measures (C, *m) exactly as deepinv measures one image (Tomography: (C, detectors,
    angles), deepinv's layout). A complex physics (deepinv's MRI family, which holds complex images and
    k-space as (real, imaginary) pairs on its channel axis, C = 2) reads the real field (1, *grid) as
    (1, 2, *grid) with zero imaginary part and returns complex measurements (1, *m), the layout of
    ``KSpaceSampling``; its adjoint keeps the real part, Aᵀy = Re Aᴴy, the transpose for the real inner
    product ⟨u, v⟩ = Re Σ conj(u) v.

    The noise model of the physics (``noise_model``, e.g. ``deepinv.physics.GaussianNoise``) is not part
    of A; ``simulate`` applies it, seeded, when a data module simulates its measurements.

    The adjoint is as exact as the physics': deepinv's ``Tomography`` is exact with its default
    ``adjoint_via_backprop: true``; with false, both its ``A_adjoint`` and the gradient through its ``A`` (a
    custom autograd function) use an interpolated back-projection that is not the transpose.

    In a config the physics is a mapping {class_path, init_args} that this class builds (``build_physics``),
    so the run's saved config holds what was written, not every default of deepinv's constructors (some of
    which, a device and lambdas, do not serialise); an override on the command line replaces the whole
    mapping (``--data.init_args.operator.init_args.physics '{class_path: ..., init_args: {...}}'``).

    Args:
        physics: the deepinv physics, or its class_path and init_args.
        field_shape: the grid the physics reads, without channels; default from the physics
            (``physics_field_shape``), which it must then match; required for a physics that does not say.
        complex_pairs: the physics' channels are (real, imaginary) pairs; default: true for deepinv's MRI
            physics (``MRIMixin``), false otherwise.

    Example:
        >>> from deepinv.physics import Tomography
        >>> A = DeepinvOperator(Tomography(angles=4, img_width=8, normalize=False))
        >>> A.field_shape, tuple(A(torch.ones(1, 8, 8)).shape)
        ((8, 8), (1, 12, 4))
    """

    def __init__(
        self,
        physics: Union[dict[str, Any], LinearPhysics],
        field_shape: Optional[Sequence[int]] = None,
        complex_pairs: Optional[bool] = None,
    ) -> None:
        physics = build_physics(physics)
        known = physics_field_shape(physics)
        shape = tuple(int(s) for s in field_shape) if field_shape is not None else known
        if shape is None:
            raise ValueError(f"DeepinvOperator: {type(physics).__name__} does not give its image size; set field_shape")
        if known is not None and shape != known:
            raise ValueError(
                f"DeepinvOperator: field_shape {list(shape)} differs from the {list(known)} that "
                f"{type(physics).__name__} was built for; leave field_shape out"
            )
        super().__init__(shape)
        self.physics = physics
        self.complex_pairs = isinstance(physics, MRIMixin) if complex_pairs is None else bool(complex_pairs)

    def _to_physics(self, x: Tensor) -> Tensor:
        """A field (C, *grid) as deepinv's batch of one: (1, C, *grid), or (1, 2, *grid) for complex pairs."""
        if not self.complex_pairs:
            return x[None]
        if x.shape[0] != 1:
            raise ValueError(f"DeepinvOperator: a complex physics measures one-channel fields, got {x.shape[0]} channels")
        return torch.cat([x, torch.zeros_like(x)])[None]  # (1, *grid) -> (2, *grid) -> (1, 2, *grid)

    def _from_physics(self, y: Tensor) -> Tensor:
        """deepinv's measurements (1, C', *m) as ours: (C', *m), or complex (1, *m) from (1, 2, *m)."""
        if not self.complex_pairs:
            return y[0]
        return torch.complex(y[:, 0], y[:, 1])  # (1, 2, *m) -> (1, *m)

    def forward(self, x: Tensor) -> Tensor:
        return self._from_physics(self.physics.A(self._to_physics(x)))

    def adjoint(self, y: Tensor) -> Tensor:
        if not self.complex_pairs:
            return self.physics.A_adjoint(y[None])[0]
        pairs = torch.stack([y.real, y.imag], dim=1)  # (1, *m) -> (1, 2, *m)
        return self.physics.A_adjoint(pairs)[:, 0]  # (1, 2, *grid) -> real part (1, *grid)

    def simulate(self, x: Tensor, seed: int = 0) -> Tensor:
        """N(A x): the measurements with the physics' noise model (and sensor model), drawn with ``seed``."""
        noise = self.physics.noise_model
        if getattr(noise, "rng", None) is not None:
            noise.rng_manual_seed(seed)
        with torch.random.fork_rng(devices=[x.device] if x.device.type == "cuda" else []):
            torch.manual_seed(seed)  # a noise model without its own generator draws from torch's global one
            return self._from_physics(self.physics(self._to_physics(x)))

    def display(self, y: Tensor) -> Tensor:
        """|y| as an image scaled by its maximum; log(1 + |y|) for complex (k-space) measurements."""
        return super().display(torch.log1p(y.abs()) if y.is_complex() else y)
