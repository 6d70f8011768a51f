"""Agreement figures over many labels (the facet layer's sets of facets) equal the packages', in bounded memory."""

import tracemalloc

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

from assessments.agreement import Ratings
from assessments.agreement.statistics import (
    alpha_in_blocks, cohen, cohen_of_codes, figures, fleiss, krippendorff_alpha, value_counts,
)


def random_ratings(rng, level, units, labels, assessors=5, missing=0.3):
    codes = rng.integers(0, labels, size=(assessors, units)).astype(float)
    codes[rng.random(codes.shape) < missing] = np.nan
    scale = list(range(labels)) if level != "ratio" else list(range(1, labels + 1))
    return Ratings(level, scale, [f"a{i}" for i in range(assessors)], codes)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", range(6))
def test_alpha_in_blocks_equals_the_package_on_the_dense_value_counts(level, seed):
    rng = np.random.default_rng(seed)
    ratings = random_ratings(rng, level, units=int(rng.integers(5, 80)), labels=int(rng.integers(2, 30)))
    pairable = (~np.isnan(ratings.codes)).sum(axis=0) >= 2
    counts = value_counts(ratings.codes[:, pairable], len(ratings.labels))
    domain = np.arange(len(ratings.labels)) if level in ("nominal", "ordinal") else ratings.numeric_labels()
    expected = krippendorff.alpha(value_counts=counts.dense(), value_domain=domain, level_of_measurement=level)
    assert alpha_in_blocks(counts, domain, level, rows=7) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    # and the three ways krippendorff_alpha takes: dense, dense over the labels given, in blocks
    for cells in (10**9, len(counts) * len(np.flatnonzero(counts.totals())) ** 2, 0):
        assert krippendorff_alpha(counts, ratings, dense_cells=cells)[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_fleiss_and_cohen_equal_statsmodels_on_the_tables(seed):
    rng = np.random.default_rng(seed)
    ratings = random_ratings(rng, "nominal", units=60, labels=int(rng.integers(2, 40)), missing=0.2)
    pairable = (~np.isnan(ratings.codes)).sum(axis=0) >= 2
    counts = value_counts(ratings.codes[:, pairable], len(ratings.labels))
    dense = counts.dense()
    kappa, _, units, raters = fleiss(counts)
    table = dense[dense.sum(axis=1) == raters]
    assert units == len(table) and kappa == fleiss_kappa(table, method="fleiss")  # the same arithmetic, bit for bit
    a, b = ratings.codes[0], ratings.codes[1]
    both = ~np.isnan(a) & ~np.isnan(b)
    a, b = a[both].astype(int), b[both].astype(int)
    count = len(ratings.labels)
    pair_table = np.bincount(a * count + b, minlength=count * count).reshape(count, count)
    assert cohen_of_codes(a, b, count)[0] == cohens_kappa(pair_table, return_results=False)


@pytest.mark.parametrize("seed", range(8))
def test_cohen_simple_and_weighted_equal_statsmodels_which_the_site_no_longer_installs(seed):
    """cohen() wrote its κ with statsmodels; statsmodels (with pandas and patsy) is now the suite's check only, and
    the written-out arithmetic gives its figures, weighted by uneven label positions too."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(2, 7))
    table = rng.integers(0, 9, size=(size, size)).astype(float)
    positions = np.cumsum(rng.integers(1, 4, size=size)).astype(float)
    assert cohen(table)[0] == pytest.approx(cohens_kappa(table, return_results=False), rel=1e-12)
    weighted = cohens_kappa(table, weights=positions, wt="linear", return_results=False)
    assert cohen(table, weights=positions)[0] == pytest.approx(weighted, rel=1e-12)


def test_the_agreement_statistics_do_not_import_statsmodels():
    import subprocess
    import sys

    script = "import sys, assessments.agreement.statistics; print(sorted(m for m in ('statsmodels', 'pandas') " \
             "if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=__file__.rsplit("/tests/", 1)[0])
    assert out.stdout.strip() == "[]", out.stdout + out.stderr[-2000:]


def test_thousands_of_labels_take_megabytes_not_the_packages_units_times_labels_squared():
    """3,000 units of 5 assessors over 2,000 labels (each unit's topic has 20): the package's dense array of
    3,000 × 2,000 × 2,000 float64 would be 96 GB."""
    rng = np.random.default_rng(3)
    topic = rng.integers(0, 100, size=3000)
    codes = (topic * 20 + rng.integers(0, 20, size=(5, 3000))).astype(float)
    ratings = Ratings("nominal", list(range(2000)), [f"a{i}" for i in range(5)], codes)
    tracemalloc.start()
    try:
        result = figures(ratings, most=12)  # as the dashboard asks: confusion matrices of 12 labels
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result["alpha"] is not None and result["units"] == 3000 and len(result["pairs"]) == 10
    assert peak < 32 * 2**20
    folded = result["pairs"][0]["confusion"]
    assert len(folded["labels"]) == 12 and folded["labels"][-1] == "(other)"
    assert sum(map(sum, folded["matrix"])) == 3000


def test_an_unfolded_confusion_matrix_over_many_labels_keeps_the_labels_the_pair_used():
    """The API's matrices (no folding): past FULL_DOMAIN_LABELS labels, the rows and columns of labels neither
    assessor of the pair gave are left out; the counts are the full matrix's, nothing else moves."""
    from assessments.agreement.statistics import FULL_DOMAIN_LABELS

    rng = np.random.default_rng(5)
    labels = 400
    codes = np.full((2, 50), np.nan)
    codes[0] = rng.integers(0, labels, size=50)
    codes[1] = np.where(rng.random(50) < 0.5, codes[0], rng.integers(0, labels, size=50))
    ratings = Ratings("nominal", [f"facet-{i}" for i in range(labels)], ["a", "b"], codes)
    confusion = figures(ratings)["pairs"][0]["confusion"]
    used = sorted({int(c) for c in codes.ravel()})
    assert labels > FULL_DOMAIN_LABELS and confusion["labels"] == [f"facet-{i}" for i in used]
    full = np.zeros((labels, labels), dtype=int)
    for x, y in zip(codes[0].astype(int), codes[1].astype(int), strict=True):
        full[x, y] += 1
    assert confusion["matrix"] == full[np.ix_(used, used)].tolist()
    small = Ratings("nominal", ["x", "y", "z"], ["a", "b"], np.array([[0.0, 1.0], [0.0, 0.0]]))
    # a gave x, y; b gave x, x: a small domain keeps all its labels
    assert figures(small)["pairs"][0]["confusion"] == {"labels": ["x", "y", "z"], "matrix": [[1, 0, 0], [1, 0, 0], [0, 0, 0]]}
