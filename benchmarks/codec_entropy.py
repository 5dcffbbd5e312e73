"""Which entropy coder the codec uses: bits of real quantised weights under each candidate.

    python benchmarks/codec_entropy.py            # SIREN 4 × 24 and Gaussian features 3 × 16 on a 128² crop

Fits two networks of the registry for 300 steps (the weights a codec file holds), quantises them at 6, 8, 10 and
12 bits (one step per tensor), and codes the integers with constriction's range coder under a quantised Gaussian,
Laplace and Cauchy model per tensor (scale from the tensor, 16 bits of side information each), under a categorical
model whose histogram is sent along (Elias-gamma counts), and with zlib -9 and lzma (raw LZMA2) of the integers as
bytes. Prints bits per weight, side information included; inr.codec.entropy uses the smallest.
"""

from __future__ import annotations

import lzma
import math
import zlib

import constriction
import numpy as np

from inr.codec.architecture import Architecture, stored_tensors
from inr.codec.encode import read_codec_image
from inr.codec.quantise import levels, quantise
from inr.io.command_line import CommandParser
from inr.resources import DATA_DIR

MODELS = constriction.stream.model


def coded_bits(q: np.ndarray, bound: int, kind: str) -> float:
    coder = constriction.stream.queue.RangeEncoder()
    if kind == "categorical":
        counts = np.bincount(q + bound, minlength=2 * bound + 1)
        side = sum(2 * int(math.log2(c + 1)) + 1 for c in counts)  # Elias-gamma code of count + 1
        coder.encode((q + bound).astype(np.int32), MODELS.Categorical(counts.astype(np.float64), perfect=False))
        return coder.num_bits() + side
    scale = {
        "gaussian": math.sqrt(float(np.mean(q.astype(np.float64) ** 2))),
        "laplace": float(np.mean(np.abs(q))),
        "cauchy": float(np.median(np.abs(q))),
    }[kind]
    family = {"gaussian": MODELS.QuantizedGaussian, "laplace": MODELS.QuantizedLaplace, "cauchy": MODELS.QuantizedCauchy}[kind]
    coder.encode(q.astype(np.int32), family(-bound, bound, 0.0, max(scale, 0.05)))
    return coder.num_bits() + 16


def main() -> None:
    CommandParser(description=__doc__.splitlines()[0]).parse_args()  # no options: --help only
    from inr.codec.fit import fit

    image = read_codec_image(DATA_DIR / "astronaut.png")[100:228, 150:278].contiguous()
    print("| network | weights | bits | Gaussian | Laplace | Cauchy | categorical | zlib -9 | lzma |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for arch in (Architecture("siren", 24, 4), Architecture("gaussian", 16, 3)):
        (fitted,) = fit(arch, [image], steps=300)
        tensors = [t.detach() for _, t in stored_tensors(fitted.encoder, fitted.network)]
        n = sum(t.numel() for t in tensors)
        for bits in (6, 8, 10, 12):
            bound = levels(bits)
            q = [quantise(t, bits).q.numpy().ravel() for t in tensors]
            kinds = ("gaussian", "laplace", "cauchy", "categorical")
            per = {k: sum(coded_bits(x, bound, k) for x in q) / n for k in kinds}
            raw = np.concatenate(q).astype(np.int16 if bits > 8 else np.int8).tobytes()
            per["zlib"] = 8 * len(zlib.compress(raw, 9)) / n
            per["lzma"] = (
                8 * len(lzma.compress(raw, format=lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA2, "preset": 9}])) / n
            )
            cells = " | ".join(f"{per[k]:.3f}" for k in (*kinds, "zlib", "lzma"))
            print(f"| {arch.method} {arch.depth} × {arch.width} | {n:,} | {bits} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
