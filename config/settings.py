"""Django settings, read from the environment.

Defaults give the embedded development setup: SQLite, Celery tasks run eagerly in
this process, DEBUG on under manage.py. Serving through WSGI/ASGI (gunicorn) turns
DEBUG off unless DJANGO_DEBUG says otherwise (see config/wsgi.py), and with DEBUG
off a missing DJANGO_SECRET_KEY or DJANGO_ALLOWED_HOSTS stops the process.
"""

from pathlib import Path

import dj_database_url

from config.env import env_bool, env_int, env_list, env_str, require

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DJANGO_DEBUG", True)

if DEBUG:
    SECRET_KEY = env_str("DJANGO_SECRET_KEY") or "insecure-development-key-do-not-use-in-production"
    ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
else:
    SECRET_KEY = require("DJANGO_SECRET_KEY", "production mode (DJANGO_DEBUG=0) has no fallback key")
    if len(SECRET_KEY) < 50:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be at least 50 characters in production mode")
    ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS")
    if not ALLOWED_HOSTS:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(
            "DJANGO_ALLOWED_HOSTS must be set in production mode (DJANGO_DEBUG=0), e.g. judge.example.org"
        )

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "config.apps.ProjectConfig",
    "retrieval",
    "assessments",
    "annotation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files from the application itself (compressed, hashed names, cached for a year) under gunicorn too.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "config.middleware.UnstorableTextMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.middleware.LoginThrottleMiddleware",
    "config.middleware.DatabaseUnavailableMiddleware",
    "config.middleware.ServerTimingMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

# SQLite in var/ by default; DATABASE_URL (postgres://user@host:port/name) selects PostgreSQL via psycopg 3.
DATABASE_URL = env_str("DATABASE_URL")
if not DATABASE_URL:
    (BASE_DIR / "var").mkdir(exist_ok=True)
    DATABASE_URL = f"sqlite:///{BASE_DIR / 'var' / 'db.sqlite3'}"
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60))}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Django's backend, waiting for a shared cache's table lock as for a locked file (config/sqlite/base.py).
    DATABASES["default"]["ENGINE"] = "config.sqlite"
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
    # ":memory:" said outright: Django's shared-cache in-memory database, which pytest-django names per xdist process
    # only for its own engine name (it took the file's name for config.sqlite's).
    DATABASES["default"]["TEST"] = {"NAME": env_str("SQLITE_TEST_NAME") or ":memory:"}
else:
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # Django's backend with a health check that needs no round trip (config/postgresql/base.py).
        DATABASES["default"]["ENGINE"] = "config.postgresql"
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # Server-side cursors (the streamed exports: qrels, Y3, audit log) are read to the end: plan them for the whole
    # result, not PostgreSQL's default first 10% (that plan walked every change of the site in order for one
    # campaign's audit log: 370 ms against 88 ms at 1M judgements).
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("options", "-c cursor_tuple_fraction=1")
    # Parameters bound by the server (not quoted into the SQL text by the driver), and a statement run
    # DATABASE_PREPARE_THRESHOLD times on a connection is prepared: PostgreSQL parses and plans it once. 0 turns
    # preparing off (a connection pooler in transaction mode older than PgBouncer 1.21 needs that).
    DATABASES["default"]["OPTIONS"]["server_side_binding"] = True
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = env_int("DATABASE_PREPARE_THRESHOLD", 2) or None

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT") or BASE_DIR / "var" / "static")
# Production mode serves what `manage.py collectstatic` put in STATIC_ROOT, from the application (WhiteNoise:
# gzip-compressed copies, names with a content hash cached for a year, so a page never runs a stale script);
# the development server and the tests serve the apps' static folders as they are.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

LOGIN_URL = "admin:login"
# ModelBackend reading the signed-in user with SQL compiled once (config.auth): the same rules, less CPU a request.
AUTHENTICATION_BACKENDS = ["config.auth.Backend"]
# Where a sign-in without `next` lands (the admin's too): the queue, which sends organisers on to their pages.
LOGIN_REDIRECT_URL = "/"

# Content-Security-Policy (django-csp): scripts and styles only from our own static files, no inline script,
# no eval, nothing from elsewhere. Style attributes stay allowed (progress bars' widths, the dashboard's series
# colours); they cannot run code. JSON given to a page with json_script is data, not a script, and passes.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# Security headers; the HTTPS ones only in production mode.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
# Request bodies: a judgement or form is a few KB; run files go through the API's own limit (API_MAX_UPLOAD_BYTES),
# streamed to a temporary file above FILE_UPLOAD_MAX_MEMORY_SIZE rather than held in memory.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DJANGO_DATA_UPLOAD_MAX_BYTES", 2 * 1024 * 1024)
DATA_UPLOAD_MAX_NUMBER_FIELDS = 2000
FILE_UPLOAD_MAX_MEMORY_SIZE = env_int("DJANGO_FILE_UPLOAD_MAX_MEMORY_BYTES", 2 * 1024 * 1024)
FILE_UPLOAD_PERMISSIONS = 0o640
# Login throttling (config/throttle.py): this many sign-in attempts per user name and address within the window
# (the next is refused; a successful sign-in clears the count).
LOGIN_THROTTLE_FAILURES = env_int("LOGIN_THROTTLE_FAILURES", 5)
LOGIN_THROTTLE_WINDOW = env_int("LOGIN_THROTTLE_WINDOW", 15 * 60)
# Behind a proxy that appends the client's address to X-Forwarded-For, count per that address.
LOGIN_THROTTLE_TRUST_FORWARDED_FOR = env_bool("LOGIN_THROTTLE_TRUST_FORWARDED_FOR", False)
# The cache holds login failure counts; several server processes must share it (CACHE_URL=redis://…).
CACHE_URL = env_str("CACHE_URL")
if CACHE_URL:
    CACHES = {"default": {
        "BACKEND": "config.cache.RedisCache",  # Django's, reusing its Redis clients
        "LOCATION": CACHE_URL,
        "KEY_PREFIX": env_str("CACHE_KEY_PREFIX") or "",  # several sites on one Redis database keep apart
    }}
if CACHE_URL or DEBUG:
    # Sessions read from the cache (written through to the database): no session query per request. Only with a
    # cache every process shares (a per-process cache would keep a signed-out session alive in the other
    # processes), or in development and the tests (one process; the local-memory cache).
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
# Server-Timing header with each response's database time (the load benchmark turns it on).
SERVER_TIMING = env_bool("DJANGO_SERVER_TIMING", False)
# Where deleting a campaign leaves its export (manage.py delete_campaign, the admin's delete).
EXPORT_DIR = Path(env_str("EXPORT_DIR") or BASE_DIR / "var" / "exports")
# Model-assisted assessment (issue 18): where trained annotators are kept, and the LLM judge (any OpenAI-compatible
# chat endpoint). Nothing is sent to an LLM unless LLM_JUDGE_BASE_URL is set or a command names --endpoint.
MACHINE_MODEL_DIR = Path(env_str("MACHINE_MODEL_DIR") or BASE_DIR / "var" / "annotators")
# Hugging Face hub names a page or the API may name (training, a pool's encoder or cross-encoders): a name not listed
# would make a worker download it. Folders and the bundled model need no listing (retrieval.specs.model_problem).
MODEL_ALLOW_LIST = env_list("MODEL_ALLOW_LIST")
LLM_JUDGE_BASE_URL = env_str("LLM_JUDGE_BASE_URL") or ""
LLM_JUDGE_MODEL = env_str("LLM_JUDGE_MODEL") or ""
LLM_JUDGE_API_KEY = env_str("LLM_JUDGE_API_KEY") or ""
LLM_JUDGE_REQUESTS_PER_MINUTE = env_int("LLM_JUDGE_REQUESTS_PER_MINUTE", 60)
LLM_JUDGE_MAX_REQUESTS = env_int("LLM_JUDGE_MAX_REQUESTS", 1000)
LLM_JUDGE_MAX_TOKENS = env_int("LLM_JUDGE_MAX_TOKENS", 1_000_000)
LLM_JUDGE_TIMEOUT = env_int("LLM_JUDGE_TIMEOUT", 60)
LLM_JUDGE_RETRIES = env_int("LLM_JUDGE_RETRIES", 4)
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    # Cookies over HTTPS only; `make demo` alone (production mode on plain HTTP at 127.0.0.1) turns this off.
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
    SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 60 * 60 * 24 * 365)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", True)
    CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

# Celery: a real broker when CELERY_BROKER_URL is set, otherwise tasks run eagerly in-process.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or None
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND") or (
    CELERY_BROKER_URL if CELERY_BROKER_URL and CELERY_BROKER_URL.startswith("redis") else None
)
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {"retrieval.tasks.gpu_*": {"queue": "gpu"}, "assessments.tasks.gpu_*": {"queue": "gpu"}}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Without a broker, work queued while serving a request runs in one background thread of the web process (the
# request answers at once; the page follows the job's progress). Off: it runs before the request answers.
BACKGROUND_THREADS = env_bool("BACKGROUND_THREADS", True)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL") or "INFO"},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        # faiss logs each CPU-specific build it tries (AVX-512, AVX2) as a ModuleNotFoundError before the one that loads.
        "faiss.loader": {"level": "WARNING"},
    },
}

# Where the project's sample data lives (the demo loads it from here).
SAMPLE_DATA_DIR = BASE_DIR / "data"

# REST API (annotation/api/, mounted at /api/): token or session authentication, JSON and the browsable API.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "annotation.api.authentication.TokenAuthentication",  # first: anonymous requests get 401, not 403
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "annotation.api.parsers.JSONParser",  # DRF's, reading through retrieval.ingest.load_json (400s, not 500s)
        "rest_framework.parsers.MultiPartParser",
        "rest_framework.parsers.FormParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "annotation.api.pagination.KeysetPagination",  # each list view names its ordering
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Pooljudge API",
    "DESCRIPTION": (
        "Participants upload runs and read their campaigns' topics; organisers pool runs and download qrels. "
        "Send `Authorization: Token <key>` (manage.py issue_token)."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "annotation.api.schema.error_responses",
    ],
}
# Upload limits: bytes of an uploaded run file, bytes it may unpack to (gzip) and how many times its size (past
# the first MiB), runs per participant and campaign, uploads per user and hour (each one read, stored or not).
API_MAX_UPLOAD_BYTES = env_int("API_MAX_UPLOAD_BYTES", 20 * 1024 * 1024)
API_MAX_UNCOMPRESSED_BYTES = env_int("API_MAX_UNCOMPRESSED_BYTES", 200 * 1024 * 1024)
API_MAX_COMPRESSION_RATIO = env_int("API_MAX_COMPRESSION_RATIO", 100)
API_MAX_RUNS_PER_PARTICIPANT = env_int("API_MAX_RUNS_PER_PARTICIPANT", 5)
API_MAX_UPLOADS_PER_HOUR = env_int("API_MAX_UPLOADS_PER_HOUR", 30)
