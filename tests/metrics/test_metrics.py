"""The training metrics that never wait for the device give torchmetrics' values."""

import torch
from torchmetrics.classification import BinaryJaccardIndex
from torchmetrics.image import PeakSignalNoiseRatio

from inr.metrics import PSNR, IoU


def test_psnr_equals_torchmetrics_over_several_updates():
    gen = torch.Generator().manual_seed(0)
    ours, theirs = PSNR(data_range=1.0), PeakSignalNoiseRatio(data_range=1.0)
    for n in (100, 37, 512):
        p, t = torch.rand(n, 3, generator=gen), torch.rand(n, 3, generator=gen)
        ours.update(p, t)
        theirs.update(p, t)
    assert ours.total.item() == theirs.total.item() == 3 * (100 + 37 + 512)
    torch.testing.assert_close(ours.compute(), theirs.compute(), rtol=1e-6, atol=1e-6)


def test_psnr_keeps_the_per_dimension_form():
    p, t = torch.rand(4, 3, 8, 8), torch.rand(4, 3, 8, 8)
    ours, theirs = PSNR(data_range=1.0, dim=(1, 2, 3)), PeakSignalNoiseRatio(data_range=1.0, dim=(1, 2, 3))
    torch.testing.assert_close(ours(p, t), theirs(p, t))


def test_iou_of_probabilities_equals_torchmetrics():
    gen = torch.Generator().manual_seed(1)
    ours, theirs = IoU(threshold=0.5, validate_args=False), BinaryJaccardIndex(threshold=0.5)
    for dtype in (torch.float32, torch.long, torch.bool):
        p, t = torch.rand(1000, 1, generator=gen), (torch.rand(1000, 1, generator=gen) > 0.6).to(dtype)
        p[:10] = 0.5  # at the threshold: label 0 in both (p > threshold)
        ours.update(p, t)
        theirs.update(p, t)
    assert torch.equal(ours.confmat, theirs.confmat)  # the same counts, cell by cell
    assert int(ours.confmat.sum()) == 3000
    torch.testing.assert_close(ours.compute(), theirs.compute())


def test_iou_with_checks_or_ignore_index_runs_torchmetrics_own_update():
    p, t = torch.tensor([0.9, 0.2, 0.7, 0.1]), torch.tensor([1, 0, -1, 1])
    ours, theirs = IoU(threshold=0.5, ignore_index=-1), BinaryJaccardIndex(threshold=0.5, ignore_index=-1)
    ours.update(p, t)
    theirs.update(p, t)
    assert torch.equal(ours.confmat, theirs.confmat) and int(ours.confmat.sum()) == 3  # the ignored one left out
