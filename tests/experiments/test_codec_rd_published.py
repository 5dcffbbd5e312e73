"""The rate–distortion results published in docs/codec_rd/: each folder's bd.md is what its JSONs give
(``rd_report.bd_table``, recomputed), and docs/codec.md quotes those BD-rates."""

from pathlib import Path

import pytest

from inr.experiments.rd_report import bd_table
from inr.experiments.rd_results import read

DOCS = Path(__file__).resolve().parents[2] / "docs"
RUNS = sorted(p for p in (DOCS / "codec_rd").iterdir() if p.is_dir())


@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_each_published_table_is_what_its_jsons_give(run):
    docs = {p.stem: read(p) for p in sorted(run.glob("*.json"))}
    table = bd_table({"avif": docs.pop("avif"), **docs}, "avif")
    published = (run / "bd.md").read_text()
    rows = lambda text: sorted(line for line in text.splitlines() if line.startswith("| ") and "anchor" not in line)  # noqa: E731
    assert rows(table) == rows(published)


@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_the_page_quotes_the_latent_codecs_bd_rates(run):
    line = next(line for line in (run / "bd.md").read_text().splitlines() if line.startswith("| latents |"))
    per_image, mean_curve = (cell.strip().replace("-", "−") for cell in line.split("|")[2:4])
    page = (DOCS / "codec.md").read_text().replace("**", "")
    assert f"{per_image} | {mean_curve}" in page or f"{per_image} / {mean_curve}" in page
