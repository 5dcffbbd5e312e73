"""1D signals: exact grid coordinates, WAV reading, the two generators against numpy.fft, bad input."""

import math

import numpy as np
import pytest
import torch
from scipy.io import wavfile

from inr.data.grid import grid_coordinates
from inr.data.signal import SignalDataModule, power_law_signal, read_wav, sum_of_sinusoids
from inr.errors import InputError


def test_coordinates_are_n_over_length_and_lazy_equals_materialised():
    dm = SignalDataModule(generator="sinusoids", length=10, frequencies=[2.0], split="all")
    index = torch.arange(10)
    coords = dm.grid.coords(index)
    assert coords.shape == (10, 1)
    assert torch.equal(coords[:, 0], torch.arange(10, dtype=torch.float32) / 10)
    assert torch.equal(coords, grid_coordinates((10,)).reshape(-1, 1))
    shuffled = torch.randperm(10, generator=torch.Generator().manual_seed(0))
    assert torch.equal(dm.gather(shuffled, torch.device("cpu"))["coords"], grid_coordinates((10,))[shuffled])


def test_every_other_trains_on_even_and_holds_out_odd_samples():
    dm = SignalDataModule(generator="sinusoids", length=9, frequencies=[1.0])
    assert dm.train_index.tolist() == [0, 2, 4, 6, 8] and dm.test_index.tolist() == [1, 3, 5, 7]
    assert dm.train_shape == (5,) and dm.test_shape == (4,)


def test_sum_of_sinusoids_has_the_chosen_amplitudes_at_their_dft_bins():
    n = 64
    s = sum_of_sinusoids(n, [3.0, 7.0], amplitudes=[1.0, 0.5], phases=[0.3, 1.1]).double().numpy()
    amp = np.abs(np.fft.rfft(s)) / (n / 2)  # a sine of amplitude A puts N·A/2 into its bin
    np.testing.assert_allclose(amp[[3, 7]], [1.0, 0.5], atol=1e-5)
    assert np.delete(amp, [3, 7]).max() < 1e-5
    # the phase: s(0) = Σ A sin φ
    assert abs(s[0] - (math.sin(0.3) + 0.5 * math.sin(1.1))) < 1e-6


def test_power_law_is_band_limited_with_mean_power_decaying_as_the_law():
    n, k_max, alpha, seeds = 64, 16, 1.0, 400
    spectra = np.stack(
        [np.abs(np.fft.rfft(power_law_signal(n, alpha, k_max, seed=s).double().numpy())) ** 2 for s in range(seeds)]
    )
    assert spectra[:, k_max:].max() < 1e-8 * spectra.max()
    # bin k ≥ 1 holds N c_k / 2 with E|c_k|² = 2 (1 + k)^(−2α): E|X_k|² = N²/2 (1 + k)^(−2α).
    # |X_k|² is exponential (std = mean); the mean of 400 has 5% relative std, so 25% is 5σ.
    k = np.arange(1, k_max)
    expected = n**2 / 2 * (1.0 + k) ** (-2 * alpha)
    np.testing.assert_allclose(spectra[:, 1:k_max].mean(axis=0) / expected, 1.0, atol=0.25)


def test_generated_signals_are_normalised_to_peak_one_and_reproducible():
    a = SignalDataModule(length=128, signal_seed=3).values
    b = SignalDataModule(length=128, signal_seed=3).values
    assert torch.equal(a, b) and float(a.abs().max()) == 1.0
    raw = SignalDataModule(length=128, signal_seed=3, normalize=False).values
    torch.testing.assert_close(raw / raw.abs().max(), a)


def test_wav_16bit_stereo_mono_and_float(tmp_path):
    rng = np.random.default_rng(0)
    stereo = rng.integers(-32768, 32767, size=(50, 2), dtype=np.int16)
    wavfile.write(tmp_path / "s.wav", 8000, stereo)
    kept, rate = read_wav(tmp_path / "s.wav", "keep")
    assert rate == 8000 and kept.shape == (50, 2)
    np.testing.assert_array_equal(kept.numpy(), stereo.astype(np.float32) / 32768)
    mono, _ = read_wav(tmp_path / "s.wav", "mono")
    np.testing.assert_allclose(mono[:, 0].numpy(), stereo.astype(np.float64).mean(axis=1) / 32768, atol=1e-7)
    floats = rng.uniform(-0.5, 0.5, size=40).astype(np.float32)
    wavfile.write(tmp_path / "f.wav", 16000, floats)
    np.testing.assert_array_equal(read_wav(tmp_path / "f.wav")[0][:, 0].numpy(), floats)
    u8 = np.array([0, 128, 255], dtype=np.uint8)
    wavfile.write(tmp_path / "u.wav", 8000, u8)
    np.testing.assert_array_equal(read_wav(tmp_path / "u.wav")[0][:, 0].numpy(), [-1.0, 0.0, 127 / 128])


def test_wav_through_the_datamodule_with_offset_and_length(tmp_path):
    samples = (np.sin(np.arange(100) / 5) * 16000).astype(np.int16)
    wavfile.write(tmp_path / "a.wav", 8000, samples)
    dm = SignalDataModule(path=str(tmp_path / "a.wav"), offset=10, length=40, normalize=False)
    assert dm.shape == (40,) and dm.out_channels == 1 and dm.sample_rate == 8000
    np.testing.assert_array_equal(dm.values[:, 0].numpy(), samples[10:50].astype(np.float32) / 32768)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: (p / "e.wav").write_bytes(b""), "file is empty"),
        (lambda p: (p / "e.wav").write_bytes(b"this is not audio at all"), "not a readable WAV"),
        (lambda p: wavfile.write(p / "e.wav", 8000, np.zeros(64, dtype=np.int16)), "constant"),
    ],
)
def test_bad_wav_files_are_refused(tmp_path, make, message):
    make(tmp_path)
    with pytest.raises(InputError, match=message):
        SignalDataModule(path=str(tmp_path / "e.wav")).setup("fit")


def test_bad_sources_are_refused(tmp_path):
    (tmp_path / "a.mp3").write_bytes(b"x")
    with pytest.raises(InputError, match="unsupported audio extension"):
        SignalDataModule(path=str(tmp_path / "a.mp3")).setup("fit")
    with pytest.raises(InputError, match="file not found"):
        SignalDataModule(path=str(tmp_path / "missing.wav")).setup("fit")
    with pytest.raises(InputError, match="Nyquist"):
        SignalDataModule(generator="sinusoids", length=64, frequencies=[40.0]).setup("fit")
    with pytest.raises(InputError, match="bandlimit"):
        SignalDataModule(length=64, bandlimit=40).setup("fit")
