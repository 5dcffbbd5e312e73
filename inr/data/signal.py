"""1D signals as targets: WAV reading, the two spectral-bias generators, and ``SignalDataModule``.

Sample n of a signal of N samples sits at v = n / N (the core grid convention), so a generated frequency k
(cycles over the whole signal) lands exactly on DFT bin k. Conversions: 16/32-bit integer PCM is divided by
2^15 / 2^31 and 8-bit unsigned PCM is mapped by (x − 128) / 128, so all integer audio lies in [−1, 1);
float WAV is taken as stored. With ``normalize`` (default) every signal is then divided by its peak |s|, so
targets lie in [−1, 1] and PSNR is comparable across sources (relative amplitudes are kept).
"""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, Optional, Union

import numpy as np
import torch
from torch import Tensor

from inr.data.module import GridDataModule
from inr.data.paths import check_file, resolve_data_path
from inr.errors import InputError
from inr.io.bounded import check_declared, first_line

WAV_EXTENSIONS = (".wav",)
GENERATORS = ("sinusoids", "power_law")
# Rahaman et al. 2019, "On the Spectral Bias of Neural Networks", Sec. 3: k = (5, 10, ..., 50).
DEFAULT_LENGTH = 1024
RAHAMAN_FREQUENCIES = [5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0]


WAVE_PCM, WAVE_FLOAT, WAVE_EXTENSIBLE = 1, 3, 0xFFFE  # wFormatTag values (RFC 2361, mmreg.h)


@dataclass(frozen=True)
class WavFormat:
    """What a WAV file's ``fmt `` and ``data`` chunks declare: channels, sample rate, bits per sample, block size
    (nBlockAlign: one sample of every channel) and the data chunk's size in bytes."""

    channels: int
    rate: int
    bits: int
    block: int
    data: int

    @property
    def frames(self) -> int:
        return self.data // self.block

    @property
    def width(self) -> int:
        """Bytes of one sample's container (nBlockAlign / channels), as scipy reads it."""
        return self.block // self.channels


def wav_format(stream: IO[bytes], source: str) -> Optional[WavFormat]:
    """The format a WAV stream declares (RIFF or RIFX: each chunk a 4-byte tag and a 4-byte size), read without its
    samples and checked: refused in one line when a chunk runs past the end of the file, the fmt chunk declares 0
    channels, 0 bits, a sample rate of 0 or blocks that do not hold one sample of each channel, or the data chunk is
    missing, first, or cut short. None for a stream that is not RIFF/RIFX (scipy then says what it is).

    Example:
        >>> import io
        >>> fmt = b"fmt " + struct.pack("<IHHIIHH", 16, 1, 2, 8000, 32000, 4, 16)
        >>> wav_format(io.BytesIO(b"RIFF" + bytes(4) + b"WAVE" + fmt + b"data" + struct.pack("<I", 400) + bytes(400)), "a.wav")
        WavFormat(channels=2, rate=8000, bits=16, block=4, data=400)
    """
    riff = stream.read(12)
    if len(riff) < 12 or riff[:4] not in (b"RIFF", b"RIFX") or riff[8:] != b"WAVE":
        return None
    order = "<" if riff[:4] == b"RIFF" else ">"
    start = stream.tell()
    end = stream.seek(0, os.SEEK_END)
    stream.seek(start)
    fmt: Optional[tuple[int, ...]] = None
    while True:
        head = stream.read(8)
        if len(head) < 8:
            raise InputError(f"{source}: holds no data chunk" if fmt else f"{source}: holds no fmt chunk")
        tag, size = head[:4], struct.unpack(order + "I", head[4:])[0]
        left = end - stream.tell()
        if tag == b"fmt ":
            if size < 16:
                raise InputError(f"{source}: its fmt chunk is {size} bytes, shorter than the 16 of a WAV format")
            if size > left:
                raise InputError(f"{source}: its fmt chunk declares {size:,} bytes but {left:,} remain in the file")
            fmt = struct.unpack(order + "HHIIHH", stream.read(16))
            stream.seek(size - 16 + size % 2, 1)
        elif tag == b"data":
            if fmt is None:
                raise InputError(f"{source}: its data chunk comes before its fmt chunk")
            if size > left:
                truncated = f"{source}: its data chunk declares {size:,} bytes but {left:,} follow"
                raise InputError(f"{truncated}; the file is truncated or its header wrong")
            return check_wav_format(WavFormat(*fmt[1:3], fmt[5], fmt[4], size), fmt[0], source)
        elif size > left:
            raise InputError(
                f"{source}: its {tag.decode('latin-1')!r} chunk declares {size:,} bytes but {left:,} remain in the file"
            )
        else:
            stream.seek(size + size % 2, 1)  # chunks are padded to an even size


def check_wav_format(wav: WavFormat, tag: int, source: str) -> WavFormat:
    """Refuse a format that scipy would misread or fail on (it takes the sample's size from nBlockAlign / channels
    and its type from the bits): 0 channels, 0 bits, a rate of 0, blocks that are not whole samples of every channel,
    samples larger than their containers (or 8-bit ones in wider containers), data that is not whole blocks."""
    said = f"{source}: its fmt chunk declares"
    if wav.channels == 0:
        raise InputError(f"{said} 0 channels")
    if wav.bits == 0:
        raise InputError(f"{said} 0 bits per sample")
    if wav.rate == 0:
        raise InputError(f"{said} a sample rate of 0")
    if wav.block == 0 or wav.block % wav.channels:
        per = f"{wav.channels} channel{'s' if wav.channels > 1 else ''}"
        raise InputError(f"{said} blocks of {wav.block} bytes (nBlockAlign) for {per}; a block holds one sample of each")
    if tag in (WAVE_PCM, WAVE_FLOAT, WAVE_EXTENSIBLE) and (
        math.ceil(wav.bits / 8) > wav.width or (wav.bits <= 8 and wav.width != 1)
    ):
        raise InputError(f"{said} {wav.bits}-bit samples in {wav.width}-byte containers (nBlockAlign / channels)")
    if wav.data % wav.block:
        raise InputError(f"{source}: its data chunk of {wav.data:,} bytes is not a whole number of {wav.block}-byte blocks")
    return wav


def read_wav(path: Union[str, Path], channels: Literal["mono", "keep"] = "mono") -> tuple[Tensor, int]:
    """Read a WAV file into float32 samples (T, C) and its sample rate.

    ``channels="mono"`` averages the channels of a stereo/multichannel file into one; ``"keep"`` keeps them.
    """
    path = Path(path)
    check_file(path, WAV_EXTENSIONS, "audio", "use .wav")
    with open(path, "rb") as stream:
        wav = wav_format(stream, str(path))
    if wav is not None:  # the samples as stored, as float32 and their mono mean: sized before they are read
        described = f"{wav.frames:,} samples of {wav.channels} channels"
        check_declared(str(path), described, (wav.frames, wav.channels), wav.width + 12, "use a shorter excerpt")
    from scipy.io import wavfile

    try:
        rate, data = wavfile.read(path)
    except Exception as exc:  # scipy raises ValueError for non-RIFF data, struct errors for truncated headers
        raise InputError(f"{path}: not a readable WAV file ({first_line(exc)})") from None
    data = np.asarray(data)
    if data.ndim == 1:
        data = data[:, None]  # (T,) -> (T, 1)
    if data.shape[0] < 2:
        raise InputError(f"{path}: the file holds {data.shape[0]} samples; at least 2 are needed")
    if data.dtype == np.uint8:
        samples = (data.astype(np.float32) - 128.0) / 128.0
    elif np.issubdtype(data.dtype, np.signedinteger):
        samples = data.astype(np.float32) / float(2 ** (8 * data.dtype.itemsize - 1))
    elif np.issubdtype(data.dtype, np.floating):
        samples = data.astype(np.float32)
        if not np.isfinite(samples).all():
            raise InputError(f"{path}: contains NaN or infinite samples")
    else:
        raise InputError(f"{path}: unsupported sample type {data.dtype}")
    if channels == "mono":
        mono = samples.mean(axis=1, keepdims=True)  # (T, C) -> (T, 1)
        if samples.shape[1] > 1 and np.ptp(mono) == 0.0 and np.ptp(samples) > 0.0:
            raise InputError(
                f"{path}: its {samples.shape[1]} channels cancel when averaged to mono (anti-phase); "
                "use data.channels: keep, or one channel of the file"
            )
        samples = mono
    elif channels != "keep":
        raise InputError(f"data.channels: unknown mode {channels!r}; choose mono or keep")
    return torch.from_numpy(np.ascontiguousarray(samples)), int(rate)


def sum_of_sinusoids(
    length: int,
    frequencies: Sequence[float],
    amplitudes: Optional[Sequence[float]] = None,
    phases: Optional[Sequence[float]] = None,
    seed: int = 0,
) -> Tensor:
    """s(v) = Σ_i A_i sin(2π k_i v + φ_i) at v = n / length (Rahaman et al. 2019, eq. 4), float32 (length,).

    Amplitudes default to 1; phases default to φ_i ~ U(0, 2π) drawn from ``seed``.

    Example:
        >>> sum_of_sinusoids(4, [1.0], phases=[0.0]).round(decimals=6)
        tensor([ 0.,  1.,  0., -1.])
    """
    k = torch.tensor(list(frequencies), dtype=torch.float64)
    if k.numel() == 0:
        raise InputError("data.frequencies: give at least one frequency")
    a = torch.ones_like(k) if amplitudes is None else torch.tensor(list(amplitudes), dtype=torch.float64)
    if phases is None:
        phi = torch.rand(len(k), generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2 * math.pi
    else:
        phi = torch.tensor(list(phases), dtype=torch.float64)
    if not (len(a) == len(phi) == len(k)):
        raise InputError(f"data.amplitudes/phases must have one entry per frequency ({len(k)}), got {len(a)} and {len(phi)}")
    v = torch.arange(length, dtype=torch.float64) / length
    s = (a * torch.sin(2 * math.pi * v[:, None] * k + phi)).sum(dim=1)  # (N, m) -> (N,)
    return s.to(torch.float32)


def power_law_signal(length: int, alpha: float = 1.0, bandlimit: Optional[int] = None, seed: int = 0) -> Tensor:
    """A random band-limited signal with Fourier amplitudes ∝ (1 + k)^(−α), float32 (length,).

    s(v) = Re Σ_{k=0}^{K−1} (a_k + i b_k)(1 + k)^(−α) e^{2πikv}, a_k, b_k ~ N(0, 1), v = n / length, with
    K = ``bandlimit`` (default length // 4). This is the 1D signal family of Tancik et al. 2020 (released
    notebooks, ``sample_random_powerlaw``: amplitude (1 + |k|)^(−α), coefficients from N/4 on set to zero);
    E|ŝ_k|² ∝ (1 + k)^(−2α) for k < K and ŝ_k = 0 above.
    """
    bandlimit = length // 4 if bandlimit is None else int(bandlimit)
    if not 1 <= bandlimit <= length // 2:
        raise InputError(f"data.bandlimit must lie in [1, length/2 = {length // 2}], got {bandlimit}")
    gen = torch.Generator().manual_seed(seed)
    raw = torch.randn(bandlimit, 2, generator=gen, dtype=torch.float64)
    k = torch.arange(bandlimit, dtype=torch.float64)
    coeff = torch.complex(raw[:, 0], raw[:, 1]) * (1.0 + k) ** (-alpha)  # (K,)
    v = torch.arange(length, dtype=torch.float64) / length
    phase = torch.exp(2j * math.pi * v[:, None] * k)  # (N, K)
    return (phase * coeff).sum(dim=1).real.to(torch.float32)


class SignalDataModule(GridDataModule):
    """A 1D signal as a grid of N samples (t = n / N) with C channels: a WAV file or a generator.

    Args:
        path: a WAV file (16/32-bit PCM, 8-bit PCM or float; mono or stereo); when given, the generator
            arguments are ignored.
        generator: ``power_law`` (Tancik et al. 1D signals) or ``sinusoids`` (Rahaman et al.), used without ``path``.
        length: samples of a generated signal (``None``: ``DEFAULT_LENGTH``); for a WAV file, how many
            samples to take from ``offset`` (``None``: to the end).
        offset: first sample taken from a WAV file.
        frequencies, amplitudes, phases: of ``sinusoids`` (cycles over the signal; see ``sum_of_sinusoids``).
        alpha, bandlimit: of ``power_law`` (see ``power_law_signal``).
        signal_seed: seed of the generated signal (phases, coefficients); independent of the batch seed.
        normalize: divide by the peak |s| (see the module docstring).
        channels: ``mono`` (average stereo) or ``keep``.
        split, batch_size, steps_per_epoch, eval_chunk, seed: as in ``GridDataModule``; ``every_other``
            trains on the even samples and holds out the odd ones.

    Example:
        >>> dm = SignalDataModule(generator="sinusoids", length=256)
        >>> dm.shape, dm.out_channels, dm.train_shape, float(dm.values.abs().max())
        ((256,), 1, (128,), 1.0)
    """

    def __init__(
        self,
        path: Optional[str] = None,
        generator: Literal["power_law", "sinusoids"] = "power_law",
        length: Optional[int] = None,
        offset: int = 0,
        frequencies: list[float] = RAHAMAN_FREQUENCIES,
        amplitudes: Optional[list[float]] = None,
        phases: Optional[list[float]] = None,
        alpha: float = 1.0,
        bandlimit: Optional[int] = None,
        signal_seed: int = 0,
        normalize: bool = True,
        channels: Literal["mono", "keep"] = "mono",
        split: str = "every_other",
        **kwargs: Any,
    ) -> None:
        super().__init__(split=split, **kwargs)
        if length is not None and length < 2:
            raise InputError(f"data.length must be ≥ 2 samples or null (a whole file), got {length}")
        if offset < 0:
            raise InputError(f"data.offset must be ≥ 0, got {offset}")
        self.path = resolve_data_path(path) if path is not None else None
        self.generator, self.length, self.offset = generator, length, offset
        self.frequencies, self.amplitudes, self.phases = list(frequencies), amplitudes, phases
        self.alpha, self.bandlimit, self.signal_seed = alpha, bandlimit, signal_seed
        self.normalize, self.channels = normalize, channels
        self.sample_rate: Optional[int] = None

    def describe(self) -> str:
        return str(self.path) if self.path is not None else f"{self.generator} signal"

    def _generate(self) -> Tensor:
        length = DEFAULT_LENGTH if self.length is None else self.length
        if length < 2:
            raise InputError(f"data.length must be ≥ 2 for a generated signal, got {length}")
        self.check_size(length, 1, 1)
        if self.generator == "sinusoids":
            top = max(abs(f) for f in self.frequencies) if self.frequencies else 0.0
            if top >= length / 2:
                raise InputError(
                    f"data.frequencies: {top:g} cycles need more than {2 * top:g} samples (Nyquist); data.length is {length}"
                )
            s = sum_of_sinusoids(length, self.frequencies, self.amplitudes, self.phases, self.signal_seed)
        elif self.generator == "power_law":
            s = power_law_signal(length, self.alpha, self.bandlimit, self.signal_seed)
        else:
            raise InputError(f"data.generator: unknown generator {self.generator!r}; choose {' or '.join(GENERATORS)}")
        return s[:, None]  # (N,) -> (N, 1)

    def _read(self) -> Tensor:
        samples, self.sample_rate = read_wav(self.path, self.channels)
        if not 0 <= self.offset < len(samples):
            raise InputError(f"data.offset {self.offset} lies outside {self.path} ({len(samples)} samples)")
        end = len(samples) if self.length is None else self.offset + self.length
        samples = samples[self.offset : end]
        if len(samples) < 2:
            raise InputError(f"{self.path}: fewer than 2 samples from offset {self.offset}")
        self.check_size(len(samples), samples.shape[1], 1)
        return samples

    def load_values(self) -> Tensor:
        s = self._read() if self.path is not None else self._generate()
        peak = float(s.abs().max())
        if float(s.max() - s.min()) == 0.0:
            raise InputError(f"{self.describe()}: the signal is constant ({float(s[0, 0]):.3g}); nothing to fit")
        return s / peak if self.normalize else s  # (N, C)
