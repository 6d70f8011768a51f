"""Agreement between assessors from a units × assessors matrix: α, κ, all/none agree, span overlap, ranking stability.

Pure statistics (ratings, statistics, spans, ranking, csvfile) know no campaigns and no database;
judgements builds the matrices of each label layer from Judgement rows.
"""

from assessments.agreement.ratings import (
    LEVELS, AgreementInputError, Ratings, ratings_from_arrays, ratings_from_triples,
)
from assessments.agreement.statistics import figures, pair_figures

__all__ = [
    "LEVELS", "AgreementInputError", "Ratings", "figures", "pair_figures", "ratings_from_arrays",
    "ratings_from_triples",
]
