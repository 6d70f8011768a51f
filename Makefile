# The two README commands: `make demo` and `make test`. Each sets up the virtual environment first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml requirements.lock | cksum | cut -d' ' -f1)
HOST ?= 127.0.0.1:8000

.PHONY: setup demo test serve lock

setup: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

demo: setup
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	@echo "Serving at http://$(HOST)/ (Ctrl-C stops)"
	$(BIN)/python manage.py runserver $(HOST)

test: setup
	$(BIN)/python -m pytest

# Production mode here, without containers (the README's "Production and security"; compose.yaml runs the same
# roles): migrate, collectstatic, gunicorn and the Celery workers. ROLES="web worker" starts some of them.
serve: setup
	VENV=$(VENV) deploy/run-production.sh $(ROLES)

# Refresh the exact pins after changing dependencies in pyproject.toml.
lock:
	$(BIN)/python -m pip freeze --exclude-editable | grep -v '^pooljudge' > requirements.lock
