# The two commands of the README: `make demo` and `make test`. Everything installs into .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CASE ?= conv3d_gemm_tiling
OUT ?= out
JOBS ?= 2

.PHONY: install demo test lint bench clean

$(BIN)/reduce: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[akg,dev]'
	touch $@

install: $(BIN)/reduce

demo: install
	$(BIN)/reduce corpus/$(CASE)/crash.yaml -o $(OUT) -j $(JOBS)
	@echo "bundle: $(OUT)/$(CASE)/ (ISSUE.md, repro.py, kernel.info, ...) and $(OUT)/$(CASE).tar.gz"

test: install
	$(BIN)/ruff check reducer tests bench
	$(BIN)/pytest -q -p no:cacheprovider

lint: install
	$(BIN)/ruff check reducer tests bench
	$(BIN)/ruff format --check reducer tests bench

clean:
	rm -rf $(VENV) $(OUT) *.egg-info
