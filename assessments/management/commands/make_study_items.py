"""manage.py make_study_items --pool P --kind choice --run R [--n 20] [--topics ID ...]
manage.py make_study_items --pool P --kind pair [--book SLUG] [--encoder dense[:MODEL]] [--count 20]
manage.py make_study_items --pool P --kind pair --runs R1 R2 | --pools P1 P2 [--depth 5] [--topics ID ...]"""

from django.core.management.base import BaseCommand, CommandError

from assessments import studies
from retrieval.ingest import progress


class Command(BaseCommand):
    help = (
        "Make the human-study items of a pool. choice (seed 000 §5.3, seed 001 §4): per plot topic the ground "
        "truth and N-1 hard negatives, the run's best-ranked chunks that share no sentence with it; the run's "
        "best-ranked candidate is its choice. pair (seed 003): the encoder's most and least similar pairs of the "
        "book's chunks, to rate 1-10; or, with --runs or --pools, the chunks two rankings put at rank 1, 2, ... of each "
        "topic, paired rank by rank. The same arguments give the same items again (updated, never duplicated)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--pool", required=True, help="The pool the items belong to.")
        parser.add_argument("--kind", required=True, choices=[k.value for k in studies.StudyItem.Kind])
        parser.add_argument("--run", help="choice: the retriever run the negatives come from (and whose choice is scored).")
        parser.add_argument("--n", type=int, default=studies.DEFAULT_CHOICES,
                            help=f"choice: candidates per item, the ground truth included (default {studies.DEFAULT_CHOICES}; 3 in seed 001).")
        parser.add_argument("--topics", "--topic", dest="topics", nargs="+", action="extend", default=[], metavar="ID",
                            help="choice: only these plot topics of the pool (default: all).")
        parser.add_argument("--book", help="pair: the book whose chunks are paired (default: the pool's book).")
        parser.add_argument("--encoder", default="dense",
                            help="pair: a dense retriever spec, e.g. dense or dense:MODEL,pooling=mean (default: dense).")
        parser.add_argument("--count", type=int, default=studies.DEFAULT_PAIRS,
                            help=f"pair: pairs, half most and half least similar (default {studies.DEFAULT_PAIRS}).")
        parser.add_argument("--min-distance", type=float, default=studies.DEFAULT_MIN_DISTANCE,
                            help="pair: chunks nearer than this many sentences are not paired.")
        parser.add_argument("--max-similarity", type=float,
                            help="pair: leave out pairs above this cosine similarity (near duplicates; seed 003 used 0.3).")
        parser.add_argument("--max-passages", type=int, default=studies.MAX_PAIR_PASSAGES,
                            help="pair: encode at most this many chunks, taken evenly through the book.")
        parser.add_argument("--runs", nargs=2, metavar=("RUN", "RUN"),
                            help="pair: pair the chunks these two runs rank at the same rank, per topic.")
        parser.add_argument("--pools", nargs=2, metavar=("POOL", "POOL"),
                            help="pair: pair the candidates these two pools rank at the same rank, per topic.")
        parser.add_argument("--depth", type=int, default=studies.DEFAULT_PAIR_DEPTH,
                            help=f"pair with --runs or --pools: ranks paired (default {studies.DEFAULT_PAIR_DEPTH}).")
        parser.add_argument("--no-progress", action="store_true", help="Do not show a progress bar.")

    def handle(self, *args, **opts):
        try:
            pool, run = studies.resolve_pool_and_run(opts["pool"], opts["run"])
            if opts["kind"] == studies.StudyItem.Kind.CHOICE:
                if run is None:
                    raise CommandError("--kind choice needs --run (the retriever whose top ranks give the negatives)")
                items = studies.make_forced_choice_items(pool, run, n=opts["n"], topics=opts["topics"] or None)
                hits = sum(i.retriever_choice_id == i.answer_id for i in items)
                self.stdout.write(
                    f"{len(items)} forced-choice items of {opts['n']} candidates in pool {pool.name} from run "
                    f"{run.name}; the run picks the ground truth in {hits} of them."
                )
                return
            if opts["runs"] or opts["pools"]:
                items = self._ranked_pairs(pool, opts)
                self.stdout.write(f"{len(items)} pairs in pool {pool.name} from {'runs' if opts['runs'] else 'pools'} "
                                  f"{' and '.join(opts['runs'] or opts['pools'])}, ranks 1-{opts['depth']}.")
                return
            if opts["topics"] or run is not None:
                raise CommandError("--kind pair takes no --run or --topics (each pair gets a plot topic of its book)")
            bar = progress(total=None, desc="encoding", unit="chunk", enabled=not opts["no_progress"])
            with bar:
                items = studies.make_pair_items(
                    pool, book=opts["book"] or studies.pool_book(pool), encoder=opts["encoder"], count=opts["count"],
                    min_distance=opts["min_distance"], max_similarity=opts["max_similarity"],
                    max_passages=opts["max_passages"], progress=bar.update,
                )
        except studies.StudyError as exc:
            raise CommandError(str(exc)) from exc
        most = [i.similarity for i in items if i.metadata["group"] == "most"]
        least = [i.similarity for i in items if i.metadata["group"] == "least"]
        self.stdout.write(
            f"{len(items)} pairs in pool {pool.name}: {len(most)} most similar (cosine {min(most):.3f}-{max(most):.3f})"
            + (f", {len(least)} least similar ({min(least):.3f}-{max(least):.3f})" if least else "") + "."
        )

    @staticmethod
    def _ranked_pairs(pool, opts):
        """Pair items from two runs or two pools of the pool's collection (studies.make_ranked_pair_items)."""
        from assessments.models import Pool

        if opts["kind"] != studies.StudyItem.Kind.PAIR or (opts["runs"] and opts["pools"]) or opts["run"]:
            raise studies.StudyError("--runs and --pools: one of them, with --kind pair and no --run")
        if opts["runs"]:
            sources = [studies.resolve_pool_and_run(pool.name, name)[1] for name in opts["runs"]]
        else:
            sources = []
            for name in opts["pools"]:
                found = Pool.objects.filter(name=name).first()
                if found is None:
                    raise studies.StudyError(f"--pools: no pool named {name!r}")
                sources.append(found)
        return studies.make_ranked_pair_items(pool, *sources, depth=opts["depth"], topics=opts["topics"] or None)
