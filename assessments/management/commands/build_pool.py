"""manage.py build_pool --name NAME [--topics ID…] [--runs NAME…] [--retrievers SPEC…] [--strategy …] [--depth K] [--per-topic N]"""

import logging
import time

from django.core.management.base import BaseCommand, CommandError

from assessments.models import Pool, Run, Topic
from assessments.services.pooling import PoolError, define_pool, pool_jobs
from assessments.services.runs import RunLookupError, find_runs, matching
from retrieval import fusion
from retrieval.models import Collection

POLL_SECONDS = 1.0


class Command(BaseCommand):
    help = (
        "Define a pool and build it. Candidates come from stored runs (--runs) and/or our retrievers "
        "(--retrievers bm25 dense[:MODEL] rerank:MODEL…; each retriever's output is saved as a run). "
        "Strategies: union (depth-k TREC pooling), rrf (fused top-N; --fusion combsum|combmnz too), "
        "rerank (the union re-scored by the re-rankers' ensemble, seed 002). With no --topics, every topic "
        "of the collection. Running it again with the same inputs gives the same pool."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="Pool name (a slug); an existing pool takes these inputs.")
        parser.add_argument("--collection", help="Collection name (needed when it cannot be told from the runs).")
        parser.add_argument("--topics", nargs="+", default=[], metavar="ID", help="Topic ids (default: all).")
        parser.add_argument(
            "--runs", nargs="+", default=[], metavar="NAME",
            help="Stored runs to pool (OWNER/NAME where teams share a name).",
        )
        parser.add_argument(
            "--retrievers", nargs="+", default=[], metavar="SPEC",
            help="bm25[:k1=…,b=…], dense[:MODEL][,pooling=…,query_prefix=…,index=flat|ivf|hnsw], rerank:MODEL",
        )
        parser.add_argument("--strategy", choices=Pool.Strategy.values, default=Pool.Strategy.UNION)
        parser.add_argument("--depth", type=int, default=20, metavar="K", help="How deep into each run (default 20).")
        parser.add_argument("--per-topic", type=int, metavar="N", help="At most N candidates a topic.")
        parser.add_argument("--fusion", choices=fusion.METHODS, default="rrf", help="For --strategy rrf.")
        parser.add_argument("--normalisation", choices=("minmax", "zscore"), default="minmax")
        parser.add_argument("--rrf-k", type=int, default=fusion.RRF_K, help="RRF constant (default 60).")
        parser.add_argument("--no-wait", action="store_true", help="With a broker: queue the build and return.")
        parser.add_argument("--no-progress", action="store_true", help="Do not show job progress.")

    def handle(self, *args, **opts):
        if opts["depth"] < 1 or (opts["per_topic"] is not None and opts["per_topic"] < 1):
            raise CommandError("--depth and --per-topic must be at least 1")
        collection = self.collection(opts)
        topics = self.topics(collection, opts["topics"])
        runs = self.runs(collection, opts["runs"])
        try:
            pool = define_pool(
                name=opts["name"], collection=collection, topics=topics, runs=runs, retrievers=opts["retrievers"],
                strategy=opts["strategy"], depth=opts["depth"], per_topic=opts["per_topic"],
                fusion_method=opts["fusion"], normalisation=opts["normalisation"], rrf_k=opts["rrf_k"],
            )
        except PoolError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"Pool {pool.name}: {len(topics)} topics, {len(runs)} runs, retrievers {opts['retrievers'] or 'none'}, "
            f"strategy {pool.strategy}, depth {pool.depth}, per topic {pool.per_topic or 'all'}."
        )
        from assessments.tasks import build_pool

        started = time.perf_counter()
        if build_pool.app.conf.task_always_eager:
            with self.progress_shown(not opts["no_progress"]):
                build_pool.apply(args=[pool.pk])
        else:
            build_pool.delay(pool.pk)
            if opts["no_wait"]:
                self.stdout.write("Queued; follow it in the admin (Pools, Jobs) or with resume_job --list.")
                return
            self.wait(pool, not opts["no_progress"])
        pool.refresh_from_db()
        seconds = time.perf_counter() - started
        if pool.status == Pool.Status.FAILED:
            raise CommandError(f"pool {pool.name} failed: {pool.error}")
        self.stdout.write(
            f"Pool {pool.name} {pool.status}: {pool.candidates.count():,} candidates over {len(topics)} topics "
            f"in {seconds:.1f} s."
        )

    def collection(self, opts):
        if opts["collection"]:
            found = Collection.objects.filter(name=opts["collection"]).first()
            if found is None:
                raise CommandError(f"no collection named {opts['collection']!r}")
            return found
        if opts["runs"]:
            ids = set()
            for name in opts["runs"]:
                ids.update(matching(Run.objects.all(), name).values_list("collection_id", flat=True))
            if len(ids) == 1:
                return Collection.objects.get(pk=ids.pop())
            if len(ids) > 1:
                raise CommandError("these run names exist in several collections: name one with --collection")
        ids = set(Topic.objects.values_list("collection_id", flat=True).distinct())
        if len(ids) == 1:
            return Collection.objects.get(pk=ids.pop())
        raise CommandError("name the collection with --collection")

    def topics(self, collection, ids):
        qs = Topic.objects.filter(collection=collection)
        if not ids:
            topics = list(qs.order_by("pk"))
            if not topics:
                raise CommandError(f"collection {collection.name!r} has no topics")
            return topics
        found = {t.external_id: t for t in qs.filter(external_id__in=ids)}
        missing = [i for i in ids if i not in found]
        if missing:
            raise CommandError(f"collection {collection.name!r} has no topics {', '.join(missing[:10])}")
        return [found[i] for i in dict.fromkeys(ids)]

    def runs(self, collection, names):
        in_collection = Run.objects.filter(collection=collection)
        missing = [n for n in names if not matching(in_collection, n).exists()]
        if missing:
            raise CommandError(f"collection {collection.name!r} has no runs {', '.join(missing[:10])}")
        try:
            return find_runs(names, in_collection, field="--runs")
        except RunLookupError as exc:
            raise CommandError(str(exc)) from None

    def progress_shown(self, enabled):
        """While building in this process, the workers' progress lines go to stderr."""
        command = self

        class Shown:
            def __enter__(self):
                self.handler = logging.StreamHandler(command.stderr)
                self.handler.setFormatter(logging.Formatter("  %(message)s"))
                self.logger = logging.getLogger("retrieval.jobs")
                self.saved = self.logger.propagate, self.logger.level, self.logger.disabled
                if enabled:
                    self.logger.addHandler(self.handler)
                    self.logger.propagate = False
                    # shown whatever the site's LOG_LEVEL made of INFO, or a logging set-up in this process (a Celery
                    # worker's, a dictConfig disabling the loggers it found) made of the logger
                    self.logger.setLevel(logging.INFO)
                    self.logger.disabled = False

            def __exit__(self, *exc):
                if enabled:
                    self.logger.removeHandler(self.handler)
                    self.logger.propagate, level, self.logger.disabled = self.saved
                    self.logger.setLevel(level)

        return Shown()

    def wait(self, pool, show):
        """Poll the pool and its jobs until it is ready or failed, printing what changed."""
        seen = {}
        while True:
            pool.refresh_from_db()
            if show:
                for job in pool_jobs(pool):
                    line = job.progress_line()
                    if seen.get(job.pk) != line:
                        seen[job.pk] = line
                        self.stderr.write("  " + line)
            if pool.status in (Pool.Status.READY, Pool.Status.FAILED):
                return
            time.sleep(POLL_SECONDS)
