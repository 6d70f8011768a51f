"""llm_judge against a real OpenAI-compatible HTTP server started on the loopback (answering well, badly, slowly,
busy or failing): strict answers, rate limit, retries with backoff, the spend cap, and resuming without asking
anything twice. No request leaves the machine: the server is 127.0.0.1 and the settings name no other endpoint."""

import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign
from assessments.machine import llm
from assessments.models import MachineJob, MachineLabel, MachineLabelSource, Pool, PoolCandidate, Topic
from tests import factories

pytestmark = pytest.mark.django_db


class FakeLLM(ThreadingHTTPServer):
    """POST /v1/chat/completions. The passage (or comment) text decides the answer:
    `good N` → "##final score: N"; `bad` → prose; `slow` → sleeps past the client's timeout the first time;
    `busy` → 429 (Retry-After: 0) the first time; `flaky` → 503 twice; `broken` → 500 always;
    `plot` / `feeling` → ##plot: yes / no. A test may set `answer` (the prompt → the answer's text, or an HTTP status)
    to answer other prompts (the nugget work: tests/annotation/test_llm_nuggets.py); bytes are the whole body."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests, self.seen, self.times, self.keys = [], Counter(), [], []
        self.lock = threading.Lock()
        self.answer = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        server = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][0]["content"]
        if server.answer is not None:
            with server.lock:
                server.requests.append({"prompt": prompt, "model": body["model"]})
            answer = server.answer(prompt)
            if isinstance(answer, int):
                return self.reply(answer, {"error": "refused"})
            if isinstance(answer, bytes):  # the whole body, as it is
                return self.raw(answer)
            return self.reply(200, {"model": body["model"], "choices": [{"message": {"content": answer}}],
                                    "usage": {"total_tokens": 50}})
        match = re.search(r"Passage: (.*)", prompt) or re.search(r"Comment: (.*)", prompt)
        text = match.group(1).strip()
        with server.lock:
            server.requests.append({"text": text, "model": body["model"], "temperature": body["temperature"]})
            server.seen[text] += 1
            server.times.append(time.monotonic())
            server.keys.append(self.headers.get("Authorization"))
            count = server.seen[text]
        if self.path != "/v1/chat/completions":
            return self.reply(404, {"error": "no such path"})
        if text.startswith("redirect"):  # to another server (server.elsewhere), as a 302
            self.send_response(302)
            self.send_header("Location", server.elsewhere + "/chat/completions")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if text.startswith(("huge", "endless")):  # a body over the cap: said by its length, or never ending
            return self.oversized(llm.MAX_REPLY_BYTES + 1, announced=text.startswith("huge"))
        if "slow" in text and count == 1:
            time.sleep(1.0)
        if "busy" in text and count == 1:
            return self.reply(429, {"error": "rate limited"}, {"Retry-After": "0"})
        if "flaky" in text and count <= 2:
            return self.reply(503, {"error": "overloaded"})
        if "broken" in text:
            return self.reply(500, {"error": "broken"})
        if text.startswith("good"):
            answer = f"##final score: {text.split()[1]}"
        elif "slow" in text or "busy" in text or "flaky" in text:
            answer = "##final score: 2"
        elif text.startswith("nul"):  # a NUL in the reply: no database stores it (PostgreSQL refuses the row)
            answer = "##final score: 2\u0000"
        elif text.startswith("plot"):
            answer = "##plot: yes"
        elif text.startswith("feeling"):
            answer = "##plot: no"
        else:
            answer = "I think this passage is quite relevant to the query."
        self.reply(200, {"model": body["model"] + "-2024", "choices": [{"message": {"role": "assistant", "content": answer}}],
                         "usage": {"prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 100}})

    def oversized(self, size, announced):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if announced:
            self.send_header("Content-Length", str(size))
        self.end_headers()
        try:
            for _ in range(0, size, 65536):
                self.wfile.write(b" " * 65536)
        except OSError:  # the client stopped reading, as it should
            pass
        self.close_connection = True

    def raw(self, payload):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def reply(self, status, data, headers=None):
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def server():
    fake = FakeLLM()
    thread = threading.Thread(target=fake.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.shutdown()
    fake.server_close()


@pytest.fixture(autouse=True)
def judge_settings(settings):
    """No endpoint unless a test names one; no waiting between tries beyond the test's own."""
    settings.LLM_JUDGE_BASE_URL = ""
    settings.LLM_JUDGE_MODEL = ""
    settings.LLM_JUDGE_API_KEY = "sk-test"
    settings.LLM_JUDGE_REQUESTS_PER_MINUTE = 0
    settings.LLM_JUDGE_TIMEOUT = 5
    settings.LLM_JUDGE_RETRIES = 3
    return settings


def make_pool(texts, name="judge-pool"):
    coll = factories.collection("news")
    topic = factories.topic(coll, "q1", kind=Topic.Kind.ADHOC, text="what happened at the harbour")
    pool = Pool.objects.create(name=name, collection=coll, status=Pool.Status.READY)
    pool.topics.set([topic])
    for rank, text in enumerate(texts, start=1):
        PoolCandidate.objects.create(pool=pool, topic=topic, rank=rank,
                                     passage=factories.passage(coll, f"d{rank}", text=text))
    return pool


def judge(server, *args, backoff=0.01):
    out, err = StringIO(), StringIO()
    call_command("llm_judge", "--endpoint", server.url, "--model", "judge-7b", "--no-progress", "--format", "json",
                 *args, stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


def test_good_answers_are_stored_with_the_raw_text_and_a_bad_one_is_an_error_never_a_0(server):
    make_pool(["good 3", "good 0", "bad answer", "good 2"])

    summary, _ = judge(server, "--pool", "judge-pool")

    labels = {l.passage.external_id: l for l in MachineLabel.objects.select_related("passage")}
    assert {d: l.grade for d, l in labels.items()} == {"d1": 3, "d2": 0, "d3": None, "d4": 2}
    assert labels["d1"].raw_answer == "##final score: 3" and labels["d1"].score == 3.0 and labels["d1"].tokens == 100
    assert labels["d3"].raw_answer.startswith("I think") and "no '##final score: N'" in labels["d3"].error
    assert summary["unreadable"] == 1 and summary["errors_now"] == 1 and summary["grades"] == {"0": 1, "1": 0, "2": 1, "3": 1}
    assert summary["unreadable_examples"][0]["passage"] == "d3"
    source = MachineLabelSource.objects.get()
    assert source.kind == "llm" and source.model == "judge-7b" and source.model_version == "judge-7b-2024"
    assert source.settings["temperature"] == 0.0 and "##final score" in source.settings["prompt"]
    assert "sk-test" not in json.dumps(source.settings)  # the key is sent, never stored
    assert all(r["temperature"] == 0 and r["model"] == "judge-7b" for r in server.requests)
    assert set(server.keys) == {"Bearer sk-test"}
    assert MachineJob.objects.get().progress_line().startswith("llm judge #")


@pytest.mark.parametrize("answer, grade", [
    ("##final score: 2", 2), ("M: 2, T: 1\n##final score: 1\n", 1), ("##Final Score:3", 3),
])
def test_answers_in_the_asked_form_are_read(answer, grade):
    assert llm.parse_grade(answer) == grade


@pytest.mark.parametrize("answer, why", [
    ("", "no '##final score: N'"), ("final score: 2", "no '##final score: N'"),
    ("##final score: 4", "'4' is not one of 0, 1, 2, 3"), ("##final score: 2.5", "'2.5' is not one of"),
    ("##final score: 2 out of 3", "is not one of"), ("##final score: 1\n##final score: 2", "2 times"),
    ("##final score: two", "is not one of"),
])
def test_anything_else_is_an_error(answer, why):
    with pytest.raises(llm.AnswerInvalid, match=re.escape(why)):
        llm.parse_grade(answer)


def test_slow_busy_and_flaky_answers_are_tried_again_and_a_broken_one_gives_up(server):
    make_pool(["slow one", "busy one", "flaky one", "broken one"])

    summary, _ = judge(server, "--pool", "judge-pool", "--timeout", "0.3", "--retries", "2")

    grades = dict(MachineLabel.objects.values_list("passage__external_id", "grade"))
    assert grades == {"d1": 2, "d2": 2, "d3": 2, "d4": None}
    assert server.seen["slow one"] == 2 and server.seen["busy one"] == 2 and server.seen["flaky one"] == 3
    assert server.seen["broken one"] == 3  # one try and two retries
    broken = MachineLabel.objects.get(passage__external_id="d4")
    assert broken.error == "gave up after 3 tries: HTTP 500"
    assert summary["requests_now"] == 10 and summary["tokens_now"] == 300


def test_the_waits_between_tries_double(server, monkeypatch):
    make_pool(["broken one"])
    waits = []
    real_run = llm.run
    monkeypatch.setattr(llm, "run", lambda job_id, listener=None: real_run(job_id, listener, sleep=waits.append))
    judge(server, "--pool", "judge-pool", "--retries", "3")
    assert waits == [1.0, 2.0, 4.0]


def test_requests_keep_to_the_rate_limit(server, monkeypatch):
    """Each request leaves at its slot or later, the slots 0.2 s apart (--rate 300). Measured where the limiter lets a
    request go, not where the server receives it: a loaded machine delivers two requests with different delays, and
    the gaps the server saw (once 0.166 s) said nothing about the limiter."""
    make_pool([f"good {n % 4} doc{n}" for n in range(5)])
    slots, left = [], []
    real_wait = llm.RateLimit.wait

    def wait(limiter):
        real_wait(limiter)
        slots.append(limiter.next - limiter.interval)  # the slot this request took
        left.append(limiter.clock())  # when it was let go

    monkeypatch.setattr(llm.RateLimit, "wait", wait)
    judge(server, "--pool", "judge-pool", "--rate", "300")  # one request each 0.2 s
    assert len(server.times) == 5 and len(slots) == 5
    assert all(b - a >= 0.2 - 1e-9 for a, b in zip(slots, slots[1:])), slots
    assert all(went >= slot for went, slot in zip(left, slots)), (left, slots)


def test_the_rate_limit_spaces_slots_and_does_not_save_up_idle_time():
    """RateLimit on a clock of its own: a request waits for its slot; time spent idle is not saved up as a burst."""
    now = [100.0]
    waits = []
    limiter = llm.RateLimit(120, clock=lambda: now[0], sleep=lambda s: (waits.append(s), now.__setitem__(0, now[0] + s)))
    limiter.wait()  # the first goes at once
    limiter.wait()  # the second waits 0.5 s
    now[0] += 10  # idle for 10 s
    limiter.wait()
    limiter.wait()
    assert waits == [0.5, 0.5]


def test_the_spend_cap_stops_the_judge_and_a_higher_cap_goes_on_without_asking_twice(server):
    make_pool([f"good {n % 4} doc{n}" for n in range(6)])

    summary, err = judge(server, "--pool", "judge-pool", "--max-requests", "4")
    assert summary["status"] == "stopped" and summary["labels"] == 4
    assert "spend cap reached: 4 of 4 requests" in err

    again, _ = judge(server, "--pool", "judge-pool", "--max-requests", "4")  # the cap counts every run
    assert again["status"] == "stopped" and again["asked_now"] == 0 and len(server.requests) == 4

    done, _ = judge(server, "--pool", "judge-pool", "--max-requests", "100")
    assert done["status"] == "done" and done["asked_now"] == 2 and done["requests"] == 6
    assert set(server.seen.values()) == {1}  # every item asked once over the three runs

    judge(server, "--pool", "judge-pool", "--max-requests", "100")
    assert len(server.requests) == 6


def test_the_token_cap_counts_the_tokens_the_endpoint_reports(server):
    make_pool([f"good {n % 4} doc{n}" for n in range(5)])
    summary, _ = judge(server, "--pool", "judge-pool", "--max-tokens", "250")
    assert summary["labels"] == 3 and summary["tokens"] == 300 and summary["status"] == "stopped"


def test_a_run_that_dies_half_way_resumes_without_asking_twice(server, monkeypatch):
    make_pool([f"good {n % 4} doc{n}" for n in range(6)])
    real_create = MachineLabel.objects.bulk_create
    stored = []

    def dies_after_three(objs, **kwargs):
        if len(stored) == 3:
            raise ConnectionResetError("worker killed")
        stored.extend(objs)
        return real_create(objs, **kwargs)

    monkeypatch.setattr(MachineLabel.objects, "bulk_create", dies_after_three)
    with pytest.raises(CommandError, match="worker killed"):
        judge(server, "--pool", "judge-pool")
    assert MachineLabel.objects.count() == 3 and len(server.requests) == 4  # the 4th answer was lost with the worker
    monkeypatch.setattr(MachineLabel.objects, "bulk_create", real_create)

    summary, _ = judge(server, "--pool", "judge-pool")

    assert summary["labels"] == 6 and summary["asked_now"] == 3
    assert sorted(server.seen.values()) == [1, 1, 1, 1, 1, 2]  # only the lost answer was asked again
    assert MachineLabelSource.objects.count() == 1


def test_limit_asks_at_most_n_and_retry_errors_asks_the_unreadable_again(server):
    make_pool(["good 1", "bad", "good 2"])
    first, _ = judge(server, "--pool", "judge-pool", "--limit", "2")
    assert first["asked_now"] == 2 and first["unreadable"] == 1
    judge(server, "--pool", "judge-pool")
    assert server.seen["bad"] == 1
    judge(server, "--pool", "judge-pool", "--retry-errors")
    assert server.seen["bad"] == 2 and MachineLabel.objects.count() == 3


def test_a_campaigns_own_prompt_makes_its_own_judge(server):
    make_pool(["good 1"])
    factories.campaign("news", Campaign.Task.ADHOC,
                       settings={"llm_prompt": "Rate it.\nQuery: {query}\nPassage: {passage}\n##final score: N"})
    judge(server, "--pool", "judge-pool")
    judge(server, "--pool", "judge-pool", "--campaign", "news")
    sources = list(MachineLabelSource.objects.order_by("pk"))
    assert len(sources) == 2 and sources[1].settings["prompt"].startswith("Rate it.")
    assert sources[1].campaign_id == Campaign.objects.get().pk and server.requests[1]["text"] == "good 1"


def test_the_query_filter_keeps_plots_and_drops_feelings(server):
    coll = factories.collection("book")
    for n, text in enumerate(["plot: the dog pulls the sled", "feeling: this is so funny!", "muddled"], start=1):
        factories.topic(coll, f"c{n}", kind=Topic.Kind.PLOT, text=text)

    summary, _ = judge(server, "--filter-queries", "--topics", "c1", "c2", "c3")

    assert summary["keep"] == ["c1"] and summary["drop"] == ["c2"] and summary["unreadable"] == 1
    assert MachineLabelSource.objects.get().kind == "query_filter"
    assert MachineLabel.objects.filter(passage__isnull=True).count() == 3


@pytest.mark.parametrize("args, message", [
    ([], "--endpoint: no LLM endpoint is configured"),
    (["--endpoint", "ftp://x"], "--endpoint: 'ftp://x' is not an http(s) URL"),
])
def test_nothing_is_sent_without_an_endpoint(args, message):
    make_pool(["good 1"])
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("llm_judge", "--pool", "judge-pool", "--model", "m", *args, stdout=StringIO())
    assert not MachineLabelSource.objects.exists()


def test_a_refused_key_stops_the_judge(server):
    make_pool(["good 1", "good 2"])
    with pytest.raises(CommandError, match="HTTP 404"):
        call_command("llm_judge", "--pool", "judge-pool", "--endpoint", server.url + "/wrong", "--model", "m",
                     "--no-progress", stdout=StringIO(), stderr=StringIO())
    assert len(server.requests) == 1 and MachineJob.objects.get().status == "failed"


def test_a_campaign_prompt_without_its_fields_is_refused(server):
    make_pool(["good 1"])
    factories.campaign("news", Campaign.Task.ADHOC, settings={"llm_prompt": "Rate: {query}"})
    with pytest.raises(CommandError, match=re.escape("--llm-prompt: the campaign's prompt has no {passage}")):
        judge(server, "--pool", "judge-pool", "--campaign", "news")


def test_a_redirect_is_not_followed_and_the_key_goes_nowhere_else(server):
    """urllib follows a 302 of a POST with the request's headers: the key would go to the address it names."""
    elsewhere = FakeLLM()
    thread = threading.Thread(target=elsewhere.serve_forever, daemon=True)
    thread.start()
    try:
        server.elsewhere = elsewhere.url
        make_pool(["redirect me", "good 2"])
        with pytest.raises(CommandError, match=r"HTTP 302 .*the endpoint redirects .*a redirect is not followed"):
            judge(server, "--pool", "judge-pool")
        assert elsewhere.requests == [] and elsewhere.keys == []
        assert MachineJob.objects.get().status == "failed"
    finally:
        elsewhere.shutdown()
        elsewhere.server_close()


def test_a_reply_over_the_size_cap_is_one_unreadable_answer_and_the_rest_goes_on(server, monkeypatch):
    monkeypatch.setattr(llm, "MAX_REPLY_BYTES", 200_000)  # the cap is 8 MB; a small one keeps the test small
    make_pool(["huge 1", "endless 1", "good 2"])
    summary, _ = judge(server, "--pool", "judge-pool")
    labels = {l.passage.external_id: l for l in MachineLabel.objects.select_related("passage")}
    assert labels["d3"].grade == 2
    assert "200,001 bytes, over the 200,000 taken" in labels["d1"].error and labels["d1"].grade is None
    assert "over the 200,000 bytes taken" in labels["d2"].error and labels["d2"].grade is None
    assert summary["errors_now"] == 2


def test_a_reply_with_a_nul_is_one_unreadable_answer_not_a_failed_job(server):
    """Issue 38 item 6: one LLM reply with a NUL failed the whole job (the row could not be stored)."""
    make_pool(["nul 2", "good 3"])
    summary, _ = judge(server, "--pool", "judge-pool")
    labels = {l.passage.external_id: l for l in MachineLabel.objects.select_related("passage")}
    assert labels["d2"].grade == 3 and labels["d1"].grade is None
    assert "a NUL character" in labels["d1"].error and "\x00" not in labels["d1"].raw_answer
    assert summary["errors_now"] == 1 and MachineJob.objects.get().status == "done"
