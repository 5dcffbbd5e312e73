"""DeepinvOperator reads the grid from a physics that knows its image size: no ``field_shape`` to repeat, and a
repeated one that contradicts the physics is refused in one line."""

import pytest
import torch
from deepinv.physics import Blur, BlurFFT, CompressedSensing, Demosaicing, Downsampling, Inpainting, Tomography
from deepinv.physics.blur import gaussian_blur

from inr.operators import DeepinvOperator


def _sized():
    keep = (torch.rand(3, 9, 11, generator=torch.Generator().manual_seed(3)) < 0.5).float()
    return [
        ("inpainting", Inpainting(img_size=(3, 9, 11), mask=keep), (3, 9, 11)),
        ("downsampling", Downsampling(img_size=(1, 12, 10), factor=2, filter="bicubic"), (1, 12, 10)),
        ("compressed-sensing", CompressedSensing(m=20, img_size=(1, 6, 7)), (1, 6, 7)),
        ("blur-fft", BlurFFT(img_size=(1, 8, 8), filter=gaussian_blur(sigma=1.0)), (1, 8, 8)),
        ("demosaicing", Demosaicing(img_size=(3, 8, 6)), (3, 8, 6)),
        ("tomography", Tomography(angles=4, img_width=8, normalize=False), (1, 8, 8)),
    ]


@pytest.mark.parametrize("name,physics,shape", _sized(), ids=[s[0] for s in _sized()])
def test_the_grid_comes_from_the_physics(name, physics, shape):
    op = DeepinvOperator(physics)
    assert op.field_shape == shape[1:]
    x = torch.rand(*shape, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(op(x), physics.A(x[None])[0])  # the batch of one, measured as deepinv measures it
    assert DeepinvOperator(physics, field_shape=list(shape[1:])).field_shape == shape[1:]  # the same size, repeated


def test_a_field_shape_against_the_physics_is_refused_and_one_is_needed_where_the_physics_is_silent():
    physics = Inpainting(img_size=(1, 9, 11), mask=0.5)
    with pytest.raises(ValueError, match=r"field_shape \[11, 9\] differs from the \[9, 11\] that Inpainting was built for"):
        DeepinvOperator(physics, field_shape=(11, 9))
    blur = Blur(filter=gaussian_blur(sigma=1.0))  # a convolution reads any size
    with pytest.raises(ValueError, match="does not give its image size; set field_shape"):
        DeepinvOperator(blur)
    assert DeepinvOperator(blur, field_shape=(5, 6)).field_shape == (5, 6)
