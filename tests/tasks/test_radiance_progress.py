"""Rendering a radiance field's views tells a command waiting on it how far it is (``inr.io.progress``): one line
over all the rays of the evaluation's held-out and training views, per chunk of rays, up to 100 %."""

import io
import re

import pytest

from inr.io.progress import reporting
from inr.run.cli import cli_main


@pytest.mark.slow
def test_the_evaluation_and_predicts_views_report_their_rays(tmp_path, tiny_nerf_args):
    cli = cli_main(tiny_nerf_args(tmp_path, "--model.init_args.render_chunk", "16"))
    model = cli.model
    rays = model.intrinsics.height * model.intrinsics.width  # 8 × 8
    stream = io.StringIO()
    with reporting("closing evaluation", stream=stream, interval=0.0):
        model.evaluate()
    found = [tuple(map(float, m)) for m in re.findall(r"closing evaluation: (\d+)% \((\d+) of (\d+)\)", stream.getvalue())]
    views = len(model.heldout_poses()) + min(model.eval_train_views, len(model.data.posed.train_views))
    assert found and {total for _, _, total in found} == {views * rays}  # one line over both sets of views
    done = [d for _, d, _ in found]
    assert done == sorted(done) and done[-1] == views * rays and len(done) == views * rays // 16  # chunk by chunk
    assert found[-1][0] == 100

    quiet = io.StringIO()
    with reporting("predict: rendering", stream=quiet, interval=3600.0):  # within the interval: nothing printed
        model.render_views(model.heldout_poses())
    assert quiet.getvalue() == ""
