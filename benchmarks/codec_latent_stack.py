"""The latent codec's stacked members against the same trainings one after another: K = 4 λ's of one image.

    python benchmarks/codec_latent_stack.py kodim05.png                       # 256² centre crop, 30 steps, one thread
    python benchmarks/codec_latent_stack.py kodim05.png --steps 100 --repeats 5 --device cuda

Each repeat trains the medium preset's model (8-wide networks, 7 levels) for ``--steps`` steps at each of the K λ's,
once as K ``fit_latents`` calls one after another and once as one ``fit_latents_stacked`` of K members (the same
trainings, ``inr.codec.latent_stack``); the two are interleaved, after one short warm-up of each. It prints the
wall time of each and their ratio per repeat, and the median ratio: above 1, the stacked run is faster. The machine
is shared: read the ratios, not the seconds.
"""

from __future__ import annotations

import statistics
import time

import torch

from inr.codec.encode import read_codec_image
from inr.codec.latent_fit import PRESETS, Preset, fit_latents
from inr.codec.latent_stack import fit_latents_stacked
from inr.io.command_line import CommandParser
from inr.run.command import command


def centre_crop(image: torch.Tensor, side: int) -> torch.Tensor:
    h, w, _ = image.shape
    if min(h, w) < side:
        raise SystemExit(f"error: the image is {w}×{h}, smaller than --crop {side}")
    top, left = (h - side) // 2, (w - side) // 2
    return image[top : top + side, left : left + side]


def timed(run, device: str) -> float:
    start = time.perf_counter()
    run()
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> None:
    parser = CommandParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image", type=str, help="an 8-bit image (PNG, JPEG, …)")
    parser.add_argument("--crop", type=int, default=256, help="the centre crop's side")
    parser.add_argument("--lambdas", type=str, default="0.02,0.008,0.003,0.001", help="the members' λ's")
    parser.add_argument("--steps", type=int, default=30, help="training steps of each member")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", type=str, default="cpu", help="cpu or cuda")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    image = centre_crop(read_codec_image(args.image), args.crop)
    lams = [float(v) for v in args.lambdas.split(",")]
    medium = PRESETS["medium"]
    preset = Preset("benchmark", args.steps, medium.synthesis, medium.arm)
    warm = Preset("warm-up", 2, medium.synthesis, medium.arm)
    one_by_one = lambda p: [fit_latents(image, lam, p, 7, seed=k, device=args.device) for k, lam in enumerate(lams)]  # noqa: E731
    together = lambda p: fit_latents_stacked([image] * len(lams), lams, p, 7, device=args.device)  # noqa: E731
    timed(lambda: one_by_one(warm), args.device)
    timed(lambda: together(warm), args.device)
    print(f"{args.image}, {args.crop}² crop, K = {len(lams)} λ's, {args.steps} steps, {args.threads} thread(s), {args.device}")
    ratios = []
    for repeat in range(args.repeats):
        alone = timed(lambda: one_by_one(preset), args.device)
        stacked = timed(lambda: together(preset), args.device)
        ratios.append(alone / stacked)
        print(f"repeat {repeat + 1}: one after another {alone:.2f} s, stacked {stacked:.2f} s, ratio {alone / stacked:.2f}")
    print(
        f"median ratio (one after another / stacked): {statistics.median(ratios):.2f} (range {min(ratios):.2f}–{max(ratios):.2f})"
    )


if __name__ == "__main__":
    command(main)
