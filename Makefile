# The README's two commands are `make lab` and `make test`; the other targets serve them.
#   make lab    create .venv (first time), install the course, open JupyterLab on the lessons
#   make test   create .venv (first time), install the course and test tools, run every test
# Variables: PYTHON (which Python builds the venv), LAB_ARGS (extra `jupyter lab` flags),
# PYTEST_ARGS (extra pytest flags, e.g. PYTEST_ARGS='-m "not browser"').

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LAB_ARGS ?=
PYTEST_ARGS ?=
# JupyterLab refuses to run as root unless told; containers and CI machines often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: setup lab test lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "This course needs Python 3.11 or newer; $(PYTHON) is " + sys.version.split()[0] + ". Run: make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab $(ROOT_FLAG) \
	  --ServerApp.root_dir=. \
	  --LabApp.default_url=/lab/tree/notebooks \
	  --LabApp.news_url=None \
	  --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate \
	  $(LAB_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .

test: lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
