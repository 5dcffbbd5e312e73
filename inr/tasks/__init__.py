"""Tasks: LightningModules that fit a field to a target; each a small subclass of ``INRModule``."""
from inr.tasks.base import INRModule, NetworkFactory
from inr.tasks.conv import ConvFitting
from inr.tasks.image import ImageFitting

__all__ = ["INRModule", "NetworkFactory", "ImageFitting", "ConvFitting"]
