# The README's commands: `make demo`, `make test` (minutes) and `make test-all` (the rest). Everything installs
# into .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CASE ?= conv3d_gemm_tiling
OUT ?= out
JOBS ?= 2
# pytest-xdist workers: the suite is CPU-bound in one process; tests that share one expensive real-AKG result
# carry the same xdist_group mark and run on one worker (--dist loadgroup).
TEST_JOBS ?= 2

.PHONY: install gdb browser ascend demo test test-all test-again lint bench clean

$(BIN)/reduce: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[akg,dev]'
	touch $@

install: $(BIN)/reduce gdb

# A crash by a signal is known by where it died, read by gdb (a Debian package): installed when missing and
# this is root, else a warning (without it, crashes by a signal are refused, not reduced).
gdb:
	@command -v gdb >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq gdb >/dev/null; } \
		|| echo "akg-reduce: please install gdb (apt-get install gdb): a crash by a signal is known by where it died"

# The shape plan's and the night's pages are tested in a real browser: Debian's Chromium, installed when missing
# and this is root.
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
		|| echo "akg-reduce: the browser tests of plan.html and report.html need chromium (apt-get install chromium)"

# target aicore compiles with AKG's Ascend build, which only MindSpore 2.7's wheels ship: `reduce` installs
# MindSpore 2.7.2 into its toolchain cache on first use (~/.cache/akg-reduce/toolchains); the tests' real
# Ascend tier needs it, so `make test-all` has it installed first.
ascend: install
	$(BIN)/reduce toolchain aicore

demo: install
	$(BIN)/reduce corpus/$(CASE)/crash.yaml -o $(OUT) -j $(JOBS)
	@echo "the bundle named above holds ISSUE.md, repro.py, kernel.info, ...; its .tar.gz lies beside it"

# The tier every change waits for: ruff, the unit tests and one real-AKG test per kernel kind on cpu (marked
# `quick`); no Ascend toolchain, no browser. The tests marked `slow` and the other real-AKG ones wait for
# `make test-all`. docs/testing.md says what each tier holds and costs.
QUICK := (not akg and not slow) or quick
PYTEST := $(BIN)/pytest -q -p no:cacheprovider -n $(TEST_JOBS) --dist loadgroup --durations=15

test: install
	$(BIN)/ruff check reducer tests bench
	$(PYTEST) -m "$(QUICK)"

# Everything `make test` leaves out (Ascend on MindSpore 2.7.2's AKG, the pages in Chromium, whole reductions
# with diagnosis, nights, the fuzz), then the second pass below. .ci/run runs `make test`, then this.
test-all: install ascend browser
	$(PYTEST) -m "not ($(QUICK))"
	$(MAKE) --no-print-directory test-again

# The second pass: the tests that read what a first run leaves (the venv, compiled Python files, hypothesis'
# example database, pytest's temp roots, a process that outlived its test) run again on top of it. The
# real-AKG tier reads none of these but the temp roots and processes, which every test's checks cover.
test-again: install browser
	$(BIN)/pytest -q -p no:cacheprovider -n $(TEST_JOBS) --dist loadgroup -m "not akg"

lint: install
	$(BIN)/ruff check reducer tests bench
	$(BIN)/ruff format --check reducer tests bench

clean:
	rm -rf $(VENV) $(OUT) *.egg-info
