"""TREC CAR Y3: outlines become topics with facets, submitted articles become runs.

Outlines come either as the organisers' JSON cast file
(tqa-heading-cast-and-more-6.json: `headings`, `notes`, `titles`,
`includePages`, `trainTitles`, `includeSections`) or as an official CBOR
outlines file. The test topics of the JSON file are `includePages` minus
`trainTitles`; a page's facets are its `includeSections` in file order, titled
from `headings` and annotated from `notes`, each keyed by its section path
`page/heading` (e.g. tqa2:L_0002/T_0016).

Articles (runs) come as Y3 submission files, one page per JSON line, or as the
older single-page files of the assessment tool's trial data (one JSON object,
possibly pretty-printed). A page's paragraphs in order are the article, so the
stored rank is the position in the article. Pages whose squid starts with
`tqa2:` are held to the Y3 submission rules; the trial pages (`tqa:...`,
`enwiki:...`) are taken as they are, except that a paragraph repeated within a
trial page (they do repeat) is kept once, at its first place.

Every importer parses and checks all of its input first and collects every
problem with its place; only a clean input is written, in one transaction.

The formats live apart: car.outlines, car.runs, and the Y3 assessment files in car.assessments
(assessments.exporters.car_y3 writes them); car.common holds what they share.
"""

from assessments.importers.car.common import *  # noqa: F401,F403
from assessments.importers.car.outlines import *  # noqa: F401,F403
from assessments.importers.car.runs import *  # noqa: F401,F403
