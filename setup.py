"""Packaging beyond what pyproject.toml can say: ``configs/`` and ``data/`` ship inside the wheel.

The two folders stay at the repository root (the project's layout), and are mapped into the package as
``inr/share/configs`` and ``inr/share/data`` so that an installed package resolves a bare config name and
the sample images from any directory (``inr.resources``). Everything else is in pyproject.toml.
"""

from pathlib import Path

from setuptools import find_packages, setup

SHIPPED = {"inr.share.configs": "configs", "inr.share.data": "data"}
# each folder under configs/ (methods/, methods/text/ ...) is a package of data files to setuptools
CONFIGS = Path(__file__).parent / "configs"
CONFIG_FOLDERS = sorted("inr.share.configs." + ".".join(p.relative_to(CONFIGS).parts) for p in CONFIGS.rglob("*") if p.is_dir())

setup(
    packages=[*find_packages(include=["inr", "inr.*"]), *SHIPPED, *CONFIG_FOLDERS],
    package_dir=SHIPPED,
    package_data={
        "inr.share.configs": ["*.yaml"],
        **{name: ["*.yaml"] for name in CONFIG_FOLDERS},
        "inr.share.data": ["*.png", "*.obj", "README.md"],
    },
)
