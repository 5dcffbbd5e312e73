"""The decoder's count of a network's multiply-adds (``inr.codec.cost.Products``) is torch's ``FlopCounterMode``'s
(halved: a product counts 2 flops) for every network of the codec's table, on the CPU and on the meta device, and
counting leaves the global random state as it was."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from inr.codec.architecture import Architecture, codec_methods
from inr.codec.cost import META_ABOVE, macs_per_pixel


def flop_counter_macs(arch: Architecture, side: int, channels: int) -> int:
    encoder, network = arch.build(side, channels)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        network(encoder(torch.full((1, 2), 0.5)))
    return counter.get_total_flops() // 2


@pytest.mark.parametrize("method", codec_methods())
def test_the_count_is_torchs_flop_counters(method):
    for width, depth, side, channels in ((8, 2, 20, 3), (24, 3, 64, 1)):
        arch = Architecture(method, width, 4 if method == "bacon" else depth, 1, hash_levels=4, hash_log2=8)
        assert macs_per_pixel(arch, side, channels) == flop_counter_macs(arch, side, channels), arch.label()


@pytest.mark.parametrize("method", ["siren", "wire", "hashgrid"])
def test_a_network_past_the_meta_bound_counts_the_same(method):
    arch = Architecture(method, 640, 11)  # 640² · 11 > 2^22: built on the meta device (a hash grid: on the CPU)
    assert arch.width**2 * arch.depth > META_ABOVE
    assert macs_per_pixel(arch, 32, 3) == flop_counter_macs(arch, 32, 3)


def test_counting_leaves_the_global_random_state_alone():
    before = torch.random.get_rng_state()
    macs_per_pixel(Architecture("hashgrid", 8, 2, 5, hash_levels=2, hash_log2=7), 16, 3)
    assert torch.equal(torch.random.get_rng_state(), before)
