"""The README's headline table is the published run's: every cell of it recomputed from docs/table1/results.json
(the per-image, per-seed rows of ``python -m inr.experiments.table1 --kind natural --seeds 3``), to the digit shown."""

import re
from pathlib import Path

from inr.experiments.results import load_results
from inr.experiments.runner import summarise

ROOT = Path(__file__).resolve().parents[1]
SHOWN = ("no mapping", "basic", "positional features", "Gaussian features", "bilinear interpolation", "bicubic interpolation")
NAMES = dict(zip(SHOWN, ("none", "basic", "positional", "gaussian", "bilinear", "bicubic")))  # README row -> method


def headline_rows() -> dict[str, list[str]]:
    text = (ROOT / "README.md").read_text().split("## Headline", 1)[1]
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] in NAMES:
            rows[NAMES[cells[0]]] = cells[1:]
    return rows


def test_the_readme_headline_is_the_published_results():
    results = load_results(ROOT / "docs" / "table1" / "results.json")
    rows = [dict(r) for r in results.rows]
    assert {(r["signal"], r["seed"]) for r in rows if r["method"] == "gaussian"} == {
        (s, seed) for s in {r["signal"] for r in rows} for seed in (0, 1, 2)
    }  # 8 photographs × 3 seeds, each row its own
    summary = {s["method"]: s for s in summarise(rows, ["psnr", "ssim"])}
    shown = headline_rows()
    assert set(shown) == set(NAMES.values())
    for method, (psnr, ssim, _paper) in shown.items():
        mean, std = (float(x) for x in re.findall(r"[\d.]+", psnr))
        assert (mean, std) == (round(summary[method]["psnr"], 2), round(summary[method]["psnr_std"], 2)), method
        assert float(ssim) == round(summary[method]["ssim"], 3), method
