"""Every config a doc page quotes a figure for runs the settings the page says: each Markdown table of docs/*.md and
README.md with a ``config`` column and a settings column (grid, network, σ, steps) names configs (``image.yaml``, or ``image.yaml`` + ``ntk.yaml`` merged in
order) whose grid, network, σ and steps are read from the YAML files and compared with the table's cells, never
restated by hand."""

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
CHECKED = ("grid", "network", "σ", "steps")


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """The Markdown tables of ``text``: (header cells, rows of cells), the separator row left out."""
    found, block = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif block:
            if len(block) > 2:
                found.append((block[0], block[2:]))
            block = []
    return found


def config_rows() -> list[tuple[str, dict[str, str]]]:
    rows = []
    for page in PAGES:
        for header, body in tables(page.read_text()):
            if "config" in header and any(c in header for c in CHECKED):
                rows += [(f"{page.name}: {row[header.index('config')]}", dict(zip(header, row))) for row in body]
    return rows


def merged(names: list[str]) -> dict:
    """The configs merged left to right (a later file's keys replace an earlier one's, mapping by mapping)."""

    def merge(a: dict, b: dict) -> dict:
        out = dict(a)
        for key, value in b.items():
            out[key] = merge(out[key], value) if isinstance(out.get(key), dict) and isinstance(value, dict) else value
        return out

    config: dict = {}
    for name in names:
        path = ROOT / "configs" / name
        assert path.is_file(), f"{name}: no such config"
        config = merge(config, yaml.safe_load(path.read_text()))
    return config


def args(config: dict, *keys: str) -> dict:
    node = config
    for key in keys:
        node = node.get(key) or {}
    return node.get("init_args", {}) if isinstance(node, dict) else {}


def problems(cells: dict[str, str]) -> list[str]:
    """What in a table row differs from its configs."""
    names = re.findall(r"`([\w/.-]+\.yaml)`", cells["config"])
    assert names, f"{cells['config']}: a config cell names its configs in backticks"
    config = merged(names)
    data, network = args(config, "data"), args(config, "model", "init_args", "network")
    encoder = args(config, "model", "init_args", "encoder")
    wrong = []
    if grid := cells.get("grid"):
        side = re.match(r"(\d+)([²³])", grid)
        assert side, f"{grid}: a grid cell starts with N² or N³"
        if data.get("resolution") != int(side.group(1)):
            wrong.append(f"grid {grid}: data.resolution is {data.get('resolution')}")
        if side.group(2) == "³" and data.get("ndim", 3) != 3:
            wrong.append(f"grid {grid}: data.ndim is {data.get('ndim')}")
        if (angles := re.search(r"(\d+) angles", grid)) and data.get("angles") != int(angles.group(1)):
            wrong.append(f"grid {grid}: data.angles is {data.get('angles')}")
        if (low := re.search(r"from (\d+)²", grid)) and data.get("factor") != int(side.group(1)) // int(low.group(1)):
            wrong.append(f"grid {grid}: data.factor is {data.get('factor')}")
        if (keep := re.search(r"(\d+) % of the pixels", grid)) and round(100 * data.get("keep", 0)) != int(keep.group(1)):
            wrong.append(f"grid {grid}: data.keep is {data.get('keep')}")
    if net := cells.get("network"):
        sizes = re.match(r"(\d+)×(\d+)", net)
        assert sizes, f"{net}: a network cell starts with depth×width"
        if (network.get("depth", 3), network.get("width", 256)) != (int(sizes.group(1)), int(sizes.group(2))):
            wrong.append(f"network {net}: the config's is {network.get('depth', 3)}×{network.get('width', 256)}")
    if sigma := cells.get("σ"):
        digits = len(sigma.split(".")[1]) if "." in sigma else 0
        if round(float(encoder.get("sigma", "nan")), digits) != float(sigma):
            wrong.append(f"σ {sigma}: the config's encoder.sigma is {encoder.get('sigma')}")
    if steps := cells.get("steps"):
        if config.get("trainer", {}).get("max_steps") != int(steps):
            wrong.append(f"steps {steps}: trainer.max_steps is {config.get('trainer', {}).get('max_steps')}")
    return wrong


ROWS = config_rows()


def test_the_pages_quote_configs_in_tables():
    """The default command's table (docs/results.md) and the inverse configs' (docs/inverse.md) are among them."""
    quoted = {name for name, _ in ROWS}
    assert "results.md: `image.yaml`" in quoted and "inverse.md: `mri.yaml`" in quoted
    assert all(any(c in cells for c in CHECKED) for _, cells in ROWS)


@pytest.mark.parametrize("name, cells", ROWS, ids=[name for name, _ in ROWS])
def test_each_quoted_config_runs_what_its_page_says(name, cells):
    assert problems(cells) == [], name


def test_a_page_that_restates_a_setting_wrongly_is_caught():
    """docs/inverse.md once said mri.yaml runs the paper's 3×256 network; the config's is 3×128."""
    wrong = problems({"config": "`mri.yaml`", "grid": "32³", "network": "3×256", "σ": "2", "steps": "1000"})
    assert wrong == ["network 3×256: the config's is 3×128", "steps 1000: trainer.max_steps is 500"]
    assert problems({"config": "`inpaint.yaml`", "σ": "4.78", "grid": "128², 30 % of the pixels"}) == [
        "grid 128², 30 % of the pixels: data.keep is 0.2",
        "σ 4.78: the config's encoder.sigma is 4.7702783519995515",
    ]
