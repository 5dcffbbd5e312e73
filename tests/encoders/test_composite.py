"""Composite encoding: each part sees exactly its columns, outputs concatenate, bad layouts refused."""

import pytest
import torch

from inr.encoders import BasicEncoding, CompositeEncoding, Encoder, EncoderPart, HashGridEncoding, IdentityEncoding, NeRFEncoding
from inr.errors import InputError
from inr.run.cli import cli_main


class Spy(Encoder):
    """Records what it was given and returns it times a constant, so its output is recognisable."""

    def __init__(self, in_dim, factor):
        super().__init__()
        self.in_dim, self.out_dim, self.factor, self.seen = in_dim, in_dim, factor, None

    def forward(self, v):
        self.seen = v.clone()
        return v * self.factor


def test_each_part_sees_exactly_its_dims_in_order():
    a, b, c = Spy(1, 10.0), Spy(2, 100.0), Spy(2, 1000.0)
    enc = CompositeEncoding([EncoderPart(a, [2]), EncoderPart(b, [0, 3]), {"encoder": c, "dims": [3, 1]}])
    v = torch.rand(9, 4)
    out = enc(v)
    assert enc.in_dim == 4 and enc.out_dim == 5 == out.shape[1]
    assert torch.equal(a.seen, v[:, [2]]) and torch.equal(b.seen, v[:, [0, 3]]) and torch.equal(c.seen, v[:, [3, 1]])
    assert torch.equal(out, torch.cat([10 * v[:, [2]], 100 * v[:, [0, 3]], 1000 * v[:, [3, 1]]], dim=1))


def test_time_and_space_with_trainable_parts():
    time_enc, space_enc = NeRFEncoding(in_dim=1, num_frequencies=4), HashGridEncoding(in_dim=2, n_levels=4, log2_hashmap_size=8)
    enc = CompositeEncoding([EncoderPart(time_enc, [0]), EncoderPart(space_enc, [1, 2])])
    v = torch.rand(16, 3)
    out = enc(v)
    assert enc.out_dim == 9 + 8 == out.shape[1]
    torch.testing.assert_close(out, torch.cat([time_enc(v[:, :1]), space_enc(v[:, 1:])], 1), atol=0, rtol=0)
    out.sum().backward()  # the hash table is a parameter of the composite and receives gradients
    assert any(p is space_enc.params for p in enc.parameters()) and space_enc.params.grad.abs().sum() > 0


def test_bad_layouts_are_refused_with_the_part_named():
    with pytest.raises(InputError, match=r"parts\[1\].encoder .* in_dim 2 .* 1 dimensions"):
        CompositeEncoding([EncoderPart(IdentityEncoding(1), [0]), EncoderPart(IdentityEncoding(2), [1])])
    with pytest.raises(InputError, match="every dimension"):
        CompositeEncoding([EncoderPart(IdentityEncoding(1), [0]), EncoderPart(IdentityEncoding(1), [2])])  # dim 1 unused
    with pytest.raises(InputError, match="distinct"):
        CompositeEncoding([EncoderPart(IdentityEncoding(2), [0, 0])])
    with pytest.raises(InputError, match="empty"):
        CompositeEncoding([])
    with pytest.raises(ValueError, match=r"\(\.\.\., 2\)"):
        CompositeEncoding([EncoderPart(BasicEncoding(2), [0, 1])])(torch.rand(3, 3))


@pytest.mark.slow
def test_configured_from_yaml(tmp_path, capsys, tiny_flags):
    # a list of {encoder, dims} in YAML: NeRF on y, a hash grid on x, through the real command line
    overlay = tmp_path / "composite.yaml"
    overlay.write_text(
        "model:\n  init_args:\n    encoder:\n      class_path: inr.encoders.CompositeEncoding\n      init_args:\n        parts:\n"
        "          - encoder: {class_path: inr.encoders.NeRFEncoding, init_args: {in_dim: 1, num_frequencies: 3}}\n            dims: [0]\n"
        "          - encoder: {class_path: inr.encoders.HashGridEncoding, init_args: {in_dim: 1, n_levels: 2, log2_hashmap_size: 6}}\n            dims: [1]\n"
    )
    small = tiny_flags(("image.yaml", overlay), 16, width=16, steps=2, bar=False, callbacks="[]", save_dir=tmp_path)
    cli = cli_main([*small, "--trainer.default_root_dir", str(tmp_path)])
    enc = cli.model.encoder
    assert isinstance(enc, CompositeEncoding) and enc.dims == [[0], [1]] and enc.out_dim == 7 + 4
    assert isinstance(enc.encoders[1], HashGridEncoding) and "steps 2" in capsys.readouterr().out
