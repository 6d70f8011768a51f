"""Plot labels: a plot query and its pool's candidate chunks of books, each graded on the campaign's scale, with the
query's spans that a candidate answers (annotation.services.plot)."""

from annotation.services import plot
from annotation.units import pooled, reviewing
from annotation.units.registry import UnitKind, register

UNIT = register(UnitKind(
    kind="plot_labels", title="Plot labelling", noun=plot.PLOT_NOUN, layers=plot.PLOT_LAYERS,
    template="annotation/plot.html", script="annotation/plot.js", data_id="plot-data",
    page=plot.plot_page, change_key=plot.plot_change_key, progress=plot.plot_progress,
    progress_of_units=pooled.progress_of_units, review_units=reviewing.candidate_units,
    review_labels=reviewing.passage_labels, queue_row="annotation/queue/_pooled.html",
))
