"""Word overlap of query and plot (seed 000 eq. 5) and manage.py word_overlap, on the sample queries."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from assessments.evaluation.overlap import stopword_list, word_overlap, words
from tests.assessments.plot_data import load_book


def test_words_are_lower_cased_without_stop_words_punctuation_or_possessives():
    assert words("Buck's master didn't see the well-known dog, it’s late!") == {
        "buck", "master", "see", "well-known", "dog", "late",  # didn't, the, it's: NLTK stop words
    }
    assert words("The, and; of.") == set()
    assert "the" in stopword_list("en_plus") and len(stopword_list("en_plus")) == 179  # NLTK's English list
    assert len(stopword_list("en")) == 33 and "dog" in words("the dog", stopword_list("en"))


def test_the_denominator_is_the_querys_word_set():
    # C = {dog, bit, man} (3), T = {man, bit, dog, ran, far, away, night}: |C ∩ T| = 3 → 1.0, whatever T's size
    assert word_overlap("The dog bit the man.", "The man bit the dog and ran far away in the night.") == 1.0
    # C = {man, bit, dog, ran, far, away, night} (7), T = {dog, bit, man}: 3/7
    assert word_overlap("The man bit the dog and ran far away in the night.", "The dog bit the man.") == 3 / 7
    # repeated words count once (sets)
    assert word_overlap("dog dog cat", "dog") == 1 / 2
    assert word_overlap("the and of", "anything") is None  # no word left: undefined


def run(*args):
    out = io.StringIO()
    call_command("word_overlap", *args, "--no-progress", stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_the_command_gives_each_sample_query_and_the_dataset_mean(tmp_path):
    load_book(tmp_path)  # The Call of the Wild: demo-1 and demo-2
    # demo-1: C = {beating, dog, understands, holds, power, man, speaks, almost, kindly} (9 words);
    #   span "He lay where he had fallen, and from there he watched the man in the red sweater."
    #   T = {lay, fallen, watched, man, red, sweater} → {man}: 1/9 = 11.11 %
    # demo-2: C = {friendly, newcomer, killed, instant, pack, learns, fair, play} (8); the span shares none: 0 %
    # mean: (11.11 + 0) / 2 = 5.56 %
    lines = run("--plot", "span").splitlines()
    assert "call-of-the-wild\tdemo-1\t11.11\t1/9\tman" in lines
    assert "call-of-the-wild\tdemo-2\t0.00\t0/8\t" in lines
    assert "all\tmean\t5.56\t2 queries" in lines
    # the ground-truth chunks say more than the span: demo-1 shares dog and man with them
    data = json.loads(run("--format", "json"))
    [one] = [q for q in data["queries"] if q["topic"] == "demo-1"]
    assert one["shared"] == ["dog", "man"] and one["overlap"] == pytest.approx(2 / 9)
    assert data["datasets"]["all"]["mean_percent"] == pytest.approx(100 * (2 / 9 + 0) / 2)
    assert data["plot"] == "chunks" and data["stopwords"] == "en_plus"
    assert "demo-2" not in run("--topics", "demo-1")


@pytest.mark.django_db
def test_unknown_topics_and_an_empty_database_are_clear_errors(tmp_path):
    with pytest.raises(CommandError, match="no plot topics with ground truth"):
        run()
    load_book(tmp_path)
    with pytest.raises(CommandError, match="no plot topic 'nope'"):
        run("--topics", "demo-1", "nope")
