"""Metrics whose state lives in one process: torchmetrics gathers a metric's state over the ranks when it computes,
unless its ``distributed_available_fn`` says there are none. A rank's own members (``inr.tasks.members``), a row
trained on rank 0 alone (``inr.experiments.ranks``) and a meta-learning run's test signals hold such state."""


def not_distributed() -> bool:
    """torchmetrics' ``distributed_available_fn`` for a metric computed in one process only.

    Example:
        >>> import torch, torchmetrics
        >>> metric = torchmetrics.MeanMetric()
        >>> metric.distributed_available_fn = not_distributed  # this process's updates alone, under any launcher
        >>> metric.update(torch.tensor([1.0, 3.0]))
        >>> float(metric.compute())
        2.0
    """
    return False
