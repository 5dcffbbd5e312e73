# Two entry points: `make train` (default training) and `make test` (whole suite).
# Both create .venv on first use; later calls reuse it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: train test test-fast setup clean

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# A CPU-tested matching pair; pip takes them from the local wheel cache when present.
	$(PY) -m pip install -q torch==2.14.1 torchvision==0.29.1
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

train: $(STAMP)
	$(PY) train.py --config image.yaml

# both cores, one pytest-xdist worker each; worksteal: a worker that runs out of tests takes half of the other's
# remaining ones (the tests marked slow are collected first: tests/conftest.py)
test: $(STAMP)
	$(PY) -m pytest -n 2 --dist worksteal

# the fast lane: every module's tests except those marked slow (subprocesses, whole training runs)
test-fast: $(STAMP)
	$(PY) -m pytest -n 2 --dist worksteal -m "not slow"

clean:
	rm -rf $(VENV) lightning_logs
