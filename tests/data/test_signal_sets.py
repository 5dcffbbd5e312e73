"""``SignalSet``: each class generated offline and reproducible, training and test signals disjoint (an overlap is
refused, by directory and by content), a user's directories for either side, batches that hold each signal's own
pixels or projections, the same draws on every rank, and one signal as the data of an ordinary fit."""

import shutil

import numpy as np
import pytest
import torch
from PIL import Image

from inr.data.grid import Grid
from inr.data.signal_classes import TEST_SEEDS, check_disjoint, ellipse_phantom, random_crops
from inr.data.signal_sets import SignalSet, stacked_columns
from inr.errors import InputError
from inr.geometry import torus_mesh
from inr.operators.tomography import ParallelBeamProjection, even_angles


def loaded(**kwargs) -> SignalSet:
    dm = SignalSet(**{"train_signals": 4, "test_signals": 2, "signals_per_step": 2, **kwargs})
    dm.setup("fit")
    return dm


@pytest.mark.parametrize(
    "kind, shape, channels", [("natural", (16, 16), 3), ("text", (16, 16), 3), ("ct", (16, 16), 1), ("shape", (8, 8, 8), 1)]
)
def test_every_class_is_generated_reproducibly_and_disjoint(kind, shape, channels):
    dm = loaded(kind=kind, resolution=shape[0])
    assert dm.shape == shape and dm.out_channels == channels and dm.targets == 4 and dm.test_count == 2
    assert 0.0 <= float(dm.values.min()) and float(dm.values.max()) <= 1.0
    again = loaded(kind=kind, resolution=shape[0])
    assert torch.equal(dm.values, again.values) and torch.equal(dm.test_values, again.test_values)
    train = [dm.signal_values(k, "train") for k in range(4)]
    test = [dm.signal_values(k, "test") for k in range(2)]
    assert all(not torch.equal(a, b) for a in train for b in test)
    assert all(float(s.std()) > 0 for s in train + test)  # no constant signal


def test_the_natural_classes_photographs_are_split_once():
    from inr.data.signal_classes import NATURAL_TEST, NATURAL_TRAIN

    assert not set(NATURAL_TRAIN) & set(NATURAL_TEST)


def test_crops_lie_inside_their_photograph():
    photo = torch.arange(40 * 50 * 3, dtype=torch.float32).reshape(40, 50, 3) / (40 * 50 * 3)
    crops = random_crops([photo], 5, 8, seed=1)
    assert crops.shape == (5, 8, 8, 3) and float(crops.min()) >= 0 and float(crops.max()) <= 1


def test_an_ellipse_phantom_is_a_seeded_draw():
    assert torch.equal(ellipse_phantom(16, 3), ellipse_phantom(16, 3))
    assert not torch.equal(ellipse_phantom(16, 3), ellipse_phantom(16, 4))


def test_the_values_hold_each_training_signal_in_its_own_columns():
    signals = torch.rand(3, 4, 5, 2)
    columns = stacked_columns(signals)  # (20, 6)
    for k in range(3):
        assert torch.equal(columns[:, 2 * k : 2 * k + 2], signals[k].reshape(20, 2))


def test_a_batch_holds_each_signals_own_pixels():
    dm = loaded(kind="text", resolution=16)
    batch = dm.batch(torch.tensor([3, 1]), "train", torch.device("cpu"))
    for j, k in enumerate([3, 1]):
        signal = dm.signal_values(k, "train").reshape(-1, 3)
        assert torch.equal(batch["targets"][j], signal[dm.train_index])
        assert torch.equal(batch["eval_targets"][j], signal[dm.test_index])
    assert torch.equal(batch["coords"], Grid(dm.shape).coords(dm.train_index))
    test = dm.batch(torch.tensor([1]), "test", torch.device("cpu"))
    assert torch.equal(test["targets"][0], dm.signal_values(1, "test").reshape(-1, 3)[dm.train_index])


def test_ct_batches_hold_each_phantoms_projections():
    dm = loaded(kind="ct", resolution=16, angles=5)
    operator = ParallelBeamProjection(even_angles(5), (16, 16))
    batch = dm.batch(torch.tensor([2]), "train", torch.device("cpu"))
    expected = operator(dm.signal_values(2, "train").movedim(-1, 0))
    assert torch.allclose(batch["targets"][0], expected, atol=1e-6)
    assert torch.equal(batch["eval_targets"][0], dm.signal_values(2, "train").reshape(-1, 1))  # the whole grid


def test_every_rank_draws_the_same_signals_and_adapts_its_share():
    dm = loaded(kind="text", resolution=16, signals_per_step=4, steps_per_epoch=3)
    draws = [b["index"] for b in dm.train_dataloader()]
    assert [len(d) for d in draws] == [4, 4, 4]
    again = [b["index"] for b in loaded(kind="text", resolution=16, signals_per_step=4, steps_per_epoch=3).train_dataloader()]
    assert all(torch.equal(a, b) for a, b in zip(draws, again))
    with pytest.raises(InputError, match="does not split evenly over 3 ranks"):
        dm.check_shardable(3)


def test_one_signal_as_the_data_of_a_fit():
    dm = loaded(kind="natural", resolution=16)
    single = dm.signal_data(1)
    single.setup("fit")
    assert torch.equal(single.values, dm.signal_values(1, "test").reshape(-1, 3)) and single.split == "every_other"
    ct = loaded(kind="ct", resolution=16)
    few = ct.signal_data(0, angles=4)
    few.setup("fit")
    assert few.measurements.shape[1] == 4 and torch.equal(few.values, ct.signal_values(0, "test").reshape(-1, 1))


def test_a_signal_seen_through_a_fraction_of_its_pixels():
    dm = loaded(kind="natural", resolution=32)
    masked = dm.signal_data(1, keep=0.25)
    masked.setup("fit")
    mask = masked.operator.mask
    # about a quarter of the 1024 pixels (a binomial draw: 4 σ is 0.054), the signal's own draw, the same every time
    assert abs(mask.float().mean().item() - 0.25) < 0.06
    assert torch.equal(dm.signal_data(1, keep=0.25).operator.mask, mask)
    assert not torch.equal(dm.signal_data(0, keep=0.25).operator.mask, mask)
    values = dm.signal_values(1, "test")  # (32, 32, 3)
    assert torch.equal(masked.measurements, values[mask].T) and torch.equal(masked.values, values.reshape(-1, 3))
    for keep, message in ((0.0, "keep must lie in"), (1.5, "keep must lie in")):
        with pytest.raises(InputError, match=message):
            dm.signal_data(0, keep=keep)
    with pytest.raises(InputError, match="CT signals are seen through their projections"):
        loaded(kind="ct", resolution=16).signal_data(0, keep=0.5)


def test_the_test_seeds_are_apart_from_the_training_seeds():
    dm = loaded(kind="ct", resolution=16, signal_seed=7)
    assert dm.train_names[0] == "phantom 7" and dm.test_names[0] == f"phantom {TEST_SEEDS + 7}"


# --- a user's directories ----------------------------------------------------------------------------------
def write_images(folder, seeds, size=24):
    folder.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        Image.fromarray((rng.random((size, size, 3)) * 255).astype(np.uint8)).save(folder / f"img{seed}.png")
    return folder


def test_directories_of_images_for_either_side(tmp_path):
    dm = loaded(
        kind="text",
        train=str(write_images(tmp_path / "a", [0, 1, 2])),
        test=str(write_images(tmp_path / "b", [3])),
        resolution=16,
    )
    assert dm.targets == 3 and dm.test_count == 1 and dm.train_names == ["img0.png", "img1.png", "img2.png"]
    natural = loaded(kind="natural", train=str(tmp_path / "a"), test=str(tmp_path / "b"), resolution=16, train_signals=5)
    assert natural.targets == 5  # crops drawn from the photographs


def test_ct_and_shape_directories(tmp_path):
    (tmp_path / "ct").mkdir()
    np.save(tmp_path / "ct" / "p.npy", ellipse_phantom(20, 1).numpy())
    ct = loaded(kind="ct", test=str(tmp_path / "ct"), resolution=16)
    assert ct.test_count == 1 and ct.test_names == ["p.npy"]
    (tmp_path / "shapes").mkdir()
    verts, faces = torus_mesh(1.0, 0.4, segments=32, sides=16)
    import trimesh

    trimesh.Trimesh(verts, faces).export(tmp_path / "shapes" / "torus.obj")
    volume = np.zeros((12, 12, 12), dtype=np.float32)
    volume[3:9, 3:9, 3:9] = 1
    np.save(tmp_path / "shapes" / "cube.npy", volume)
    shapes = loaded(kind="shape", test=str(tmp_path / "shapes"), resolution=8)
    assert shapes.test_names == ["cube.npy", "torus.obj"]
    cube = shapes.signal_values(0, "test")
    assert 0 < float(cube.mean()) < 1 and set(cube.unique().tolist()) == {0.0, 1.0}


def test_the_same_directory_on_both_sides_is_refused(tmp_path):
    folder = str(write_images(tmp_path / "a", [0, 1]))
    with pytest.raises(InputError, match="data.test .* is data.train: train and test signals must be disjoint"):
        SignalSet(kind="text", train=folder, test=folder)


@pytest.mark.parametrize("kind", ["text", "natural"])
def test_a_signal_on_both_sides_is_refused(tmp_path, kind):
    train = write_images(tmp_path / "a", [0, 1, 2])
    test = write_images(tmp_path / "b", [5])
    shutil.copy(train / "img1.png", test / "copy.png")
    with pytest.raises(InputError, match="also training signals .*copy.png = img1.png.*must be disjoint"):
        loaded(kind=kind, train=str(train), test=str(test), resolution=16)


def test_check_disjoint_names_the_first_overlap():
    a, b = torch.rand(4, 4, 1), torch.rand(4, 4, 1)
    check_disjoint([a], [b], ["a"], ["b"])
    with pytest.raises(InputError, match=r"1 of its 2 signals .*\(e.g. c = a\)"):
        check_disjoint([a], [b, a.clone()], ["a"], ["b", "c"])


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"kind": "audio"}, "data.kind: unknown class 'audio'"),
        ({"train_signals": 0}, "data.train_signals must be an int from 1"),
        ({"test_signals": True}, "data.test_signals must be an int from 1"),
        ({"signals_per_step": 0}, "data.signals_per_step must be an int ≥ 1"),
        ({"resolution": 4}, "data.resolution must be an int ≥ 8"),
        ({"kind": "shape", "resolution": 200}, "at most 128³"),
        ({"angles": 0}, "data.angles must be ≥ 1"),
        ({"noise_std": -0.1}, "data.noise_std must be ≥ 0"),
        ({"phantom": "disc"}, "data.phantom: unknown phantom"),
    ],
)
def test_bad_settings_are_refused_in_one_line(settings, message):
    with pytest.raises(InputError, match=message):
        SignalSet(**settings)


def test_missing_and_empty_directories_are_refused(tmp_path):
    with pytest.raises(InputError, match="data.train .*: not a directory"):
        loaded(kind="text", train=str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="data.test .*: no shape files in it"):
        loaded(kind="shape", test=str(tmp_path / "empty"), resolution=8)
