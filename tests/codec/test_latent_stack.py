"""Stacked members of the latent codec: K images at their own λ trained as one run are K independent trainings (the
batched model's pixels and bits against each member's own, the trained parameters against ``fit_latents`` of each,
float32), and each member's file is a latent file that decodes to its pixels; what cannot be stacked is one line."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from inr.codec.latent_coding import decode_latent_file
from inr.codec.latent_encode import encode_latent_image, encode_latent_images
from inr.codec.latent_fit import Preset, fit_latents, rate_bits
from inr.codec.latent_model import LatentImage, Spec
from inr.codec.latent_stack import StackedLatents, fit_latents_stacked
from inr.errors import InputError

# soft rounding around noise for 4 steps, then the true rounding for 4: both phases of the schedule
TWO_PHASES = Preset("two-phases", 8, 6, 5, hard_fraction=0.5)


@pytest.fixture(scope="module")
def pair(crop):
    """Two 24×20 images of one size: the crop and its colours reversed."""
    image = torch.from_numpy(crop.astype(np.float32) / 255.0)
    return [image, image.flip(-1)]


def members(spec: Spec, seeds) -> list[LatentImage]:
    out = []
    for seed in seeds:
        torch.manual_seed(seed)
        model = LatentImage(spec)
        with torch.no_grad():  # latents the synthesis and the entropy model read as non-trivial
            for y in model.latents:
                y.copy_(torch.randn(y.shape) * 0.3)
        out.append(model)
    return out


def test_the_stacked_model_gives_each_members_pixels_and_bits():
    spec = Spec(13, 10, 3, 3, 6, 5)
    models = members(spec, (3, 4, 5))
    stack = StackedLatents(models)
    latents = [16 * y for y in stack.latents]
    pixels, rates = stack.image(latents), stack.rate_bits(latents)
    for k, m in enumerate(models):
        own = [16 * y for y in m.latents]
        torch.testing.assert_close(pixels[k], m.image(own), atol=1e-5, rtol=0)
        torch.testing.assert_close(rates[k], rate_bits(m, own), atol=1e-3, rtol=1e-6)
    # and the tensors go back where they came from
    fresh = members(spec, (7, 8, 9))
    stack.copy_into(fresh)
    for got, want in zip(fresh, models):
        for a, b in zip(got.state_dict().values(), want.state_dict().values()):
            assert torch.equal(a, b)


def test_a_stacked_fit_is_each_members_own_fit(pair):
    lams, seeds = (0.003, 0.02), (0, 5)
    together = fit_latents_stacked(pair, lams, TWO_PHASES, levels=3, seeds=seeds, device="cpu")
    for image, lam, seed, got in zip(pair, lams, seeds, together):
        alone = fit_latents(image, lam, TWO_PHASES, levels=3, seed=seed, device="cpu")
        for name, want in alone.state_dict().items():
            # 8 Adam steps from the same draw and the same noise: float32 rounding of batched products apart
            torch.testing.assert_close(got.state_dict()[name], want, atol=2e-5, rtol=1e-4, msg=name)
    # a member fitted from another seed is elsewhere: the comparison above can fail
    other = fit_latents(pair[0], lams[0], TWO_PHASES, levels=3, seed=1, device="cpu")
    assert not torch.allclose(other.latents[0], together[0].latents[0], atol=1e-3)


def test_each_stacked_member_is_a_file_of_its_own(pair):
    preset = Preset("tiny", 40, 8, 8)
    lams = (1e-3, 3e-2)
    coded = encode_latent_images([pair[0], pair[0]], lams, preset)
    for c, lam in zip(coded, lams):
        assert c.lam == lam and np.array_equal(decode_latent_file(c.data), c.pixels) and c.seconds > 0
    assert coded[1].bpp < coded[0].bpp  # the larger λ, the smaller file
    alone = encode_latent_image(pair[0], lams[0], preset)
    assert coded[0].psnr == pytest.approx(alone.psnr, abs=0.05) and coded[0].bpp == pytest.approx(alone.bpp, rel=0.02)


@pytest.mark.parametrize(
    "images, lams, message",
    [
        ("two", (1e-3,), r"2 image\(s\) and 1 λ.s"),
        ("two", (1e-3, 0.0), "every λ must be > 0"),
        ("sizes", (1e-3, 1e-3), "images of one size only, got 20×24×3 and 24×20×3"),
    ],
)
def test_what_cannot_be_stacked_is_one_line(pair, images, lams, message):
    given = pair if images == "two" else [pair[0], pair[0].transpose(0, 1)]
    with pytest.raises(InputError, match=message):
        fit_latents_stacked(given, lams, TWO_PHASES, levels=3)
