# One entry point for everything a developer, a technician or CI does.
# `make demo` and `make test` set themselves up on a fresh clone.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
MPY := $(VENV)/bin/micropython
STAMP := $(VENV)/.setup-done
STUBS := .stubs/.setup-done

.PHONY: setup test test-slow demo flash mpy bench faults attacks hardware typecheck clean mutants coverage pico-image pico-emulator faults-pool demo-floor docs

setup: $(STAMP) $(STUBS)

$(STAMP): requirements.txt pyproject.toml setup.py lab/pyproject.toml lab/setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r requirements.txt
	$(PIP) install -q -e . -e lab
	@# The pool's tests start their own PostgreSQL (tests/pool): Debian's server binaries.
	@test -x "$$(pg_config --bindir 2>/dev/null)/initdb" || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
	  || { test "$$(id -u)" = 0 && (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql) ; } \
	  || { echo "make setup: PostgreSQL server binaries missing; install Debian's postgresql package (as root)" >&2; exit 1; }
	@# The pool web service's browser tests (tests/pool/test_web_browser.py) drive Debian's chromium.
	@test -x /usr/bin/chromium \
	  || { test "$$(id -u)" = 0 && (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium) ; } \
	  || { echo "make setup: /usr/bin/chromium missing; install Debian's chromium package (as root)" >&2; exit 1; }
	touch $(STAMP)

# Type stubs for the board code, one directory per port (tests/hardware/test_typecheck.py).
$(STUBS): $(STAMP)
	$(PIP) install -q --upgrade --target .stubs/rp2 micropython-rp2-stubs==1.29.0.post1
	$(PIP) install -q --upgrade --target .stubs/esp32 micropython-esp32-stubs==1.29.0.post1
	touch $(STUBS)

# Every test but the slow campaigns: what CI runs on every change (.ci/run). One fast test of
# every behaviour is here; the slow target only repeats behaviours at length. JOBS test processes
# (pytest-xdist; a file's tests stay in one process, so a firmware module's tests share one
# interpreter and a module's fixtures are made once); JOBS=1 runs them in this one. The slowest
# tests are listed at the end, to keep the slow list (tests/conftest.py) true.
JOBS ?= 2
PYTEST_JOBS = $(if $(filter-out 1,$(JOBS)),-n $(JOBS) --dist loadfile)
test: setup
	$(PY) -m pytest -q -m "not slow" $(PYTEST_JOBS) --durations=25 tests

# The slow campaigns `make test` leaves out: the tests marked slow (tests/conftest.py lists them,
# each with what in `make test` proves the same in less time): the emulated Pico (with PICO_UF2
# set; `make pico-emulator` first), the fault campaigns through the whole virtual board, the
# 100,000-token run, the raw log's longest scans after a corrupt record. The scheduled
# run calls it (.ci/scheduled). PICO_SLOW=1 adds the emulated Pico's power cuts (tests/pico/test_pico_cuts.py).
test-slow: setup
	$(PY) -m pytest -q -m slow --durations=25 tests

demo: setup
	$(PY) -m tabledev.demo

# The generated parts of docs/: the CLI reference from the parser (cogapp; tests/test_docs_cli_reference.py
# fails when it is out of date) and the figures from their records (benchmarks/results/;
# tests/test_figures_fresh.py fails when the docs differ from what the records render).
docs: setup
	$(PY) -m tabledev.docs
	$(PY) benchmarks/render.py

# The adversarial suite (also part of `make test`): each attack on the money path, refused.
attacks: setup
	$(PY) -m pytest -q tests/attacks tests/firmware/mp_test_trust.py tests/firmware/mp_test_award_cuts.py

# Deploy the firmware to a board (real or virtual) through mpremote: make flash PORT=/dev/ttyACM0
# (SOURCE=build/mpy after `make mpy` deploys the compiled tree a Pico carries; DB= the ledger whose
# key a provisioned board wants).
flash: setup
	@test -n "$(PORT)" || (echo "make flash: say which board, e.g. make flash PORT=/dev/ttyACM0" >&2; exit 1)
	$(VENV)/bin/tablectl flash --port $(PORT) $(if $(DB),--db $(DB)) $(if $(SOURCE),--source $(SOURCE))

# Compile a board's files to .mpy (what a production board carries), by tablectl/deploy.py, the
# one module of the board's file set: `make mpy` for a Pico into build/mpy, `make mpy BOARD=esp32`
# into build/mpy-esp32. `tablectl flash` refuses a tree compiled for another board.
MPY_BOARD := $(or $(BOARD),pico)
mpy: setup
	$(PY) -m tablectl.deploy compile $(MPY_BOARD) build/mpy$(if $(filter-out pico,$(MPY_BOARD)),-$(MPY_BOARD))

bench: setup
	$(PY) benchmarks/run_all.py

# The linked pool's faults (docs/POOL.md): pool killed, PostgreSQL restarted, primary killed with a
# synchronous standby promoted, a table cut off for 10 minutes; docs/RELIABILITY.md (POOL FAULTS).
faults-pool: setup
	$(PY) -m tabledev.pool_faults

# A floor of three linked tables on a PostgreSQL server of its own (in a temporary folder): a
# scripted session a person can watch (docs/POOL.md).
demo-floor: setup
	$(PY) -m tabledev.demo_floor

faults: setup
	$(PY) -m tabledev.faults --full

# The MicroPython build for the Raspberry Pi Pico that the emulated-board tests run (tests/pico/):
# downloaded from the MicroPython download page into build/pico/ and kept only if its sha256 is the
# tested one. CI uses the copy in ../shared/pico/ (.ci/run sets PICO_UF2).
pico-image: setup
	$(PY) -c "from tabledev.pico_sim import fetch_image; fetch_image()"

# rp2040py rebuilt from its PyPI source against CPython's full API (lab/tabledev/rp2040py_build.py):
# the stable-ABI wheel from PyPI takes 3.2x the CPU per emulated second (docs/BENCHMARKS.md, "the
# emulator's build"). For the emulated-board runs (tests/pico, benchmarks/bench_pico.py; .ci/run makes
# it); needs a C compiler and Python's headers, so `make setup` keeps the wheel and this is a step of
# its own, made again when requirements.txt changes (a new rp2040py pin brings its wheel back).
PICO_EMU := $(VENV)/.rp2040py-full-api
pico-emulator: $(PICO_EMU)

$(PICO_EMU): $(STAMP) requirements.txt
	$(PY) -m tabledev.rp2040py_build
	touch $(PICO_EMU)

clean:
	rm -rf build .pytest_cache

# Mutation testing of the money paths (docs/RELIABILITY.md, written by the command): cosmic-ray
# from PyPI is installed here, not by `make setup`, so `make test` never waits for it.
# One module alone: make mutants ONLY=ledger; only what changed since the kept results
# (benchmarks/mutants-kept, in the repository): make mutants STALE=1.
mutants: setup
	$(PIP) install -q cosmic-ray==8.7.0
	$(PY) benchmarks/mutants.py $(if $(ONLY),--only $(ONLY)) $(if $(STALE),--stale)

# Branch coverage of the money paths (docs/BENCHMARKS.md, written by the command).
coverage: setup
	$(PIP) install -q coverage==7.17.3
	$(PY) benchmarks/coverage_money.py

typecheck: setup
	$(PY) -m pytest -q tests/hardware/test_typecheck.py tests/host/test_mypy.py

# Harness drawings from the pin maps: WireViz (PyPI) and Graphviz (Debian) are installed here,
# not by `make setup`, so tests never wait for apt. Output in hardware/build/.
hardware: setup
	$(PIP) install -q wireviz==0.4.1
	command -v dot >/dev/null || { apt-get update -qq && apt-get install -y -qq graphviz; }
	$(PY) hardware/harness.py --write
	mkdir -p hardware/build
	cd hardware/build && for f in ../harness_*.yml; do ../../$(VENV)/bin/wireviz -f sp -o . $$f || exit 1; done
