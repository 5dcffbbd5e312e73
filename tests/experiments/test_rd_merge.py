"""python -m inr.experiments.rd_merge: runs split by image give the whole run's documents and table."""

import imageio.v3 as iio
import pytest

from inr.experiments.rd import main as rd_main
from inr.experiments.rd_merge import main
from inr.experiments.rd_results import read, write
from inr.resources import DATA_DIR


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    """The whole run on two crops, and the same run split in two halves (one crop each)."""
    root = tmp_path_factory.mktemp("rd")
    astronaut = iio.imread(DATA_DIR / "astronaut.png")[:, :, :3]
    for name, crop in (("a.png", astronaut[100:164, 150:214]), ("b.png", astronaut[300:364, 200:264])):
        (root / name[0]).mkdir()
        iio.imwrite(root / name[0] / name, crop)
    common = ["--crop", "48", "--codecs", "jpeg,webp", "--anchor", "jpeg"]
    rd_main(["--images", str(root / "a"), str(root / "b"), *common, "--out", str(root / "whole")])
    for half in ("a", "b"):
        rd_main(["--images", str(root / half), *common, "--out", str(root / f"part_{half}")])
    return root


def test_the_merged_halves_are_the_whole_run(parts, capsys):
    out = parts / "merged"
    main([str(parts / "part_a"), str(parts / "part_b"), "--anchor", "jpeg", "--out", str(out)])
    for codec in ("jpeg", "webp"):
        whole, merged = read(parts / "whole" / f"{codec}.json"), read(out / f"{codec}.json")
        assert set(merged["per_image"]) == {"a.png", "b.png"}
        assert merged["description"] == whole["description"]  # "mean over 2 images", not a part's 1
        for m in ("bpp", "psnr"):
            assert merged["results"][m] == pytest.approx(whole["results"][m])
    table = (out / "bd.md").read_text()
    whole_row = next(line for line in (parts / "whole" / "bd.md").read_text().splitlines() if line.startswith("| webp"))
    merged_row = next(line for line in table.splitlines() if line.startswith("| webp"))
    assert whole_row.split("|")[2:6] == merged_row.split("|")[2:6]  # the four BD cells
    assert table in capsys.readouterr().out


def test_overlapping_parts_that_disagree_and_missing_images_are_one_line(parts, tmp_path, capsys):
    doc = read(parts / "part_a" / "webp.json")
    doc["per_image"]["a.png"]["psnr"] = [p + 1 for p in doc["per_image"]["a.png"]["psnr"]]
    (tmp_path / "bad").mkdir()
    write(tmp_path / "bad" / "webp.json", doc)
    for args, message in (
        ([str(parts / "part_a"), str(tmp_path / "bad")], "webp: image a.png is in two parts with different results"),
        ([str(parts / "part_a"), str(tmp_path / "none")], "no rate–distortion JSON files"),
    ):
        with pytest.raises(SystemExit) as stop:
            main([*args, "--anchor", "jpeg", "--out", str(tmp_path / "out")])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and message in err and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "out").exists()
    # a codec measured on fewer images than the anchor
    (tmp_path / "few").mkdir()
    write(tmp_path / "few" / "jpeg.json", read(parts / "whole" / "jpeg.json"))
    with pytest.raises(SystemExit):
        main([str(tmp_path / "few"), str(parts / "part_a"), "--anchor", "jpeg", "--out", str(tmp_path / "out")])
    assert "webp: no results for b.png" in capsys.readouterr().err
