"""gunicorn's settings for the web role, one home: deploy/run-production.sh, the load benchmark and the fault scripts
start gunicorn with this file (`-c deploy/gunicorn.conf.py`), so what is measured is what runs. Their command lines
add only where to listen and how many workers and threads (`BIND`, `WEB_WORKERS`, `WEB_THREADS` in production).

- **Each worker listens on its own socket** (`reuse_port`: SO_REUSEPORT, the kernel spreads new connections over
  the workers' sockets). With the one socket that all workers share, Linux gave most kept-alive connections to one
  worker: in `benchmarks/bench_load.py` at 50 assessors one worker used 33.6 s of CPU and the other 3.8 s, so the
  whole site ran under one Python lock (one core) while the other core had room. With it: 20.5 s and 19.9 s.
- **Kept-alive connections for 30 s**: a judging page saves every few seconds over one connection.
- **The loaded application is frozen for the garbage collector** (`gc.freeze()` once the worker has loaded Django):
  the modules, models, URL patterns and compiled templates of a worker live as long as it does, and a full
  collection no longer walks them.
"""

import gc

keepalive = 30
reuse_port = True


def post_worker_init(worker):
    """After the worker has loaded the application: what is alive now lives as long as the worker."""
    gc.freeze()
