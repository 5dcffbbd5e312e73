"""Sizes that would not fit are refused with the estimate before anything is allocated: the model (sized on
the meta device), CT operators, clips, checkpoints that expand beyond their file, renders."""

import resource

import pytest


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--model.init_args.network.init_args.width", "10000000"], "model ("),
        (["--model.init_args.encoder.init_args.num_features", "100000000"], "model ("),
    ],
)
def test_a_model_larger_than_memory_is_refused_before_it_is_built(tmp_path, run_cli, kit, extra, expected):
    before = peak_rss_bytes()
    outcome = run_cli(kit.tiny(tmp_path, *extra))
    assert outcome.code == 2 and len(outcome.errors) == 1, outcome.stderr[-2000:]
    assert expected in outcome.errors[0] and "parameters" in outcome.errors[0] and "GiB" in outcome.errors[0]
    assert peak_rss_bytes() - before < 2**28  # nothing of the 10¹⁴ weights or 10⁸ features was allocated
    assert kit.files_under(tmp_path) == []
