"""Learning the latent codec's decoder prior (``latent_prior``): the latents of every training crop and one shared
synthesis and entropy model, trained together on the mean of D + λ·R over the crops (the encoder's own loss and
schedule, ``latent_fit``), then the networks quantised at fixed steps (synthesis 2^−10, entropy model 2^−10); the
command prints an entry of the table ``inr/codec/latent_priors.py`` holds, to be appended to it (an entry is never
edited: files name their prior by its digest). With several λ's the crops take them in turn (crop k at λ_{k mod n}),
so one prior serves the whole range of rates a user asks for:

    python -m inr.codec.latent_prior_learn --steps 1000 --crop 128 --lambda 0.01
    python -m inr.codec.latent_prior_learn --steps 1000 --crop 256 --lambda 0.02,0.008,0.003,0.001
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from inr.codec.laplace import bits as latent_bits
from inr.codec.latent_arm import FixedPoint, contexts
from inr.codec.latent_command import parse_lambdas
from inr.codec.latent_fit import GAIN, PRESETS, Preset, quantised
from inr.codec.latent_model import LatentImage, Spec
from inr.codec.latent_prior import Prior
from inr.errors import InputError
from inr.extras import require
from inr.io.command_line import CommandParser

PRIOR_BITS = 10  # the prior's synthesis and entropy-model steps, 2^−10
# public-domain / CC0 photographs of scikit-image, none of those the codec is measured on (Kodak; astronaut, cat,
# immunohistochemistry, motorcycle)
TRAINING_PHOTOGRAPHS = ("coffee", "rocket", "hubble_deep_field", "retina")


def learn_prior(images: Sequence[Tensor], lam: float | Sequence[float], preset: Preset, levels: int, seed: int = 0) -> Prior:
    """The prior of crops (each (H, W, 3) in [0, 1]): their latents and shared networks trained on the mean loss,
    crop k at ``lam`` (one λ) or at lam[k mod len(lam)]."""
    lams = [lam] if isinstance(lam, (int, float)) else list(lam)
    torch.manual_seed(seed)
    models = [LatentImage(Spec(*image.shape[:2], image.shape[2], levels, preset.synthesis, preset.arm)) for image in images]
    shared = models[0]
    for m in models[1:]:
        m.synthesis, m.arm = shared.synthesis, shared.arm
    parameters = [*shared.synthesis.parameters(), *shared.arm.parameters(), *(y for m in models for y in m.latents)]
    optimiser = torch.optim.Adam(parameters, lr=preset.lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda k: 0.5 * (1 + math.cos(math.pi * k / preset.steps)))
    for step in range(preset.steps):
        loss = 0.0
        for k, (m, image) in enumerate(zip(models, images)):
            latents = [quantised(GAIN * y, False, step / preset.steps) for y in m.latents]
            rate = sum(latent_bits(y.reshape(-1), *m.arm(contexts(y))).sum() for y in latents)
            loss = (
                loss
                + torch.mean((m.image(latents) - image) ** 2)
                + lams[k % len(lams)] * rate / (image.shape[0] * image.shape[1])
            )
        optimiser.zero_grad(set_to_none=True)
        (loss / len(images)).backward()
        optimiser.step()
        schedule.step()
        if step % 50 == 0 or step == preset.steps - 1:
            print(f"step {step + 1}/{preset.steps}: loss {float(loss.detach()) / len(images):.5f}", file=sys.stderr, flush=True)
    synthesis = tuple(np.round(t.detach().double().numpy() * 2.0**PRIOR_BITS).astype(np.int64) for t in shared.synthesis.stored())
    arm = FixedPoint.of(shared.arm, PRIOR_BITS)
    return Prior(levels, preset.synthesis, preset.arm, PRIOR_BITS, PRIOR_BITS, (*synthesis, *arm.tensors()))


def training_crops(side: int) -> list[Tensor]:
    """Two centre-row crops of ``side`` pixels from each training photograph (left and right halves)."""
    data = require("skimage.data", extra="photos", what="the decoder prior's training photographs")
    crops = []
    for name in TRAINING_PHOTOGRAPHS:
        photo = getattr(data, name)()[..., :3]
        h, w = photo.shape[:2]
        top = (h - side) // 2
        for left in (w // 4 - side // 2, 3 * w // 4 - side // 2):
            crops.append(torch.from_numpy(photo[top : top + side, left : left + side].astype(np.float32) / 255.0))
    return crops


def entry_source(prior: Prior, command: str) -> str:
    """The Python source of one entry of the table of priors (``latent_priors.PRIORS``), the command that made it
    in a comment above it."""
    lines = [
        f"    # {command}",
        "    {",
        f'        "levels": {prior.levels}, "synthesis": {prior.synthesis}, "arm": {prior.arm},',
        f'        "synthesis_bits": {prior.synthesis_bits}, "arm_bits": {prior.arm_bits},  # digest {prior.digest.hex()}',
        '        "tensors": (',
        *(f"            {tuple(int(v) for v in t.reshape(-1))!r}," for t in prior.tensors),
        "        ),",
        "    },",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = CommandParser(
        prog="python -m inr.codec.latent_prior_learn",
        description="Learn the latent codec's decoder prior for the medium preset's networks; print its entry of the table of priors.",
    )
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--crop", type=int, default=96)
    parser.add_argument(
        "--lambda", dest="lam", default="0.005", help="the rate's weight; several, comma-separated: the crops take them in turn"
    )
    args = parser.parse_args(argv)
    try:
        lams = parse_lambdas(args.lam)
    except InputError as error:
        parser.error(str(error))
    preset = PRESETS["medium"]
    prior = learn_prior(training_crops(args.crop), lams, Preset("prior", args.steps, preset.synthesis, preset.arm), levels=7)
    command = f"python -m inr.codec.latent_prior_learn --steps {args.steps} --crop {args.crop} --lambda {','.join(f'{v:g}' for v in lams)}"
    print(entry_source(prior, command))


if __name__ == "__main__":
    main()
