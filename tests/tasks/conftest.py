"""Fixtures the meta-learning tests share."""

from collections.abc import Callable

import pytest

from inr.data.signal_sets import SignalSet


@pytest.fixture(scope="session")
def natural_signals() -> Callable[[], SignalSet]:
    """A fresh class of natural crops at 16², set up for fitting: 4 training signals (3 per step), 2 held out."""

    def make() -> SignalSet:
        dm = SignalSet(kind="natural", train_signals=4, test_signals=2, resolution=16, signals_per_step=3)
        dm.setup("fit")
        return dm

    return make
