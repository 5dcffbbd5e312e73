"""A codec's curves as one JSON file in CompressAI's layout: ``{"name", "description", "results": {metric: [...]}}``
holding the mean curve, and two keys CompressAI's readers pass over: ``per_image`` ({image: {metric: [...]}}) and
``settings`` (the codec's points and what it was run with).

The mean curve is CompressAI's (``compressai.utils.eval_model`` averages each metric over the images at one
setting): at each point, the mean over images of bpp, of PSNR (the mean of the dB values, not the PSNR of the
mean MSE), of MS-SSIM and of the seconds. A value that was not measured (MS-SSIM of a small crop, a codec that times
no decode) is written as null and read back as NaN; a metric with no value at all is left out of ``results``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Union

import numpy as np

from inr.errors import InputError
from inr.experiments.rd_curve import METRICS
from inr.io.files import atomic_write

Curve = dict[str, list[float]]  # metric -> one value per point


def mean_curve(per_image: dict[str, Curve]) -> Curve:
    """At each point, every metric's mean over the images (NaN where an image lacks it).

    Example:
        >>> mean_curve({"a": {"bpp": [0.1, 0.2], "psnr": [30.0, 34.0]}, "b": {"bpp": [0.3, 0.6], "psnr": [32.0, 36.0]}})
        {'bpp': [0.2, 0.4], 'psnr': [31.0, 35.0]}
    """
    curves = list(per_image.values())
    if not curves:
        raise InputError("no images: a mean curve needs at least one")
    lengths = {len(c[m]) for c in curves for m in c}
    if len(lengths) != 1:
        raise InputError(f"curves of different numbers of points {sorted(lengths)}: a mean needs the same settings")
    return {m: [float(x) for x in np.mean([c[m] for c in curves], axis=0)] for m in curves[0]}


def document(name: str, description: str, per_image: dict[str, Curve], settings: dict[str, Any]) -> dict[str, Any]:
    """The JSON object of one codec: CompressAI's three keys, then ``per_image`` and ``settings``."""
    mean = mean_curve(per_image)
    results = {m: mean[m] for m in METRICS if m in mean and not all(math.isnan(x) for x in mean[m])}
    return {"name": name, "description": description, "results": results, "per_image": per_image, "settings": settings}


def _nulls(value: Any) -> Any:
    """NaN and ±∞ as null: JSON has no such numbers (``json.dumps`` would write a non-standard ``NaN``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _nulls(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nulls(v) for v in value]
    return value


def _nans(value: Any) -> Any:
    if value is None:
        return math.nan
    if isinstance(value, dict):
        return {k: _nans(v) if k in METRICS or isinstance(v, dict) else v for k, v in value.items()}
    if isinstance(value, list):
        return [_nans(v) for v in value]
    return value


def write(path: Union[str, Path], doc: dict[str, Any]) -> None:
    """``doc`` to ``path`` as indented standard JSON, whole or not at all."""
    with atomic_write(path, "w") as f:
        json.dump(_nulls(doc), f, indent=2, allow_nan=False)
        f.write("\n")


def read(path: Union[str, Path]) -> dict[str, Any]:
    """A codec's file (this layout, or CompressAI's own without ``per_image``), its nulls as NaN; one line when
    it is not one."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable JSON file ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict) or not {"bpp", "psnr"} <= set(doc["results"]):
        raise InputError(f"{path}: not a rate–distortion file (CompressAI's layout: results with bpp and psnr)")
    doc["results"] = _nans(doc["results"])
    doc["per_image"] = {k: _nans(v) for k, v in doc.get("per_image", {}).items()}
    return doc
