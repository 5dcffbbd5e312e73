"""Data: regular grids on [0,1)^d and the DataModules that serve targets sampled on them."""
from inr.data.grid import SPLITS, Grid, grid_coordinates, split_indices, subgrid_index
from inr.data.image import ImageDataModule, read_image
from inr.data.module import GridDataModule, IndexBatches

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
]
