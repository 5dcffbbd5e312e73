"""Dependencies by task: the core install is what the image task needs, every other task's libraries come with an
extra of pyproject.toml, and each is imported through ``inr.extras.require``, whose one line names that extra."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from inr.errors import InputError
from inr.extras import DISTRIBUTIONS, EXTRAS, require

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pip's own copy of the same parser
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# what `python train.py --config image.yaml` needs, and the image formats it reads (TIFF, 16-bit PNG)
CORE = {
    "torch",
    "torchvision",
    "lightning",
    "tensorboard",
    "imageio",
    "torchmetrics",
    "jsonargparse",
    "matplotlib",
    "numpy",
    "scipy",
    "pillow",
    "tifffile",
    "pypng",
}
OPTIONAL = sorted({name for names in EXTRAS.values() for name in names})
# the interop extra's own module: reached only through inr.operators' lazy loader, which names the extra
WHOLLY_OPTIONAL = {"inr/operators/deepinv_physics.py"}


def name_of(requirement: str) -> str:
    """'scikit-image>=0.22' -> 'scikit-image'; 'inr[video,codec]' -> 'inr'."""
    return re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower()


def extras_named(requirement: str) -> set[str]:
    """'inr[video,codec]' -> {'video', 'codec'}."""
    found = re.search(r"\[([^\]]*)\]", requirement)
    return {e.strip() for e in found.group(1).split(",")} if found else set()


def test_core_is_what_the_image_task_needs():
    assert {name_of(r) for r in PROJECT["dependencies"]} == CORE


def test_every_extra_installs_the_libraries_of_its_table():
    extras = PROJECT["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        assert extra in extras, f"inr.extras.EXTRAS names {extra}, pyproject.toml has no such extra"
        names = {name_of(r) for r in extras[extra]}
        for module in modules:
            assert DISTRIBUTIONS.get(module, module) in names, f"{extra} should install {module}"


@pytest.mark.parametrize("extra", ["dev", "all"])
def test_dev_and_all_name_the_extras_instead_of_repeating_them(extra):
    requirements = PROJECT["optional-dependencies"][extra]
    (own,) = [r for r in requirements if name_of(r) == "inr"]
    assert extras_named(own) == set(EXTRAS)
    repeated = {name_of(r) for r in requirements} & {name_of(r) for e in EXTRAS for r in PROJECT["optional-dependencies"][e]}
    assert repeated == set()


def test_optional_libraries_are_imported_only_through_require():
    """No ``import`` of an optional library anywhere in the package (so none at a module's top either), and every
    ``require`` names a library of the extra it names."""
    found = []
    for path in sorted((ROOT / "inr").rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                modules = []
            if where not in WHOLLY_OPTIONAL:
                found += [f"{where}:{node.lineno} imports {m}" for m in modules if m.split(".")[0] in OPTIONAL]
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "require" and where != "inr/extras.py":
                module = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
                extra = next((k.value.value for k in node.keywords if k.arg == "extra"), None)
                if module is not None and module.split(".")[0] not in EXTRAS.get(extra, ()):
                    found.append(f"{where}:{node.lineno} requires {module} from extra {extra!r}")
    assert found == []


def test_require_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "trimesh", None)  # as if it were not installed
    with pytest.raises(InputError, match=r"^reading a mesh needs trimesh: pip install 'inr\[meshes\]'$"):
        require("trimesh", extra="meshes", what="reading a mesh")


def test_an_error_inside_an_installed_library_is_not_called_missing(monkeypatch, tmp_path):
    (tmp_path / "brokenlib").mkdir()
    (tmp_path / "brokenlib" / "__init__.py").write_text("import no_such_dependency_of_brokenlib\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_of_brokenlib"):
        require("brokenlib", extra="meshes")


def _blocked(monkeypatch, *modules):
    for name in list(sys.modules):
        if name.split(".")[0] in modules:
            monkeypatch.delitem(sys.modules, name)
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize(
    "call, blocked, message",
    [
        (lambda: __import__("inr.export.mesh").export.mesh.read_mesh("x.ply"), ["trimesh"], r"needs trimesh: .*inr\[meshes\]"),
        (
            lambda: __import__("inr.geometry.containment").geometry.containment.fast_winding_number(
                [[0.5, 0.5, 0.5]], [[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]]
            ),
            ["igl"],
            r"winding numbers needs libigl: pip install 'inr\[meshes\]'",
        ),
        (
            lambda: __import__("inr.data.phantoms").data.phantoms.shepp_logan_phantom((8, 8)),
            ["phantominator"],
            r"needs phantominator: pip install 'inr\[phantoms\]'",
        ),
        (
            lambda: __import__("inr.data.signal_classes").data.signal_classes.photograph("camera"),
            ["skimage"],
            r"scikit-image's photographs needs scikit-image: pip install 'inr\[photos\]'",
        ),
        (
            lambda: __import__("inr.codec.entropy").codec.entropy.encode([], 3, []),
            ["constriction"],
            r"needs constriction: pip install 'inr\[codec\]'",
        ),
    ],
    ids=["trimesh", "igl", "phantominator", "skimage", "constriction"],
)
def test_each_task_names_its_extra_when_its_library_is_missing(monkeypatch, call, blocked, message):
    _blocked(monkeypatch, *blocked)
    with pytest.raises(InputError, match=message):
        call()


@pytest.mark.slow
def test_import_inr_and_the_image_task_run_without_any_extra(tmp_path):
    """`python train.py --config image.yaml` (tiny, its callbacks kept) with every optional library unimportable."""
    script = (
        "import sys\n"
        f"for name in {OPTIONAL!r}:\n"
        "    sys.modules[name] = None\n"
        "import inr, inr.tasks, inr.data, inr.callbacks, inr.operators, inr.geometry, inr.export\n"
        "from inr.run.cli import cli_main\n"
        "cli_main(sys.argv[1:])\n"
    )
    args = ["--config", "image.yaml", "--trainer.max_steps", "4", "--data.init_args.resolution", "16"]
    args += ["--model.init_args.inner_steps", "2", "--model.init_args.network.init_args.width", "16"]
    args += ["--trainer.enable_progress_bar", "false", "--trainer.logger.init_args.save_dir", str(tmp_path / "runs")]
    proc = subprocess.run([sys.executable, "-c", script, *args], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "summary:" in proc.stdout + proc.stderr
    assert (tmp_path / "runs" / "image" / "version_0" / "metrics.json").is_file()
