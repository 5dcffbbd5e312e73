"""Data: regular grids on [0,1)^d and the DataModules that serve targets sampled on them."""

from inr.data.degraded import InpaintingDataModule, SimulatedMeasurementDataModule, SuperResolutionDataModule
from inr.data.grid import SPLITS, Grid, grid_coordinates, split_indices, subgrid_index
from inr.data.image import ImageDataModule, read_image
from inr.data.kspace import MRIDataModule
from inr.data.measurements import MeasurementDataModule
from inr.data.mesh import MeshDataModule, read_mesh_file
from inr.data.module import GridDataModule, IndexBatches
from inr.data.phantoms import shepp_logan_phantom
from inr.data.rays import RaysDataModule
from inr.data.signal import SignalDataModule, power_law_signal, read_wav, sum_of_sinusoids
from inr.data.signal_sets import SignalSet
from inr.data.text import TextImageDataModule, render_text_image, save_text_image
from inr.data.tomography import CTDataModule
from inr.data.video import VideoDataModule, read_gif, read_sequence
from inr.data.volume import VolumeDataModule, read_volume_array

__all__ = [
    "Grid",
    "grid_coordinates",
    "split_indices",
    "subgrid_index",
    "SPLITS",
    "GridDataModule",
    "IndexBatches",
    "ImageDataModule",
    "read_image",
    "SignalDataModule",
    "SignalSet",
    "read_wav",
    "sum_of_sinusoids",
    "power_law_signal",
    "VolumeDataModule",
    "read_volume_array",
    "VideoDataModule",
    "read_gif",
    "read_sequence",
    "TextImageDataModule",
    "MeasurementDataModule",
    "CTDataModule",
    "MRIDataModule",
    "InpaintingDataModule",
    "SuperResolutionDataModule",
    "SimulatedMeasurementDataModule",
    "shepp_logan_phantom",
    "RaysDataModule",
    "MeshDataModule",
    "read_mesh_file",
    "render_text_image",
    "save_text_image",
]
