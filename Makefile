# The two README commands: `make demo` and `make test`. Each sets up the virtual environment first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml requirements.lock | cksum | cut -d' ' -f1)
HOST ?= 127.0.0.1:8000

.PHONY: setup demo test serve lock

setup: $(STAMP)

# --no-compile: pip byte-compiles nothing (about 30 s of a fresh setup, most of it torch's files that nothing imports);
# Python compiles each module the first time it is imported and keeps its .pyc. It keeps none where the environment
# says PYTHONDONTWRITEBYTECODE=1, as this project's machines do: then every process (each xdist process, each server
# and command a test starts) compiled every module it imported from source, every time (tests/config/test_settings.py,
# which starts processes: 30 s without .pyc files, 16 s with). So the recipes here run without that variable.
unexport PYTHONDONTWRITEBYTECODE

$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile -c requirements.lock -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

# The demo is served as production serves (DEBUG off: the collected static files through WhiteNoise, which is in
# MIDDLEWARE, and the site's own 404 and 500 pages), but on plain HTTP at HOST: a secret key made for this run (it
# needs none from you), this machine's host names, no redirect to HTTPS and cookies that plain HTTP may carry.
DEMO_ENV = DJANGO_DEBUG=0 DJANGO_SECRET_KEY="$$($(BIN)/python -c 'import secrets; print(secrets.token_urlsafe(64))')" \
	DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost,[::1],$(firstword $(subst :, ,$(HOST)))" \
	DJANGO_SECURE_SSL_REDIRECT=0 DJANGO_SECURE_COOKIES=0

# load_demo comes last before serving: it ends with the demo accounts and the address (Celery's line per task goes
# to var/log/demo-tasks.log; `manage.py load_demo -v 2` shows them).
demo: setup
	$(BIN)/python manage.py migrate --noinput
	$(DEMO_ENV) $(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py load_demo --url http://$(HOST)/
	@echo "Serving at http://$(HOST)/ (Ctrl-C stops)"
	$(DEMO_ENV) $(BIN)/python manage.py runserver $(HOST)

# The suite in parallel: one pytest-xdist process per core (-n auto), each with its own test database (tests in one
# xdist_group share a process). PYTEST_ARGS adds options: PYTEST_ARGS="-n 0" runs it in this one process.
test: setup
	$(BIN)/python -m pytest -n auto $(PYTEST_ARGS)

# Production mode here, without containers (the README's "Production and security"; compose.yaml runs the same
# roles): migrate, collectstatic, gunicorn and the Celery workers. ROLES="web worker" starts some of them.
serve: setup
	VENV=$(VENV) deploy/run-production.sh $(ROLES)

# Refresh the exact pins after changing dependencies in pyproject.toml.
lock:
	$(BIN)/python -m pip freeze --exclude-editable | grep -v '^pooljudge' > requirements.lock
