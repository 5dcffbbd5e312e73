"""Tasks: LightningModules that fit a field to a target; each a small subclass of ``INRModule``."""

from inr.tasks.base import INRModule, NetworkFactory
from inr.tasks.conv import ConvFitting
from inr.tasks.image import ImageFitting
from inr.tasks.inverse import InverseFitting
from inr.tasks.meta import MetaLearning
from inr.tasks.radiance import RadianceFieldFitting
from inr.tasks.shape import ShapeFitting
from inr.tasks.signal import SignalFitting
from inr.tasks.video import VideoFitting
from inr.tasks.volume import VolumeFitting

__all__ = [
    "INRModule",
    "NetworkFactory",
    "ImageFitting",
    "ConvFitting",
    "InverseFitting",
    "MetaLearning",
    "RadianceFieldFitting",
    "ShapeFitting",
    "SignalFitting",
    "VolumeFitting",
    "VideoFitting",
]
