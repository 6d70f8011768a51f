"""manage.py word_overlap [--topics ID ...] [--collection C] [--plot chunks|span] [--stopwords en_plus|en] [--format text|json]"""

import json

from django.core.management.base import BaseCommand, CommandError

from assessments.evaluation.overlap import DEFAULT_STOPWORDS, PLOT_TEXTS, STOPWORD_LISTS, dataset_means, topic_overlaps
from assessments.models import Topic
from retrieval.ingest import progress


class Command(BaseCommand):
    help = (
        "Word overlap of each plot query with its ground-truth plot (seed 000 eq. 5: |C ∩ T| / |C|, stop words "
        "removed) and the mean per dataset (collection) in percent, as in seed 000 Table 2. See "
        "assessments/evaluation/overlap.py for the tokenisation and stop-word list."
    )

    def add_arguments(self, parser):
        parser.add_argument("--topics", "--topic", dest="topics", nargs="+", action="extend", default=[], metavar="ID",
                            help="Only these plot topics (external ids; default: every plot topic with ground truth).")
        parser.add_argument("--collection", help="Only the plot topics of this collection (book).")
        parser.add_argument("--plot", choices=PLOT_TEXTS, default="chunks",
                            help="chunks (default): the ground-truth chunks' text; span: the verbatim ground-truth span.")
        parser.add_argument("--stopwords", choices=sorted(STOPWORD_LISTS), default=DEFAULT_STOPWORDS,
                            help="en_plus (default): NLTK's English list as bm25s ships it; en: bm25s' short list.")
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument("--no-progress", action="store_true", help="Do not show a progress bar.")

    def handle(self, *args, **opts):
        topics = Topic.objects.filter(kind=Topic.Kind.PLOT).select_related("collection").prefetch_related("ground_truth")
        if opts["collection"]:
            topics = topics.filter(collection__name=opts["collection"])
        if opts["topics"]:
            wanted = list(dict.fromkeys(opts["topics"]))
            topics = topics.filter(external_id__in=wanted)
            missing = [t for t in wanted if t not in {x.external_id for x in topics}]
            if missing:
                where = f" in collection {opts['collection']!r}" if opts["collection"] else ""
                raise CommandError(f"--topics: no plot topic {', '.join(map(repr, missing))}{where}")
        else:
            topics = topics.filter(ground_truth__isnull=False).distinct()
        topics = list(topics.order_by("collection__name", "external_id"))
        if not topics:
            raise CommandError("there are no plot topics with ground truth (import some with import_plot_queries)")
        no_truth = [t.external_id for t in topics if not (t.ground_truth_text if opts["plot"] == "span" else t.ground_truth.all())]
        if no_truth:
            raise CommandError(f"--topics: {', '.join(map(repr, no_truth))} have no ground truth to compare with")
        rows = topic_overlaps(topics, plot=opts["plot"], stopwords=opts["stopwords"],
                              progress=lambda it: progress(it, total=len(topics), desc="topics",
                                                           enabled=not opts["no_progress"]))
        means = dataset_means(rows)
        if opts["format"] == "json":
            self.stdout.write(json.dumps({
                "plot": opts["plot"], "stopwords": opts["stopwords"],
                "queries": [
                    {"topic": r.topic, "dataset": r.dataset, "query_words": r.query_words, "shared": r.shared,
                     "overlap": r.overlap} for r in rows
                ],
                "datasets": {name: {"mean_percent": mean, "queries": n, "left_out": out}
                             for name, (mean, n, out) in means.items()},
            }, indent=2))
            return
        self.stdout.write(f"# word overlap |C ∩ T| / |C| (seed 000 eq. 5), plot={opts['plot']}, stopwords={opts['stopwords']}")
        self.stdout.write("dataset\ttopic\toverlap\tshared/query words\tshared")
        for r in rows:
            value = "-" if r.overlap is None else f"{100 * r.overlap:.2f}"
            self.stdout.write(f"{r.dataset}\t{r.topic}\t{value}\t{len(r.shared)}/{r.query_words}\t{' '.join(r.shared)}")
        for name, (mean, n, out) in means.items():
            value = "-" if mean is None else f"{mean:.2f}"
            note = f" ({out} without words left out)" if out else ""
            self.stdout.write(f"{name}\tmean\t{value}\t{n} quer{'y' if n == 1 else 'ies'}{note}")
