#!/usr/bin/env bash
# The production processes of Pooljudge, without containers (compose.yaml runs the same roles, one a container).
#
#   deploy/run-production.sh [web] [worker] [gpu]      # no role: all three
#
#   web     migrate, collectstatic, then gunicorn (production mode: DJANGO_DEBUG=0, static files from WhiteNoise;
#           its settings: deploy/gunicorn.conf.py)
#   worker  a Celery worker on the default queue (pooling, BM25, bookkeeping)
#   gpu     a Celery worker on the gpu queue (encoders, re-rankers; one per GPU: set CUDA_VISIBLE_DEVICES)
#
# Needs DATABASE_URL (PostgreSQL), CELERY_BROKER_URL and CACHE_URL (Redis), DJANGO_SECRET_KEY (50+ characters)
# and DJANGO_ALLOWED_HOSTS; see the README's "Production and security" for the rest. Optional here: BIND
# (0.0.0.0:8000), WEB_WORKERS (two per CPU), WEB_THREADS (2), WEB_ACCESS_LOG (none: the HTTPS proxy keeps it; - for
# stdout): deploy/gunicorn.conf.py reads them. WORKER_NAME (cpu1), GPU_WORKER_NAME (gpu1), VENV (.venv; "" for the
# Python on PATH). The processes run until one of them stops; then the others are stopped too.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV-.venv}
BIN=${VENV:+$VENV/bin/}
export DJANGO_DEBUG=0 DJANGO_SETTINGS_MODULE=config.settings
for name in DATABASE_URL DJANGO_SECRET_KEY DJANGO_ALLOWED_HOSTS; do
  [ -n "${!name:-}" ] || { echo "run-production.sh: $name must be set" >&2; exit 2; }
done

roles=("$@")
[ ${#roles[@]} -gt 0 ] || roles=(web worker gpu)
for role in "${roles[@]}"; do
  case $role in
    web|worker|gpu) ;;
    *) echo "run-production.sh: unknown role '$role' (web, worker, gpu)" >&2; exit 2 ;;
  esac
  if [ "$role" != web ] && [ -z "${CELERY_BROKER_URL:-}" ]; then
    echo "run-production.sh: CELERY_BROKER_URL must be set for the $role role" >&2; exit 2
  fi
done

start() {  # start ROLE in the background
  case $1 in
    web)
      "${BIN}python" manage.py migrate --noinput
      "${BIN}python" manage.py collectstatic --noinput --verbosity 0
      "${BIN}gunicorn" config.wsgi -c deploy/gunicorn.conf.py &  # BIND, WEB_WORKERS, WEB_THREADS, WEB_ACCESS_LOG
      ;;
    worker)
      "${BIN}celery" -A config worker -Q default -n "${WORKER_NAME:-cpu1}@%h" --loglevel INFO &
      ;;
    gpu)
      "${BIN}celery" -A config worker -Q gpu -n "${GPU_WORKER_NAME:-gpu1}@%h" -P solo -c 1 \
        --prefetch-multiplier 1 --loglevel INFO &
      ;;
  esac
}

trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT
trap 'exit 0' INT TERM
for role in "${roles[@]}"; do start "$role"; done
wait -n  # the first process to stop ends the others
