"""examples/first_steps.py traces the comparison's own network: its step-0 output is the row's network's, the data
bias starts the output's mean near the truth's, and the dead share is a fraction of the last hidden layer."""

import torch

from examples.first_steps import main, trace
from inr.experiments.comparison import Member, context, parse
from inr.experiments.inverse import Inverse


def test_the_trace_starts_from_the_rows_network_and_the_data_bias_starts_at_the_mean(capsys):
    out = main(["--task", "mri", "--resolution", "8", "--seed", "1", "--steps", "3"])
    init, data = out["init"], out["data"]
    assert len(init["trail"]) == 4 and all(0.0 <= dead <= 1.0 for _, dead in init["trail"] + data["trail"])
    c = Inverse()
    p = c.protocol(parse(c, ["--task", "mri", "--resolution", "8", "--seed", "1", "--init-seed", "0"]))
    ctx = context(c, p, "positional", Member(None, 1))
    dm, model = ctx.data, c.model(ctx)
    with torch.no_grad():
        start = float(model.network(model.encoder(dm.grid.coords(torch.arange(dm.grid.numel)))).mean())
    assert init["trail"][0][0] == start  # the same draw as the comparison's row
    truth = init["truth_mean"]
    assert abs(data["trail"][0][0] - truth) < abs(init["trail"][0][0] - truth)
    assert "output bias data (the truth's mean" in capsys.readouterr().out
    assert trace("mri", 8, 1, None, "gaussian", 0, "init")["trail"][0][0] > 0
