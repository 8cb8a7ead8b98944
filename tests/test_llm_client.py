"""The LLM client: cache, budgets, concurrency bound, rate limiter, validation, usage accounting and logging."""

from __future__ import annotations

import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from llm_fakes import FakeBackend, FakeLLM, completion

from arbiter.contracts import TokenUsage
from arbiter.llm.budget import TokenBudget
from arbiter.llm.cache import DiskCache
from arbiter.llm.client import LLMClient, estimate_tokens, parse_answer
from arbiter.llm.config import LLMSettings
from arbiter.llm.port import BudgetExhausted, LLMError, LLMRequest, RawCompletion
from arbiter.net.limiter import RateLimiter

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "issues": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"severity": {"enum": ["MAJOR", "MINOR"]}, "message": {"type": "string"}},
                "required": ["severity", "message"],
            },
        }
    },
    "required": ["issues"],
}
GOOD = {"issues": [{"severity": "MINOR", "message": "ok"}]}
SECRET = "PATIENT JANE DOE DOB 1970-01-01"


def request(prompt: str = f"<<<DOCUMENT>>> {SECRET} <<<END DOCUMENT>>>", **kwargs: Any) -> LLMRequest:
    values: dict[str, Any] = {
        "purpose": "V2",
        "model": "gemini-2.5-flash",
        "system": "Check the classification.",
        "prompt": prompt,
        "response_schema": SCHEMA,
        "max_output_tokens": 1000,
    }
    values.update(kwargs)
    return LLMRequest(**values)


def settings(tmp_path: Path, **overrides: Any) -> LLMSettings:
    values: dict[str, Any] = {"backend": "replay", "rpm": 0, "cache_dir": tmp_path / "cache"}
    values.update(overrides)
    return LLMSettings(**values)


def client(tmp_path: Path, backend: FakeBackend, **overrides: Any) -> LLMClient:
    config = settings(tmp_path, **overrides)
    return LLMClient(backend, config, DiskCache(config.cache_dir))


class FakeClock:
    """A clock whose sleep advances time, recording every sleep."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


# --- answers: parsing, validation ---------------------------------------------------------------


def test_valid_answer_is_parsed_and_reported(tmp_path: Path) -> None:
    """A valid answer comes back parsed, with its usage, not cached."""
    backend = FakeBackend([completion(GOOD, input_tokens=300, output_tokens=40)])
    response = client(tmp_path, backend).complete(request())
    assert response.data == GOOD
    assert response.usage == TokenUsage(input_tokens=300, output_tokens=40)
    assert response.cached is False
    assert response.finish_reason == "STOP"


def test_invalid_json_raises_invalid_json(tmp_path: Path) -> None:
    """Text that is not JSON (e.g. cut short) raises LLMError invalid_json and is not cached."""
    llm = client(tmp_path, FakeBackend([completion('{"issues": [{"sever'), completion(GOOD)]))
    with pytest.raises(LLMError) as caught:
        llm.complete(request())
    assert caught.value.kind == "invalid_json"
    assert llm.complete(request()).cached is False


def test_off_schema_raises_off_schema_with_location(tmp_path: Path) -> None:
    """Valid JSON that breaks the schema raises off_schema naming where, without quoting the answer."""
    bad = {"issues": [{"severity": "CATASTROPHIC", "message": SECRET}]}
    with pytest.raises(LLMError) as caught:
        client(tmp_path, FakeBackend([completion(bad)])).complete(request())
    assert caught.value.kind == "off_schema"
    assert "/issues/0/severity" in caught.value.message
    assert SECRET not in caught.value.message
    assert "CATASTROPHIC" not in caught.value.message


def test_fenced_json_is_accepted() -> None:
    """One ```json fenced block (common with on-premises models) is unwrapped before parsing."""
    assert parse_answer("```json\n" + json.dumps(GOOD) + "\n```", SCHEMA) == GOOD


@given(st.text(max_size=200))
def test_parse_never_crashes(text: str) -> None:
    """Any text either parses and validates or raises LLMError; nothing else escapes."""
    kind = None
    try:
        parse_answer(text, SCHEMA)
    except LLMError as error:
        kind = error.kind
    assert kind in {None, "invalid_json", "off_schema"}


def test_backend_error_propagates_and_is_counted(tmp_path: Path) -> None:
    """A backend LLMError reaches the caller unchanged and is counted by kind."""
    llm = client(tmp_path, FakeBackend([LLMError("blocked", "The model refused.")]))
    with pytest.raises(LLMError) as caught:
        llm.complete(request())
    assert caught.value.kind == "blocked"
    assert llm.totals()["errors"] == {"blocked": 1}


def test_unexpected_backend_exception_becomes_transport_error(tmp_path: Path) -> None:
    """A backend bug (any other exception) fails closed as LLMError transport, without its text."""

    def broken(request: LLMRequest) -> RawCompletion:
        raise KeyError(SECRET)

    llm = client(tmp_path, FakeBackend([broken]))
    with pytest.raises(LLMError) as caught:
        llm.complete(request())
    assert caught.value.kind == "transport"
    assert SECRET not in caught.value.message
    assert llm.run_budget.used == 0


def test_unwritable_cache_still_returns_the_answer(tmp_path: Path) -> None:
    """A cache that cannot be written costs the next run a call, not this call its answer."""
    (tmp_path / "cache").write_text("a file where the cache directory should be")
    response = client(tmp_path, FakeBackend([completion(GOOD)])).complete(request())
    assert response.data == GOOD


# --- cache ---------------------------------------------------------------------------------------


def test_cache_hit_makes_no_call_and_costs_nothing(tmp_path: Path) -> None:
    """The same request twice: one backend call; the second answer is cached with zero usage and cost."""
    backend = FakeBackend([completion(GOOD)])
    llm = client(tmp_path, backend)
    doc = llm.for_document("d1")
    doc.complete(request())
    before = doc.usage()
    second = doc.complete(request())
    assert backend.calls == 1
    assert second.cached is True
    assert second.data == GOOD
    assert second.usage == TokenUsage()
    assert doc.usage() == before
    assert doc.stats()["cache_hits"] == 1


def test_rerun_over_same_cache_costs_zero(tmp_path: Path) -> None:
    """A second client over the same cache directory (a re-run) makes zero calls and costs zero."""
    client(tmp_path, FakeBackend([completion(GOOD)])).complete(request())
    backend = FakeBackend()
    rerun = client(tmp_path, backend)
    assert rerun.complete(request()).cached is True
    totals = rerun.totals()
    assert backend.calls == 0
    assert (totals["calls"], totals["cache_hits"], totals["cost_usd"]) == (0, 1, 0.0)


def test_cache_hit_needs_no_budget(tmp_path: Path) -> None:
    """A cached answer is returned even to a document whose budget could not afford a call."""
    client(tmp_path, FakeBackend([completion(GOOD)])).complete(request())
    rerun = client(tmp_path, FakeBackend(), doc_token_budget=1)
    assert rerun.for_document("d1").complete(request()).cached is True


def test_no_cache_reads_nothing_but_still_writes(tmp_path: Path) -> None:
    """With use_cache False (--no-cache) the model is asked again, and the fresh answer replaces the entry."""
    client(tmp_path, FakeBackend([completion(GOOD)])).complete(request())
    fresh = {"issues": []}
    backend = FakeBackend([completion(fresh)])
    response = client(tmp_path, backend, use_cache=False).complete(request())
    assert (backend.calls, response.cached, response.data) == (1, False, fresh)
    assert client(tmp_path, FakeBackend()).complete(request()).data == fresh


def test_cache_file_holds_no_prompt(tmp_path: Path) -> None:
    """Cache entries hold the answer only: the prompt's text is nowhere on disk."""
    client(tmp_path, FakeBackend([completion(GOOD)])).complete(request())
    files = list((tmp_path / "cache").rglob("*.json"))
    assert len(files) == 1
    assert files[0].parent.name == files[0].stem[:2]
    assert SECRET not in files[0].read_text()


def test_cache_entry_that_no_longer_validates_is_a_miss(tmp_path: Path) -> None:
    """A tampered cache entry that fails the schema is ignored and the model asked again."""
    cache = DiskCache(tmp_path / "cache")
    cache.put(request().key(), completion({"issues": "tampered"}))
    backend = FakeBackend([completion(GOOD)])
    assert client(tmp_path, backend).complete(request()).data == GOOD
    assert backend.calls == 1


@pytest.mark.parametrize("content", ["", "{not json", "[]", '{"format": 1, "key": "other", "text": "x"}'])
def test_corrupted_cache_file_is_a_miss(tmp_path: Path, content: str) -> None:
    """An unreadable or foreign cache file is a miss, never an error."""
    cache = DiskCache(tmp_path)
    key = request().key()
    cache.path(key).parent.mkdir(parents=True)
    cache.path(key).write_text(content)
    assert cache.get(key) is None


def test_cache_round_trip(tmp_path: Path) -> None:
    """put then get returns the same completion; the requested model fills in a missing one."""
    cache = DiskCache(tmp_path)
    raw = RawCompletion(
        text='{"a": 1}', usage=TokenUsage(input_tokens=5, output_tokens=2), finish_reason="STOP"
    )
    cache.put("ab" * 32, raw, "gemini-2.5-flash")
    assert cache.get("ab" * 32) == RawCompletion(
        text='{"a": 1}', usage=raw.usage, model="gemini-2.5-flash", finish_reason="STOP"
    )


def test_cache_refuses_keys_that_are_not_digests(tmp_path: Path) -> None:
    """Keys are hex digests, so no key can name a path outside the cache."""
    with pytest.raises(ValueError, match="hex"):
        DiskCache(tmp_path).get("../../etc/passwd")


# --- budgets -------------------------------------------------------------------------------------


def test_document_budget_exhaustion_raises_and_spares_other_documents(tmp_path: Path) -> None:
    """When a document's budget cannot fit the next request it raises BudgetExhausted; other documents go on."""
    backend = FakeBackend(default=completion(GOOD, input_tokens=900, output_tokens=100))
    llm = client(tmp_path, backend, doc_token_budget=2000, use_cache=False, thinking_budget=0)
    first = llm.for_document("d1")
    first.complete(request())
    with pytest.raises(BudgetExhausted) as caught:
        first.complete(request())
    assert caught.value.kind == "budget_exhausted"
    assert caught.value.message.startswith("This document's token budget (2,000) is used up.")
    assert backend.calls == 1
    llm.for_document("d2").complete(request())
    assert backend.calls == 2


def test_run_budget_is_shared_by_documents(tmp_path: Path) -> None:
    """The run budget counts every document's tokens; once used up, a new document is refused too."""
    backend = FakeBackend(default=completion(GOOD, input_tokens=900, output_tokens=100))
    llm = client(tmp_path, backend, run_token_budget=2500, use_cache=False, thinking_budget=0)
    llm.for_document("d1").complete(request())
    llm.for_document("d2").complete(request(prompt="other"))
    with pytest.raises(BudgetExhausted) as caught:
        llm.for_document("d3").complete(request(prompt="third"))
    assert caught.value.message.startswith("The run's token budget (2,500) is used up.")
    assert llm.totals()["errors"] == {"budget_exhausted": 1}
    assert llm.run_budget.used == 2000


def test_failed_call_releases_its_reservation(tmp_path: Path) -> None:
    """A call that fails without an answer charges nothing against the budgets."""
    llm = client(tmp_path, FakeBackend([LLMError("timeout", "The model did not answer in time.")]))
    doc = llm.for_document("d1")
    with pytest.raises(LLMError):
        doc.complete(request())
    assert (doc.budget.used, doc.budget.remaining, llm.run_budget.used) == (0, 200_000, 0)


def test_answer_without_usage_is_charged_its_estimate(tmp_path: Path) -> None:
    """A backend that reports no usage is charged the request's estimate, so budgets still bind."""
    raw = RawCompletion(text=json.dumps(GOOD))
    doc = client(tmp_path, FakeBackend([raw])).for_document("d1")
    doc.complete(request())
    assert doc.budget.used == estimate_tokens(replace(request(), thinking_budget=2048))


def test_unparseable_answer_is_still_charged(tmp_path: Path) -> None:
    """Tokens of an answer that fails validation were spent, so they count."""
    doc = client(tmp_path, FakeBackend([completion("nope", input_tokens=50, output_tokens=5)])).for_document(
        "d"
    )
    with pytest.raises(LLMError):
        doc.complete(request())
    assert doc.budget.used == 55
    assert doc.usage()[:2] == (1, TokenUsage(input_tokens=50, output_tokens=5))


def test_budget_reservations_are_thread_safe() -> None:
    """Concurrent reservations never admit more than the limit."""
    budget = TokenBudget(1000)
    admitted: list[int] = []

    def take() -> None:
        try:
            budget.reserve(10)
            admitted.append(1)
        except BudgetExhausted:
            pass

    with ThreadPoolExecutor(16) as pool:
        for _ in range(500):
            pool.submit(take)
    assert len(admitted) == 100


def test_unlimited_budget_counts_but_never_refuses() -> None:
    """A limit of 0 or None means unlimited."""
    for limit in (0, None):
        budget = TokenBudget(limit)
        budget.settle(budget.reserve(10**9), 10**9)
        assert budget.remaining is None
        assert budget.used == 10**9


# --- accounting and logging ----------------------------------------------------------------------


def test_usage_and_cost_per_document_and_run(tmp_path: Path) -> None:
    """Calls, tokens and cost are counted per document and summed for the run at the configured prices."""
    backend = FakeBackend(default=completion(GOOD, input_tokens=1_000_000, output_tokens=100_000))
    llm = client(
        tmp_path,
        backend,
        price_input_per_m=0.30,
        price_output_per_m=2.50,
        doc_token_budget=0,
        use_cache=False,
    )
    doc = llm.for_document("d1")
    doc.complete(request())
    llm.for_document("d2").complete(request())
    calls, tokens, cost = doc.usage()
    assert (calls, tokens) == (1, TokenUsage(input_tokens=1_000_000, output_tokens=100_000))
    assert cost == pytest.approx(0.55)
    totals = llm.totals()
    assert (totals["calls"], totals["input_tokens"], totals["output_tokens"]) == (2, 2_000_000, 200_000)
    assert totals["cost_usd"] == pytest.approx(1.10)


def test_document_view_stamps_doc_id(tmp_path: Path) -> None:
    """Requests sent through a document view carry its doc_id (for logs and batch keys)."""
    backend = FakeBackend([completion(GOOD)])
    client(tmp_path, backend).for_document("doc-7").complete(request())
    assert backend.history[0].doc_id == "doc-7"


def test_logs_never_contain_prompt_or_answer(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Success, cache hit and every failure log ids and counts, never the prompt or the answer."""
    answer = {"issues": [{"severity": "MINOR", "message": "ANSWER-TEXT-42"}]}
    backend = FakeBackend(
        [
            completion(answer),
            completion("not json " + SECRET),
            completion({"issues": [{"severity": "X", "message": SECRET}]}),
            LLMError("rate_limited", "Too many requests.", retryable=True, retry_after_s=0.0),
            LLMError("blocked", "The model refused."),
        ]
    )
    llm = client(tmp_path, backend, rate_limit_retries=0)
    caplog.set_level(logging.DEBUG)
    doc = llm.for_document("d1")
    doc.complete(request())
    doc.complete(request())
    for n in range(4):
        with pytest.raises(LLMError):
            doc.complete(request(prompt=f"{SECRET} {n}"))
    text = "\n".join(record.getMessage() for record in caplog.records)
    assert "d1" in text
    assert SECRET not in text
    assert "ANSWER-TEXT-42" not in text
    assert "Check the classification" not in text


# --- concurrency and rate limit ------------------------------------------------------------------


def test_concurrency_bound_is_respected(tmp_path: Path) -> None:
    """With many callers, no more than settings.concurrency backend calls run at once, and all are used: each
    call waits until three are in flight together (24 calls, 8 rounds of 3)."""
    three_at_once = threading.Barrier(3)
    backend = FakeBackend(
        default=completion(GOOD), latency_s=1.0, sleep=lambda _delay: three_at_once.wait(timeout=20)
    )
    llm = client(tmp_path, backend, concurrency=3, use_cache=False)
    with ThreadPoolExecutor(12) as pool:
        list(pool.map(lambda n: llm.for_document(f"d{n}").complete(request(prompt=str(n))), range(24)))
    assert backend.calls == 24
    assert backend.max_in_flight == 3
    assert llm.totals()["calls"] == 24


def test_limiter_spaces_requests_at_rpm() -> None:
    """At 60 requests a minute, requests are spaced one second apart after the burst."""
    clock = FakeClock()
    limiter = RateLimiter(60, burst=2, clock=clock, sleep=clock.sleep)
    times = []
    for _ in range(5):
        limiter.acquire()
        times.append(clock.now)
    assert times == [0.0, 0.0, 1.0, 2.0, 3.0]


def test_limiter_unlimited_never_waits() -> None:
    """rpm 0 means no limit."""
    clock = FakeClock()
    limiter = RateLimiter(0, clock=clock, sleep=clock.sleep)
    for _ in range(100):
        limiter.acquire()
    assert clock.sleeps == []


def test_limiter_recovers_burst_after_idle() -> None:
    """After an idle spell the burst is available again, without accumulating beyond it."""
    clock = FakeClock()
    limiter = RateLimiter(60, burst=2, clock=clock, sleep=clock.sleep)
    limiter.acquire()
    clock.now = 100.0
    times = []
    for _ in range(3):
        limiter.acquire()
        times.append(clock.now)
    assert times == [100.0, 100.0, 101.0]


def test_penalise_pauses_every_caller() -> None:
    """After penalise(retry_after), the next request waits until the server's delay has passed."""
    clock = FakeClock()
    limiter = RateLimiter(0, clock=clock, sleep=clock.sleep)
    limiter.penalise(7.5)
    limiter.acquire()
    assert clock.now == pytest.approx(7.5)
    assert limiter.paused_until == pytest.approx(7.5)


def test_penalty_arriving_while_waiting_is_honoured() -> None:
    """A caller that booked a slot before a 429 arrived still waits for the pause to end."""
    clock = FakeClock()
    limiter = RateLimiter(60, clock=clock, sleep=clock.sleep)
    limiter.acquire()

    def sleep_then_penalise(seconds: float) -> None:
        clock.sleep(seconds)
        if clock.now < 5:
            limiter.penalise(10)

    limiter._sleep = sleep_then_penalise
    limiter.acquire()
    assert clock.now >= 11.0


def test_rate_limited_then_success_pauses_and_retries(tmp_path: Path) -> None:
    """A 429 with a retry delay pauses the limiter for that delay, then the retry succeeds."""
    clock = FakeClock()
    backend = FakeBackend(
        [LLMError("rate_limited", "Too many requests.", retryable=True, retry_after_s=7.0), completion(GOOD)]
    )
    config = settings(tmp_path)
    llm = LLMClient(backend, config, None, limiter=RateLimiter(0, clock=clock, sleep=clock.sleep))
    assert llm.complete(request()).data == GOOD
    assert clock.sleeps == [7.0]
    totals = llm.totals()
    assert (backend.calls, totals["calls"], totals["rate_limit_retries"], totals["errors"]) == (2, 2, 1, {})


def test_rate_limited_without_delay_backs_off(tmp_path: Path) -> None:
    """A 429 without a server delay pauses 2 s, then 4 s, before retrying."""
    clock = FakeClock()
    limited = LLMError("rate_limited", "Too many requests.", retryable=True)
    backend = FakeBackend([limited, limited, completion(GOOD)])
    llm = LLMClient(backend, settings(tmp_path), None, limiter=RateLimiter(0, clock=clock, sleep=clock.sleep))
    llm.complete(request())
    assert clock.sleeps == [2.0, 4.0]


def test_rate_limited_beyond_retries_raises(tmp_path: Path) -> None:
    """After rate_limit_retries retries the 429 reaches the caller as rate_limited."""
    clock = FakeClock()
    limited = LLMError("rate_limited", "Too many requests.", retryable=True, retry_after_s=1.0)
    backend = FakeBackend([limited, limited, completion(GOOD)])
    config = settings(tmp_path, rate_limit_retries=1)
    llm = LLMClient(backend, config, None, limiter=RateLimiter(0, clock=clock, sleep=clock.sleep))
    with pytest.raises(LLMError) as caught:
        llm.complete(request())
    assert caught.value.kind == "rate_limited"
    assert backend.calls == 2
    assert llm.totals()["errors"] == {"rate_limited": 1}


def test_parallel_documents_count_exactly(tmp_path: Path) -> None:
    """Totals stay exact under concurrent documents with a cache shared between them."""
    backend = FakeBackend(default=completion(GOOD, input_tokens=10, output_tokens=1), latency_s=0.001)
    llm = client(tmp_path, backend, concurrency=8)
    prompts = [f"p{n % 10}" for n in range(60)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda p: llm.for_document(p).complete(request(prompt=p)), prompts))
    totals = llm.totals()
    assert totals["calls"] + totals["cache_hits"] == 60
    assert totals["calls"] == backend.calls
    assert totals["input_tokens"] == 10 * backend.calls


# --- fakes ---------------------------------------------------------------------------------------


def test_fake_llm_validates_like_the_client() -> None:
    """FakeLLM answers by purpose and applies the same schema check as the real client."""
    fake = FakeLLM(by_purpose={"V2": GOOD, "V3": {"issues": "wrong"}})
    assert fake.complete(request()).data == GOOD
    with pytest.raises(LLMError) as caught:
        fake.complete(request(purpose="V3"))
    assert caught.value.kind == "off_schema"
    assert fake.calls == 2
