"""Getting judgements out of the system (and the CAR Y3 JSON back in).

- `car_y3`: the detailed TREC CAR Y3 JSON of seed 004 Appendix A, one file per topic and
  assessor, export and import; every wire name of that format (MustLabel, SameTransition,
  NONE_OF_THESE...) lives there and nowhere else.
- `qrels`: TREC qrels (`topic 0 docid grade`) from judgements or from a stored qrel set.
- `common`: what both share: choosing topics and assessors, atomic file writes, byte order.

Exporters stream: one database query read with iterator(), nothing loaded whole.
"""
