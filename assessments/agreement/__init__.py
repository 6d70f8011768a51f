"""Agreement between assessors: α, κ, all/none agree, span overlap and ranking stability from a units × assessors matrix.

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
