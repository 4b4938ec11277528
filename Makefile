# lakehouse — the two commands a fresh machine needs are `make demo` and `make test`.
PYTHON ?= python3
PIP := $(PYTHON) -m pip
STAMP := .install.stamp

.PHONY: install demo test test-fast rust-test bench faults browser lint clean figures docs reproductions s3-server

# Editable install: Python files are used in place, the Rust extension is rebuilt (the stale one is
# deleted first so nobody tests yesterday's binary).
install:
	rm -f lakehouse/_native*.so lakehouse/_native*.pyd
	$(PIP) install --quiet --upgrade "pip>=23" "setuptools>=77" "setuptools-rust>=1.10" wheel
	$(PIP) install --quiet --no-build-isolation -e ".[dev]"
	@touch $(STAMP)

$(STAMP): pyproject.toml setup.py sim/Cargo.toml sim/build.rs $(shell find sim/src -name "*.rs")
	$(MAKE) install

demo: $(STAMP)
	$(PYTHON) -m lakehouse.cli demo

rust-test:
	cd sim && cargo test --profile release-test --quiet --no-default-features

# Compiled modules are kept (PYTHONDONTWRITEBYTECODE emptied, where a machine sets it): each command a
# test starts as a process would otherwise compile the package anew (0.2 s of its 0.5 s start).  Each
# test file runs on one worker (--dist loadfile), so that a file's module-wide fixtures (an ingested
# trace, the examples' world) are made once: it measured faster than spreading a file's tests, and
# pytest 9.2 ignores the groups of --dist loadgroup.  The files go out in the order collected
# (--no-loadscope-reorder): tests/conftest.py puts the longest first, so the two workers end together.
test: $(STAMP) rust-test browser
	PYTHONDONTWRITEBYTECODE= $(PYTHON) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=25 -m "not thorough"

# The HTML reports are checked in a real headless browser: Debian's Chromium, installed where this
# machine allows it (root and apt-get); elsewhere those tests skip and say why.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	  chromium fonts-dejavu-core >/dev/null; } || echo "no headless Chromium here: the browser tests will skip"

# Fault injection at full strength (make test runs a few trials of each), the checks make test runs on
# representative shared logs repeated on the others (marked thorough), and the property tests at their
# full count of examples (make test draws a third): 20 kill -9 and 20 Ctrl-C trials of each ingest, two
# writers at once, readers during ingests, full disks, 20 kill -9 trials of the nightly run; prints the
# table of what went wrong (all zeros).
faults: $(STAMP) s3-server
	LAKEHOUSE_S3_SERVER=$(S3_SERVER) LAKEHOUSE_FAULT_TRIALS=20 LAKEHOUSE_KILL_TRIALS=20 \
	  $(PYTHON) -m pytest -q -m "faults or thorough or hypothesis" -s -p no:randomly

# An S3-compatible server for the shared lake's tests (its data on object storage): s3s-fs from the crates
# registry, built once per machine into the user's cache (not the clone: every clone uses it); the tests
# that need it skip where it was not built, and make faults builds it first.
S3_SERVER_HOME ?= $(HOME)/.cache/lakehouse/s3s-fs-0.14.1
S3_SERVER := $(S3_SERVER_HOME)/bin/s3s-fs
s3-server: $(S3_SERVER)
$(S3_SERVER):
	cargo install s3s-fs --version 0.14.1 --locked --features binary --root $(S3_SERVER_HOME) --quiet

test-fast: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(PYTHON) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder -m "not slow and not thorough"

# Benchmarks measure on real logs: DATA holds swf/ (Parallel Workloads Archive logs as published).
DATA ?= ../shared/data
# ONLY=section,section runs those sections alone (their names: benchmarks/bench.py, main).
ONLY ?=
bench: $(STAMP)
	LAKEHOUSE_SHARED_DATA=$(DATA) LAKEHOUSE_BENCH_ONLY=$(ONLY) $(PYTHON) -m benchmarks.bench

# mypy over the whole package and the layers' import contracts, both on the installed layout (a tree of
# links: tests/package_tree.py says why).
TREE := build/package-tree
lint:
	$(PYTHON) tests/package_tree.py $(TREE)
	cd $(TREE) && $(PYTHON) -m mypy -p lakehouse --config-file= --ignore-missing-imports --python-version 3.11
	cd $(TREE) && PYTHONPATH=. $(PYTHON) -c "import sys, importlinter.cli as c; sys.exit(c.lint_imports('$(CURDIR)/pyproject.toml', no_logo=True))"
	$(PYTHON) -m ruff check lakehouse sql models sim/python sim/campaigns sim/studies tests benchmarks
	$(PYTHON) -m ruff format --check lakehouse models sim/python sim/campaigns sim/studies tests benchmarks
	$(PYTHON) -m mypy.stubtest lakehouse._native --mypy-config-file pyproject.toml
	cd sim && cargo fmt --check && cargo clippy --quiet --no-default-features -- -D warnings

# The documentation as a site (docs/ and mkdocs.yml): build/site/index.html. Strict: a broken link or a page
# left out of the navigation fails (not --quiet: mkdocs then counts no warnings, and a page left out passed).
# Every study of `lakehouse reproduce` on the shared data, rewriting the record the docs cite
# (docs/reproduced/, the counts in docs/reproductions.md): about 15 minutes on 2 cores.
reproductions: $(STAMP)
	$(PYTHON) -m lakehouse.cli ingest swf $(DATA)/swf --lake build/reproductions/swf > /dev/null
	$(PYTHON) -m lakehouse.cli ingest google $(DATA)/google --lake build/reproductions/google > /dev/null
	$(PYTHON) tests/refresh_reproductions.py build/reproductions/swf build/reproductions/google

# The tables that are the engine's constants (the presets) are written from them first.
docs: $(STAMP)
	$(PYTHON) -m lakehouse.sim.engine_docs docs
	NO_MKDOCS_2_WARNING=1 $(PYTHON) -m mkdocs build --strict

clean:
	rm -rf build dist *.egg-info sim/target lakehouse/_native*.so $(STAMP) lake

# The README's figures: both Google reports on the demo's generated trace (part of the embedded sample).
figures: $(STAMP)
	rm -rf build/figures-lake
	$(PYTHON) -m lakehouse.cli demo --lake build/figures-lake > /dev/null
	$(PYTHON) -m lakehouse.cli report volatility --lake build/figures-lake/demo-generated/lake --plots docs/figures > /dev/null
	$(PYTHON) -m lakehouse.cli report periodicity --lake build/figures-lake/demo-generated/lake --plots docs/figures > /dev/null
	# The nightly page of the demo's second night, as a browser shows it at 1280 x 900 (where Chromium is),
	# made in a temporary folder: the page names its inbox and lake.
	demo=$$(mktemp -d) && $(PYTHON) -m lakehouse.cli demo --lake $$demo/lake > /dev/null && \
	  page=$$(ls -td $$demo/lake/demo-nightly/lake/reports/*/ | head -1)index.html && \
	  if command -v chromium >/dev/null; then chromium --headless --disable-gpu --no-sandbox --hide-scrollbars \
	  --window-size=1280,900 --screenshot=docs/figures/nightly_page.png "file://$$page" 2>/dev/null; fi; \
	  rm -rf $$demo
