# Two commands: `make run` (set up and start the app) and `make test` (set up and run the tests).
# Both are idempotent: a second run reinstalls nothing unless a requirements file changed.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False

.PHONY: run test install install-dev browser ocr lint bench-quick

run: $(VENV)/.app-installed ocr
	$(PY) -m ui.serve --server.address 127.0.0.1 --server.port $${PORT:-8501}

test: $(VENV)/.dev-installed browser ocr
	$(PY) -m pytest $(PYTEST_ARGS)

install: $(VENV)/.app-installed
install-dev: $(VENV)/.dev-installed

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.app-installed: requirements.txt | $(VENV)/bin/python
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip check
	touch $@

$(VENV)/.dev-installed: requirements.txt requirements-dev.txt | $(VENV)/bin/python
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) -m pip check
	touch $@ $(VENV)/.app-installed

# The browser tests drive Debian's chromium; Playwright never downloads a browser here.
browser:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
		|| echo "could not install chromium: the browser tests will be skipped"; \
	else echo "chromium missing and not root: install it with 'sudo apt-get install chromium' to run the browser tests"; fi

# Scanned PDFs and images are read with Debian's Tesseract and its English data; nothing is downloaded at run time.
ocr:
	@if command -v tesseract >/dev/null && tesseract --list-langs 2>/dev/null | grep -qx eng; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-eng >/dev/null) \
		|| echo "could not install tesseract-ocr: scanned PDFs and images will be refused, and their tests skipped"; \
	else echo "tesseract-ocr missing and not root: install it with 'sudo apt-get install tesseract-ocr tesseract-ocr-eng' to read scanned PDFs and images"; fi

lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check .

bench-quick: $(VENV)/.dev-installed
	for b in bench/*.py; do $(PY) $$b --quick || exit 1; done
