"""Packaging beyond what pyproject.toml can say: ``configs/`` and ``data/`` ship inside the wheel.

The two folders stay at the repository root (the project's layout), and are mapped into the package as
``inr/share/configs`` and ``inr/share/data`` so that an installed package resolves a bare config name and
the sample images from any directory (``inr.resources``). Everything else is in pyproject.toml.
"""
from setuptools import find_packages, setup

SHIPPED = {"inr.share.configs": "configs", "inr.share.data": "data"}

setup(
    packages=[*find_packages(include=["inr", "inr.*"]), *SHIPPED],
    package_dir=SHIPPED,
    package_data={"inr.share.configs": ["*.yaml", "*/*.yaml"], "inr.share.data": ["*.png", "README.md"]},
)
