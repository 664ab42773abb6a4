# `make test` and `make demo` set up everything themselves on a fresh Debian machine:
# the system packages (as root), a venv and the Python packages.

# The venv is built from Debian's python3, never pyenv's under /root, which a dropped
# user cannot execute (and a venv made from it still links there).
PYTHON ?= /usr/bin/python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUNTIME_STAMP := $(VENV)/.installed-runtime
# what running initd needs (make demo), and what the tests need besides
RUNTIME_PACKAGES := python3 python3-venv git procps passwd util-linux
SYSTEM_PACKAGES := $(RUNTIME_PACKAGES) strace binutils gcc libcap2-bin
# pytest's own options are in pyproject.toml (in parallel: pytest-xdist); tests/conftest.py
# loads the plugins (strict on skips, log tails of a failed test's processes)
PYTEST := $(BIN)/pytest

.PHONY: all test check test-stress lint demo bench clean system-packages runtime-packages \
	image bundle wheels dist e2e

all: test

system-packages:
	@tools/system-packages.sh $(SYSTEM_PACKAGES)
	@# node and npm, for the hook managers' conformance tests (husky, lefthook, …): Debian's
	@# when there is none (an image may have NodeSource's nodejs, which carries npm)
	@command -v npm >/dev/null || tools/system-packages.sh nodejs npm

runtime-packages:
	@tools/system-packages.sh $(RUNTIME_PACKAGES)

# compat mode: a plain path in a .pth file; the default editable finder imports pathlib,
# re and urllib at every interpreter start, which PID 1 would carry for its whole life.
$(STAMP): pyproject.toml | system-packages
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]' --config-settings editable_mode=compat
	touch $(STAMP) $(RUNTIME_STAMP)

# make demo: initd and its runtime dependencies alone, not the dev extra (Debian's pip
# is new enough for it)
$(RUNTIME_STAMP): pyproject.toml | runtime-packages
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e . \
	  --config-settings editable_mode=compat
	touch $(RUNTIME_STAMP)

lint: $(STAMP)
	$(BIN)/ruff check initd tests bench images
	$(BIN)/mypy

# The container tests (tests/e2e) need the images: built here when podman can run (as
# root on Debian); when it cannot, the line above says why and pytest skips them, saying so.
test: lint
	@tools/container-setup.sh && tools/build-images.sh $(BIN)/python \
	  || echo "make test: no container images, so tests/e2e will be skipped (why: above)" >&2
	$(PYTEST)

# The edit-test loop: lint, then the tests that need no container, no user made by the
# tests and no tool installed for them, and are not marked slow (tests/conftest.py).
check: lint
	$(PYTEST) -m "not container and not users and not slow" -q

# The suite on a busy host: this checkout's whole suite twice at once, while a CPU
# burner keeps every core busy. Both runs must pass (tools/test-stress.sh).
test-stress: lint
	@tools/container-setup.sh && tools/build-images.sh $(BIN)/python \
	  || echo "make test-stress: no container images, so tests/e2e will be skipped" >&2
	@tools/test-stress.sh $(PYTEST)

demo: $(RUNTIME_STAMP)
	@images/demo/run.sh $(BIN)/python

# The images: initd's base (Containerfile) and the demo's, with podman, from a base made
# of Debian packages (no registry is needed) and wheels built here (no network in builds).
image: $(STAMP)
	@tools/container-setup.sh
	@tools/build-images.sh $(BIN)/python

# The bundle alone: build/bundle/rootfs/opt/initd (initd with its own Python, for any
# glibc image), its tarball, and localhost/initd-bundle:dev (FROM scratch, for COPY --from).
bundle: $(STAMP)
	@tools/container-setup.sh
	@tools/build-bundle.sh $(BIN)/python

# initd's wheel and its dependencies' in build/wheels: what an image with Python installs.
wheels: $(STAMP)
	rm -rf build/wheels
	$(BIN)/pip wheel --quiet --wheel-dir build/wheels .

# The distribution to publish: sdist and wheel in dist/, checked as PyPI would.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --no-isolation --outdir dist .
	$(BIN)/twine check --strict dist/*

# The tests in real containers: podman run the demo image, as a runtime would.
e2e: image
	$(PYTEST) tests/e2e

bench: $(STAMP)
	@tools/system-packages.sh tini
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build dist
