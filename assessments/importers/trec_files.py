"""Reading TREC run and qrels files fast, as columns, with every check and message of the line-by-line parse.

A file comes in blocks of whole lines (retrieval.ingest.text_batches: streamed, gunzipped, decoded). A block in
the usual shape, every line with its columns and nothing wrong, takes the fast path: the whole block is split
at once, with a marker standing for each line end, so that one check of the markers' places proves that every
line has exactly the expected columns; ranks, scores and grades are checked by one regular expression over the
joined column; duplicates by one set per topic. Any block the fast path cannot vouch for is read again line by
line (`_slow_block`), which adds each problem with its line and field in file order, exactly as before. So the
fast path changes only the speed: both give the same columns and the same problems.

Topic ids are read by topic_ids.topic_id (`051` is topic 51), on both paths.

No Django here: the importers (assessments.importers.trec) and the evaluation of files use these readers.
"""

import math
import re
from array import array
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import ne

from assessments.importers.sniff import but_looks_like
from assessments.importers.topic_ids import topic_id, topic_id_column

MAX_EXTERNAL_ID = 200  # Topic.external_id and Passage.external_id
MAX_SUBTOPIC = 300  # Qrel.subtopic
MAX_GRADE = 2**31 - 1  # Qrel.grade is a 32-bit integer column
NO_SUBTOPIC = {"0", "Q0"}  # qrels column 2 values that mean "no subtopic" (trec_eval ignores the column)
MAX_BAD_KEYS = 100_000  # malformed lines remembered for "first on line N" of a later duplicate

_NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
INTEGER = re.compile(r"[+-]?[0-9]+\Z")
NUMBER = re.compile(_NUMBER + r"\Z")
INTEGERS = re.compile(r"[+-]?[0-9]+(?: [+-]?[0-9]+)*")  # a column joined with spaces: all integers
NUMBERS = re.compile(f"{_NUMBER}(?: {_NUMBER})*")  # all plain decimal numbers
MARK = "\x00"  # stands for a line end in the fast path (decoded text never holds NUL: ingest refuses it)
SPACED_MARK = f" {MARK} "


def parse_score(text):
    """(value, None) for a finite decimal number, else (None, what is wrong)."""
    if NUMBER.match(text):
        value = float(text)
        if math.isfinite(value):
            return value, None
        return None, f"{text!r} is out of range"
    try:
        value = float(text)
    except ValueError:
        return None, f"{text!r} is not a number"
    if not math.isfinite(value):
        return None, f"{text!r} is not a finite number"
    return None, f"{text!r} is not a plain decimal number"


def _topic(qid, written):
    """A topic named in a message: its id, and the line's spelling where topic_id read it otherwise (`051`)."""
    return f"{qid!r}" + (f" (written {written!r})" if written != qid else "")


def _id_too_long(value, problems, number, field):
    if len(value) > MAX_EXTERNAL_ID:
        problems.add(f"longer than {MAX_EXTERNAL_ID} characters", line=number, field=field)
        return True
    return False


def _split_block(text, width):
    """(columns, number of lines) when every line of the block has exactly `width` columns (blank lines only at
    its end); None when the fast path cannot vouch for the block."""
    body = text.rstrip()
    if not body:
        return None
    lines = body.count("\n") + 1
    tokens = body.replace("\n", SPACED_MARK).split()
    step = width + 1
    if len(tokens) != step * lines - 1 or tokens.count(MARK) != lines - 1:
        return None  # a line with other than `width` columns, or a blank line inside
    if lines > 1 and tokens[width::step].count(MARK) != lines - 1:
        return None
    return [tokens[i::step] for i in range(width)], lines


def segments(keys):
    """[(key, start, end)] of the runs of equal neighbours in `keys`."""
    n = len(keys)
    starts = [0, *compress(range(1, n), map(ne, keys[1:], keys[:-1])), n] if n else []
    return [(keys[a], a, b) for a, b in zip(starts, starts[1:])]


def _canonical(keys, spans):
    """`keys` with one string object per segment (a topic id is stored once per run of lines, not per line)."""
    return list(chain.from_iterable(repeat(key, b - a) for key, a, b in spans))


# --- runs ---------------------------------------------------------------------------------------------------


@dataclass
class ParsedRun:
    """A run file's well-formed lines as columns, in file order."""

    lines: array = field(default_factory=lambda: array("q"))  # file line of each row
    qids: list = field(default_factory=list)
    docids: list = field(default_factory=list)
    ranks: list = field(default_factory=list)  # the file's rank column
    scores: list = field(default_factory=list)
    tags: list = field(default_factory=list)  # column 6 of each row
    first_tag_line: dict = field(default_factory=dict)  # tag → the line it first appears on, in that order

    def __len__(self):
        return len(self.qids)

    def first_lines(self, keys) -> dict:
        """{key: the line it first appears on} for the values of one column (qids or docids)."""
        return dict(zip(reversed(keys), reversed(self.lines)))

    def by_topic(self) -> dict:
        """{qid: [row index, …]} in file order, topics in order of first appearance."""
        grouped = {}
        for qid, a, b in segments(self.qids):
            grouped.setdefault(qid, []).extend(range(a, b))
        return grouped

    def trec_eval_order(self, indices) -> list:
        """Row indices of one topic in trec_eval's order: score descending, ties by docid descending (strcmp)."""
        scores, docids = self.scores, self.docids
        return [i for _, _, i in sorted(((scores[i], docids[i], i) for i in indices), reverse=True)]


class _Reader:
    """Feeds blocks to the fast path, or the slow one when the fast path cannot vouch for a block."""

    WIDTH = 0
    result = None
    too_many = "more than a file may hold"  # why max_rows, for the message

    def __init__(self, problems, *, stop_after=None, max_rows=None):
        self.problems = problems
        self.stop_after = stop_after
        self.max_rows = max_rows
        self.seen = {}  # topic (qrels: topic and subtopic) → docids of every well-shaped line so far
        self.bad_keys = {}  # key → line, of well-shaped lines with a bad field (up to MAX_BAD_KEYS)
        self.index = None  # key → first line, built at the first duplicate; then every block goes line by line
        self.stopped_at = None  # the line where stop_after problems stopped the reading

    def feed(self, first, text):
        """Read one block: `first` is its first line's number, text.split("\\n") its lines."""
        if not text or text.isspace():
            return  # blank lines only: nothing to read
        split = None if self.index is not None else _split_block(text, self.WIDTH)
        if split is None or not self._fast_block(first, *split):
            self._slow_block(first, text)
        if self.stopped_at is not None:
            self.problems.stop(f"stopped reading at line {self.stopped_at:,}, after {self.problems.total:,} problems")
        if self.max_rows is not None and len(self.result) > self.max_rows:
            line = self.result.lines[self.max_rows]
            self.problems.stop(f"more than {self.max_rows:,} lines (stopped reading at line {line:,}): {self.too_many}")

    def read(self, batches, progress=None):
        """Feed every (first line, text) block; returns the parsed columns."""
        for first, text in batches:
            self.feed(first, text)
            if progress is not None:
                progress.update(text.count("\n") + 1)
        return self.result

    def _fast_block(self, first, columns, count):
        raise NotImplementedError

    def _slow_block(self, first, text):
        raise NotImplementedError


class RunReader(_Reader):
    """Reads a TREC run (qid Q0 docid rank score tag) block by block into a ParsedRun; every malformed line is a
    problem with its line and field, as the line-by-line parse gave it.

    stop_after: stop reading once that many problems are found (ImportFailed, for uploads: a bad file of
    millions of lines is not read to its end); max_rows: stop once more well-formed lines than that are read
    (`too_many` says why, for the message); None reads everything.
    """

    WIDTH = 6

    def __init__(self, problems, *, stop_after=None, max_rows=None, too_many=None):
        super().__init__(problems, stop_after=stop_after, max_rows=max_rows)
        if too_many:
            self.too_many = too_many
        self.run = self.result = ParsedRun()
        self.tag_objects = {}  # one string object per tag

    def _fast_block(self, first, columns, count):
        qids, _, docids, ranks, scores, tags = columns
        qids = topic_id_column(qids)  # `051` is topic 51 (topic_ids)
        if max(map(len, qids)) > MAX_EXTERNAL_ID or max(map(len, docids)) > MAX_EXTERNAL_ID:
            return False
        if not INTEGERS.fullmatch(" ".join(ranks)) or not NUMBERS.fullmatch(" ".join(scores)):
            return False
        values = list(map(float, scores))
        if not (math.isfinite(max(values)) and math.isfinite(min(values))):
            return False
        spans = segments(qids)
        fresh = {}
        for qid, a, b in spans:
            docs = set(docids[a:b])
            if len(docs) != b - a:
                return False
            if qid in fresh:
                if not fresh[qid].isdisjoint(docs):
                    return False
                fresh[qid] |= docs
            else:
                fresh[qid] = docs
        for qid, docs in fresh.items():
            known = self.seen.get(qid)
            if known is not None and not known.isdisjoint(docs):
                return False
        # Nothing wrong: keep the block.
        for qid, docs in fresh.items():
            known = self.seen.get(qid)
            if known is None:
                self.seen[qid] = docs
            else:
                known |= docs
        run = self.run
        new = set(tags) - run.first_tag_line.keys()
        if new:
            firsts = dict(zip(reversed(tags), reversed(range(count))))
            for tag in sorted(new, key=firsts.__getitem__):
                run.first_tag_line[tag] = first + firsts[tag]
                self.tag_objects[tag] = tag
        run.lines.extend(range(first, first + count))
        run.qids.extend(_canonical(qids, spans))
        run.docids.extend(docids)
        run.ranks.extend(map(int, ranks))
        run.scores.extend(values)
        if len(self.tag_objects) == 1:
            run.tags.extend(repeat(next(iter(self.tag_objects)), count))
        else:
            run.tags.extend(map(self.tag_objects.__getitem__, tags))
        return True

    def _slow_block(self, first, text):
        problems, run, seen = self.problems, self.run, self.seen
        tag_lines = run.first_tag_line
        stop = self.stop_after if self.stop_after is not None else float("inf")
        for number, raw in enumerate(text.split("\n"), start=first):
            if problems.total >= stop:
                self.stopped_at = number
                break
            cols = raw.split()
            if not cols:
                continue
            if len(cols) != 6:
                problems.add(f"expected 6 columns (qid Q0 docid rank score tag), got {len(cols)}"
                             f"{'' if problems.total else but_looks_like(text, 'a TREC run')}", line=number)
                continue
            written, _iteration, docid, rank_text, score_text, tag = cols
            qid = topic_id(written)
            ok = not _id_too_long(qid, problems, number, "qid")
            ok &= not _id_too_long(docid, problems, number, "docid")
            if not INTEGER.match(rank_text):
                problems.add(f"{rank_text!r} is not an integer", line=number, field="rank")
                ok = False
            score, error = parse_score(score_text)
            if error:
                problems.add(error, line=number, field="score")
                ok = False
            tag = self.tag_objects.setdefault(tag, tag)
            tag_lines.setdefault(tag, number)
            known = seen.setdefault(qid, set())
            if docid in known:
                problems.add(
                    f"{docid!r} appears twice for topic {_topic(qid, written)} (first on line "
                    f"{self._first_line(qid, docid)})", line=number, field="docid",
                )
                continue
            known.add(docid)
            if self.index is not None:
                self.index[(qid, docid)] = number
            if not ok:
                if len(self.bad_keys) < MAX_BAD_KEYS:
                    self.bad_keys[(qid, docid)] = number
                continue
            run.lines.append(number)
            run.qids.append(qid)
            run.docids.append(docid)
            run.ranks.append(int(rank_text))
            run.scores.append(score)
            run.tags.append(tag)

    def _first_line(self, qid, docid):
        if self.index is None:  # the first duplicate: from now on every line is indexed
            run = self.run
            self.index = dict(zip(zip(reversed(run.qids), reversed(run.docids)), reversed(run.lines)))
            for key, number in self.bad_keys.items():
                if number < self.index.get(key, number + 1):
                    self.index[key] = number
        return self.index.get((qid, docid), "?")


# --- qrels --------------------------------------------------------------------------------------------------


@dataclass
class ParsedQrels:
    """A qrels file's well-formed lines as columns, in file order; subtopic "" when column 2 is 0 (or Q0)."""

    lines: array = field(default_factory=lambda: array("q"))
    qids: list = field(default_factory=list)
    subtopics: list = field(default_factory=list)
    docids: list = field(default_factory=list)
    grades: list = field(default_factory=list)

    def __len__(self):
        return len(self.qids)

    def first_lines(self, keys) -> dict:
        return dict(zip(reversed(keys), reversed(self.lines)))


class QrelsReader(_Reader):
    """Reads a TREC qrels file (topic iteration docid grade) block by block into a ParsedQrels."""

    WIDTH = 4

    def __init__(self, problems, *, stop_after=None):
        super().__init__(problems, stop_after=stop_after)
        self.qrels = self.result = ParsedQrels()

    def _fast_block(self, first, columns, count):
        qids, iterations, docids, grades = columns
        qids = topic_id_column(qids)
        if not set(iterations) <= NO_SUBTOPIC:
            return False  # subtopics: line by line
        if max(map(len, qids)) > MAX_EXTERNAL_ID or max(map(len, docids)) > MAX_EXTERNAL_ID:
            return False
        if not INTEGERS.fullmatch(" ".join(grades)):
            return False
        values = list(map(int, grades))
        if max(values) > MAX_GRADE or min(values) < -MAX_GRADE:
            return False
        spans = segments(qids)
        fresh = {}
        for qid, a, b in spans:
            docs = set(docids[a:b])
            if len(docs) != b - a or not fresh.get((qid, ""), set()).isdisjoint(docs):
                return False
            fresh.setdefault((qid, ""), set()).update(docs)
        for key, docs in fresh.items():
            known = self.seen.get(key)
            if known is not None and not known.isdisjoint(docs):
                return False
        for key, docs in fresh.items():
            self.seen.setdefault(key, set()).update(docs)
        qrels = self.qrels
        qrels.lines.extend(range(first, first + count))
        qrels.qids.extend(_canonical(qids, spans))
        qrels.subtopics.extend(repeat("", count))
        qrels.docids.extend(docids)
        qrels.grades.extend(values)
        return True

    def _slow_block(self, first, text):
        problems, qrels, seen = self.problems, self.qrels, self.seen
        stop = self.stop_after if self.stop_after is not None else float("inf")
        for number, raw in enumerate(text.split("\n"), start=first):
            if problems.total >= stop:
                self.stopped_at = number
                break
            cols = raw.split()
            if not cols:
                continue
            if len(cols) != 4:
                problems.add(f"expected 4 columns (topic iteration docid grade), got {len(cols)}"
                             f"{'' if problems.total else but_looks_like(text, 'TREC qrels')}", line=number)
                continue
            written, iteration, docid, grade_text = cols
            qid = topic_id(written)
            ok = not _id_too_long(qid, problems, number, "topic")
            ok &= not _id_too_long(docid, problems, number, "docid")
            subtopic = "" if iteration in NO_SUBTOPIC else iteration
            if len(subtopic) > MAX_SUBTOPIC:
                problems.add(f"longer than {MAX_SUBTOPIC} characters", line=number, field="iteration")
                ok = False
            if not INTEGER.match(grade_text):
                problems.add(f"{grade_text!r} is not an integer", line=number, field="grade")
                ok = False
            elif abs(int(grade_text)) > MAX_GRADE:
                problems.add(f"{grade_text!r} is out of range", line=number, field="grade")
                ok = False
            known = seen.setdefault((qid, subtopic), set())
            if docid in known:
                where = f"topic {_topic(qid, written)}" + (f" subtopic {subtopic!r}" if subtopic else "")
                problems.add(
                    f"{docid!r} is graded twice for {where} (first on line {self._first_line(qid, subtopic, docid)})",
                    line=number, field="docid",
                )
                continue
            known.add(docid)
            if self.index is not None:
                self.index[(qid, subtopic, docid)] = number
            if not ok:
                if len(self.bad_keys) < MAX_BAD_KEYS:
                    self.bad_keys[(qid, subtopic, docid)] = number
                continue
            qrels.lines.append(number)
            qrels.qids.append(qid)
            qrels.subtopics.append(subtopic)
            qrels.docids.append(docid)
            qrels.grades.append(int(grade_text))

    def _first_line(self, qid, subtopic, docid):
        if self.index is None:
            q = self.qrels
            keys = zip(reversed(q.qids), reversed(q.subtopics), reversed(q.docids))
            self.index = dict(zip(keys, reversed(q.lines)))
            for key, number in self.bad_keys.items():
                if number < self.index.get(key, number + 1):
                    self.index[key] = number
        return self.index.get((qid, subtopic, docid), "?")
