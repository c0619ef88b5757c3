# agent-memory — the verbs people expect. `make run` and `make test` work on a fresh clone.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
LOAD_VENV := .venv-load
LOAD_STAMP := $(LOAD_VENV)/.installed
# make load LOAD_ARGS="--backend postgres --users 200 --duration 120"
LOAD_ARGS ?=
HOST ?= 127.0.0.1
PORT ?= 8000

help:
	@echo "make run          start the demo (web on http://$(HOST):$(PORT) + memory worker)"
	@echo "make serve        the production profile: gunicorn (WEB_PROCESSES x WEB_THREADS) + worker, DEBUG off"
	@echo "make doctor       check this installation (database, worker, queue, providers, static files)"
	@echo "make test         the test suite (SQLite; set DATABASE_URL=postgres://... for PostgreSQL)"
	@echo "make test-browser the browser tests (headless Chromium), in their own invocation"
	@echo "make quick        the fast tier only (no real cluster, no browser)"
	@echo "make test-crash   15 more SIGKILL crash trials of the memory worker (5 with 4 workers)"
	@echo "make lint         ruff, mypy, makemigrations --check, catalogue_check"
	@echo "make fuzz         schemathesis against a live server (0 server errors, 0 schema violations)"
	@echo "make bench        the benchmarks in benchmarks/"
	@echo "make load         load test: simulated teachers (locust) against make serve's profile"
	@echo "make vendor       re-vendor the chat page's JS libraries and the tests' axe-core (pins: scripts/vendor-js/)"
	@echo "make messages     update the English catalogue from the source (needs GNU gettext), then compile it"

# The venv is (re)built when pyproject.toml changes; find-python.sh picks Python >= 3.12.
$(STAMP): pyproject.toml
	@if [ ! -x $(PY) ]; then \
		interpreter=$$(scripts/find-python.sh) || exit 1; \
		echo "creating $(VENV) with $$interpreter"; \
		"$$interpreter" -m venv $(VENV); \
	fi
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	@touch $(STAMP)

venv: $(STAMP)

# The load generator's own venv: only the `load` extra of pyproject.toml (locust).
$(LOAD_STAMP): pyproject.toml $(STAMP)
	@if [ ! -x $(LOAD_VENV)/bin/python ]; then \
		interpreter=$$(scripts/find-python.sh) || exit 1; \
		"$$interpreter" -m venv $(LOAD_VENV); \
	fi
	$(LOAD_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LOAD_VENV)/bin/python -m pip install --quiet $$($(PY) -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["load"]))')
	@touch $(LOAD_STAMP)


# The compiled message catalogues (build output, not committed): Babel compiles them
# (pure Python), whenever a .po is newer than its .mo.
CATALOGUES := $(patsubst %.po,%.mo,$(wildcard locale/*/LC_MESSAGES/django.po))
$(CATALOGUES): %.mo: %.po $(STAMP)
	$(PY) manage.py catalogue_compile

catalogues: $(CATALOGUES)

# After adding or changing a UI string: the catalogue gets it (makemessages, GNU gettext's
# xgettext/msgmerge), sorted and without locations; translate the new msgstr entries in
# locale/en/LC_MESSAGES/django.po, then run it again (or `make catalogues`) to compile.
messages: venv
	$(PY) manage.py catalogue_update

migrate: catalogues
	$(PY) manage.py migrate --noinput

run: migrate
	@HOST=$(HOST) PORT=$(PORT) scripts/run.sh

# The production profile (scripts/serve.sh): migrate, collectstatic, qcluster + gunicorn.
serve: catalogues
	@HOST=$(HOST) PORT=$(PORT) scripts/serve.sh

# `manage.py doctor` in the environment `make serve` uses (its generated secret key).
doctor: venv
	@scripts/serve.sh manage doctor

test: catalogues
	$(PY) -m pytest -m "not browser and not slow_extra"

test-browser: catalogues
	$(PY) -m pytest -m browser tests/browser

quick: catalogues
	$(PY) -m pytest -m "not slow and not browser"

# More SIGKILL crash trials of the memory worker: 10 with one worker, every fault point
# with 4 workers (beyond the 5 + 2 in `make test`).
test-crash: catalogues
	$(PY) -m pytest -m slow_extra tests/memory/test_cluster.py

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy agents memory runs web config ops benchmarks
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) manage.py catalogue_check

# schemathesis on every operation of /api/schema, DEBUG off, a fresh SQLite database.
fuzz: venv
	scripts/api-fuzz.sh

bench: venv
	$(PY) benchmarks/context.py
	$(PY) benchmarks/jobs.py
	$(PY) benchmarks/job_cpu.py
	$(PY) benchmarks/run_cpu.py
	$(PY) benchmarks/kb.py
	$(PY) benchmarks/recall.py
	$(PY) benchmarks/recall_storage.py
	$(PY) benchmarks/recall_eval.py
	$(PY) benchmarks/redline.py
	$(PY) benchmarks/sanitizer.py
	$(PY) benchmarks/tools.py
	$(PY) benchmarks/governance.py
	$(PY) benchmarks/memory_lag.py

# Simulated teachers against the production profile, SQLite (1 process) then PostgreSQL
# (2 processes; BENCH_PG_URL, default database bench_agent_memory): benchmarks/load.py.
load: venv $(LOAD_STAMP)
	LOAD_LOCUST=$(LOAD_VENV)/bin/locust $(PY) benchmarks/load.py $(LOAD_ARGS)

# Browser libraries (Markdown, KaTeX, DOMPurify) from the npm registry into static/vendor/.
vendor:
	scripts/vendor-js.sh

.PHONY: help venv catalogues messages migrate run serve doctor test test-browser test-crash quick lint fuzz bench load vendor
