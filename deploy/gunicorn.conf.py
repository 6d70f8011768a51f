"""gunicorn's settings for the web role, one home: deploy/run-production.sh, the load benchmark and the fault scripts
start gunicorn with this file (`-c deploy/gunicorn.conf.py`), so what is measured is what runs. The environment
sets where to listen (`BIND`, 0.0.0.0:8000), the workers (`WEB_WORKERS`, two per CPU this process may run on; set
it in a container whose CPU quota is smaller than the machine), the threads of each (`WEB_THREADS`, 2) and
gunicorn's access log (`WEB_ACCESS_LOG`: none, `-` for stdout, or a file; the HTTPS proxy keeps one).

- **Many workers of few threads** (4 × 2 on two cores, not 2 × 16). Each worker is one Python process with one
  interpreter lock: with 16 threads in it, a save that waits for PostgreSQL five times waits for the lock five times
  behind whatever page is being rendered. `benchmarks/bench_load.py --fill 100000 --levels 50 --rate 300` (open
  loop, 300 saves/s offered), 26 Nov 2026: save p99 643 ms with 2 × 16, 75 ms with 2 × 4, 70 and 176 ms with 4 × 2
  (two runs); page p95 97, 37, 39 and 94 ms. Closed loop at 50 assessors: 411 saves/s with 4 × 2 against 340/s
  with 2 × 16. Fewer threads also mean fewer PostgreSQL connections (one per thread).
- **Each worker listens on its own socket** (`reuse_port`: SO_REUSEPORT, the kernel spreads new connections over
  the workers' sockets). With the one socket that all workers share, Linux gave most kept-alive connections to one
  worker: in the load benchmark at 50 assessors one worker used 33.6 s of CPU and the other 3.8 s, so the whole site
  ran under one interpreter lock while the other core had room. With it: 20.5 s and 19.9 s.
- **HTTP parsed in C** (`gunicorn_h1c`, gunicorn's own picohttpparser binding, a dependency: gunicorn's `auto`
  parser takes it when it is installed, and falls back to its Python parser when not). `bench_save_cpu.py --server
  --saves 100 --pages 10 --rounds 40`, 26 Nov 2026: 0.945 of the CPU a save costs the machine, 0.946 of a page's.
- **Kept-alive connections for 30 s**: a judging page saves every few seconds over one connection.
- **The loaded application is frozen for the garbage collector** (`gc.freeze()` once the worker has loaded Django):
  the modules, models, URL patterns and compiled templates of a worker live as long as it does, and a full
  collection no longer walks them. The youngest generation is collected after 50,000 allocations instead of 700:
  a request's objects are freed by reference counting long before, so most young collections found nothing to
  free. `benchmarks/bench_save_cpu.py --server --saves 100 --pages 10 --rounds 40`, 26 Nov 2026: 0.973 of the CPU
  a save, 0.964 of a page load.
"""

import gc
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # gunicorn reads this file before the app's path
from config.env import env_int  # noqa: E402  (the project's one reader of numbers from the environment)

bind = os.environ.get("BIND") or "0.0.0.0:8000"
workers = env_int("WEB_WORKERS", 2 * len(os.sched_getaffinity(0)), minimum=1)
threads = env_int("WEB_THREADS", 2, minimum=1)
accesslog = os.environ.get("WEB_ACCESS_LOG") or None
keepalive = 30
reuse_port = True


def post_worker_init(worker):
    """After the worker has loaded the application: what is alive now lives as long as the worker; young objects
    are collected less often."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
