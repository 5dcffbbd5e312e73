"""The latent codec's decoder prior: synthesis and entropy-model weights learned once over a set of photographs and
shipped with the package, so that a file codes only its latents and the change of its networks from the prior.

On a 256² crop the two small networks are a large share of a small file when it carries them whole (16-wide ones:
0.12–0.14 bpp, 1,133 weights at 6–7 bits each; the presets' 8-wide ones: 525 weights); coded as the change from a
prior the encoder started from, they cost less. Held near the prior (a tenth of the latents' learning rate) the
networks cost more PSNR than their change saved bits, at both widths; trained as freely as without it (today's
``Preset.prior_lr``), the prior is level with none on four Kodak crops (better on the smooth ones, worse on the
textured ones) and 5 % fewer bits on four other photographs, more as a start than as a code (docs/codec.md). A file names its prior
by the first 8 bytes of the SHA-256 of the prior's integers (``digest``); the table of priors is
``inr.codec.latent_priors`` (a frozen table: a new prior is a new entry, an entry is never edited).
Learning one: ``inr.codec.latent_prior_learn``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import torch

from inr.codec.latent_arm import FixedPoint
from inr.codec.latent_model import LatentImage, Spec
from inr.errors import InputError

DIGEST_BYTES = 8


@dataclass(frozen=True)
class Prior:
    """A shipped prior: the (levels, synthesis width, entropy-model width) it fits, its integer tensors (the
    synthesis's then the entropy model's, in a file's order) and their step exponents."""

    levels: int
    synthesis: int
    arm: int
    synthesis_bits: int
    arm_bits: int
    tensors: tuple[np.ndarray, ...]

    @property
    def digest(self) -> bytes:
        return digest(self)

    def fits(self, spec: Spec) -> bool:
        return (spec.levels, spec.synthesis, spec.arm) == (self.levels, self.synthesis, self.arm)


def digest(prior: Prior) -> bytes:
    """SHA-256 (first 8 bytes) of the prior's sizes, steps and integers (int64 little-endian)."""
    h = hashlib.sha256(
        np.array([prior.levels, prior.synthesis, prior.arm, prior.synthesis_bits, prior.arm_bits], "<i8").tobytes()
    )
    for t in prior.tensors:
        h.update(np.asarray(t, dtype="<i8").tobytes())
    return h.digest()[:DIGEST_BYTES]


def shipped() -> dict[bytes, Prior]:
    """The priors the package ships, by digest."""
    from inr.codec.latent_priors import PRIORS

    out = {}
    for entry in PRIORS:
        spec = Spec(2, 2, 3, entry["levels"], entry["synthesis"], entry["arm"])
        shapes = spec.stored_shapes()
        tensors = tuple(np.array(t, dtype=np.int64).reshape(s) for t, s in zip(entry["tensors"], shapes))
        prior = Prior(entry["levels"], entry["synthesis"], entry["arm"], entry["synthesis_bits"], entry["arm_bits"], tensors)
        out[prior.digest] = prior
    return out


def prior_for(spec: Spec) -> Prior | None:
    """The shipped prior that fits a model of ``spec`` (the newest), or None."""
    fitting = [p for p in shipped().values() if p.fits(spec)]
    return fitting[-1] if fitting else None


def prior_named(name: bytes, source: str) -> Prior:
    """The shipped prior a file names; one line when this package has none of that digest."""
    prior = shipped().get(name)
    if prior is None:
        raise InputError(f"{source}: coded against the decoder prior {name.hex()}, which this inr does not ship")
    return prior


def load_prior(model: LatentImage, prior: Prior) -> None:
    """Set a model's synthesis and entropy model to the prior's weights."""
    n = len(model.spec.synthesis_shapes())
    with torch.no_grad():
        for target, q in zip(model.synthesis.stored(), prior.tensors[:n]):
            target.copy_(torch.from_numpy(q.astype(np.float64) * 2.0**-prior.synthesis_bits).reshape(target.shape))
    FixedPoint.from_tensors(list(prior.tensors[n:]), prior.arm, prior.arm_bits).load_into(model.arm)
