"""A subclass of a task or DataModule adds one argument and takes every other through ``**kwargs``: the
config parser (jsonargparse, as LightningCLI uses it) offers the parent's arguments with their defaults and
refuses unknown ones, and ``save_hyperparameters`` records the subclass's argument beside the parent's."""

from typing import Any

import pytest
from jsonargparse import ArgumentParser

from inr.data.image import ImageDataModule
from inr.data.module import GridDataModule
from inr.tasks.base import INRModule
from inr.tasks.image import ImageFitting
from inr.tasks.volume import VolumeFitting


class WeightedImageFitting(ImageFitting):
    def __init__(self, weight: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.weight = weight


class MarginImageData(ImageDataModule):
    def __init__(self, margin: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.margin = margin


def parse(base: type, class_path: str, init_args: dict) -> Any:
    parser = ArgumentParser(exit_on_error=False)
    parser.add_argument("--obj", type=base)
    config = parser.parse_args(["--obj", f'{{"class_path": "{class_path}", "init_args": {init_args!r}}}'.replace("'", '"')])
    return config.obj.init_args, parser.instantiate(config).obj


def test_a_task_subclass_declares_one_argument_and_inherits_the_rest():
    args, model = parse(INRModule, f"{__name__}.WeightedImageFitting", {"weight": 2.5, "render_chunk": 128})
    assert args.weight == 2.5 and args.render_chunk == 128 and args.out_channels == 3 and args.cache_encoding is True
    assert model.weight == 2.5 and model.render_chunk == 128
    assert model.hparams["weight"] == 2.5 and model.hparams["render_chunk"] == 128


def test_a_data_subclass_declares_one_argument_and_inherits_the_rest():
    args, data = parse(GridDataModule, f"{__name__}.MarginImageData", {"margin": 3, "resolution": 16, "batch_size": 64})
    assert (args.margin, args.resolution, args.batch_size, args.split, args.seed) == (3, 16, 64, "every_other", 0)
    assert data.margin == 3 and data.batch_size == 64 and data.shape == (16, 16)


def test_an_argument_no_class_in_the_chain_takes_is_refused():
    with pytest.raises(Exception, match="not accepted|unrecognized|does not accept|zzz"):
        parse(GridDataModule, f"{__name__}.MarginImageData", {"zzz": 1})


def test_the_framework_subclasses_keep_their_own_defaults():
    """VolumeFitting's single output channel, ImageDataModule's every_other split: stated once, in the subclass."""
    args, model = parse(INRModule, "inr.tasks.VolumeFitting", {"render_chunk": 256})
    assert args.out_channels == 1 and args.render_chunk == 256 and isinstance(model, VolumeFitting)
    assert model.hparams["out_channels"] == 1 and model.hparams["render_chunk"] == 256
