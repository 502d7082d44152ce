"""The LLM client (`agents.llm.client.LLMClient`) against the built-in server over real HTTP.

Covers: the local OpenAI-compatible server itself (`/v1/models`, chat with `usage`, the
`random-valid` and `echo` models, embeddings, unknown models, fault injection by header);
retries on 429/500/503 with `Retry-After` honoured, clear errors after `max_retries`, on
unreadable bodies and on timeouts, and no retry on a 404; the per-episode `Budget` (calls
and tokens, checked before any request is sent); the on-disk cache (hits make no request,
what misses, another endpoint, temperature > 0, damaged entries; `cache_note`); the API key
never showing in reprs, logs or cache files; the concurrency bound; the cost table. Nothing
leaves 127.0.0.1, and no test writes outside its tmp_path.

The server counts fault attempts per distinct request (model + messages) for its whole
life, and one server serves the module, so every test sends messages of its own (`ask`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import openai
import pytest

import agents
import teamenvs
from agents.embedders import OpenAIEmbedder
from agents.llm.client import Budget, BudgetExceeded, LLMClient, LLMError, Usage, cache_note, sendable
from agents.llm.policy import make_llm_policies
from agents.llm.server import MODELS, LocalLLMServer, parse_faults, valid_examples
from teamenvs.wrappers.vector import worker_cpus

EXAMPLES = ("invest group 40", "invest individual 15", "wait")
VALID_BLOCK = (
    "Valid actions now:\n"
    "- invest group <amount 15-100>: put money in the group pool (e.g. invest group 40)\n"
    "- invest individual <amount 15-100>: keep it safe (e.g. invest individual 15)\n"
    "- wait: do nothing (e.g. wait)"
)


def ask(tag: str) -> list[dict[str, str]]:
    """Messages unique to one test (the server's fault counters are per distinct request)."""
    return [
        {"role": "system", "content": "You are a trader."},
        {"role": "user", "content": f"[{tag}] Round 1 of 30.\n\n{VALID_BLOCK}\n\nEnd with ACTION: <command>"},
    ]


def make_client(server, model: str = "random-valid", **options) -> LLMClient:
    options.setdefault("cache", False)
    options.setdefault("backoff_base", 0.001)
    options.setdefault("timeout", 5.0)
    return LLMClient(model, base_url=server.url, **options)


def chat(client: LLMClient, messages, **kwargs):
    """One call in a fresh event loop, closing the connections before the loop ends."""

    async def once():
        try:
            return await client.chat(messages, **kwargs)
        finally:
            await client.aclose()

    return asyncio.run(once())


def gather(client: LLMClient, batches, **kwargs):
    """Concurrent calls in one loop: (results or exceptions, seconds the gather took)."""

    async def run():
        try:
            started = time.perf_counter()
            out = await asyncio.gather(*(client.chat(m, **kwargs) for m in batches), return_exceptions=True)
            return out, time.perf_counter() - started
        finally:
            await client.aclose()

    return asyncio.run(run())


def post(server, path: str, body: dict, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def action_line(text: str) -> str:
    last = text.strip().splitlines()[-1]
    assert last.startswith("ACTION: "), text
    return last.removeprefix("ACTION: ")


# ---------------------------------------------------------------------------- the server


def test_models_endpoint_lists_the_models(server):
    with openai.OpenAI(base_url=server.url, api_key="x", max_retries=0, timeout=5) as client:
        ids = [m.id for m in client.models.list()]
    assert sorted(ids) == sorted(MODELS) == ["echo", "random-valid"]


def test_chat_returns_usage_counted_from_the_text(server):
    messages = ask("usage")
    status, body = post(server, "/v1/chat/completions", {"model": "random-valid", "messages": messages})
    assert status == 200
    usage = body["usage"]
    prompt = "\n".join(m["content"] for m in messages)
    reply = body["choices"][0]["message"]["content"]
    assert usage["prompt_tokens"] == len(prompt) // 4 > 0
    assert usage["completion_tokens"] == max(1, len(reply) // 4)
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert body["choices"][0]["message"]["role"] == "assistant"


def test_random_valid_picks_a_listed_example_deterministically(server):
    client = make_client(server)
    picks = [action_line(chat(client, ask(f"pick {i}")).text) for i in range(12)]
    assert set(picks) <= set(EXAMPLES)
    assert len(set(picks)) > 1, "random-valid must choose among the examples, not always the same one"
    again = [action_line(chat(client, ask(f"pick {i}")).text) for i in range(12)]
    assert again == picks  # same request, same answer
    # the reply is a reasoning sentence then the ACTION line
    text = chat(client, ask("pick 0")).text
    assert len(text.splitlines()) == 2 and text.splitlines()[0].strip()


def test_valid_examples_and_parse_faults_helpers():
    assert valid_examples("Your view.\n\n" + VALID_BLOCK + "\n\nEnd with ACTION: <command>") == list(EXAMPLES)
    assert valid_examples("no block here") == []
    assert parse_faults("latency=200+429=2,malformed") == {"latency": 200.0, "429": 2.0, "malformed": 1.0}
    with pytest.raises(ValueError, match="name=number"):
        parse_faults("latency=soon")


def test_echo_answers_with_the_last_user_message(server):
    messages = [
        {"role": "system", "content": "system text"},
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "an answer"},
        {"role": "user", "content": "the last user message\nwith two lines"},
    ]
    result = chat(make_client(server, "echo"), messages)
    assert result.text == "the last user message\nwith two lines"
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0


def test_embeddings_are_the_normalised_hashing_vectors(server):
    embedders = pytest.importorskip("agents.embedders")
    texts = ["invest in the group pool", "keep the money for myself"]
    with openai.OpenAI(base_url=server.url, api_key="x", max_retries=0, timeout=5) as client:
        response = client.embeddings.create(model="hashing", input=texts)
    vectors = np.array([d.embedding for d in sorted(response.data, key=lambda d: d.index)])
    assert vectors.shape[0] == 2
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(vectors, np.asarray(embedders.HashingEmbedder().embed(texts)), atol=1e-6)
    assert not np.allclose(vectors[0], vectors[1])
    assert response.usage.prompt_tokens > 0


def test_unknown_model_is_a_404_naming_the_models(server):
    status, body = post(server, "/v1/chat/completions", {"model": "gpt-nonexistent", "messages": ask("404")})
    assert status == 404
    message = body["error"]["message"]
    assert "gpt-nonexistent" in message and "random-valid" in message and "echo" in message


def test_fault_header_injects_per_request(server):
    body = {"model": "random-valid", "messages": ask("header")}
    status, first = post(server, "/v1/chat/completions", body, {"X-Fault": "500=1"})
    assert status == 500 and "injected fault" in first["error"]["message"]
    status, second = post(server, "/v1/chat/completions", body, {"X-Fault": "500=1"})
    assert status == 200 and action_line(second["choices"][0]["message"]["content"]) in EXAMPLES


# ---------------------------------------------------------------------------- retries


@pytest.mark.parametrize("fault, retries", [("429=2", 2), ("500=1", 1), ("503=1", 1), ("429=1+500=2+503=3", 3)])
def test_transient_errors_are_retried_and_counted(server, fault, retries):
    client = make_client(server, f"random-valid+{fault}")
    before = server.requests
    ledger = Usage()
    result = chat(client, ask(f"retry {fault}"), ledger=ledger)
    assert action_line(result.text) in EXAMPLES
    assert result.usage.retries == retries and ledger.retries == retries and ledger.calls == 1
    assert client.requests == retries + 1
    assert server.requests - before == retries + 1


def test_retry_after_is_honoured(server):
    client = make_client(server, "random-valid+429=2+retry_after=0.3", backoff_base=0.001)
    started = time.perf_counter()
    result = chat(client, ask("retry-after"))
    elapsed = time.perf_counter() - started
    assert result.usage.retries == 2
    assert elapsed >= 2 * 0.3, f"two retries with Retry-After 0.3 s took only {elapsed:.3f}s"
    assert result.usage.latency_s >= 2 * 0.3


def test_without_retry_after_the_tiny_backoff_is_used(server):
    # a 500 carries no Retry-After: the delay is backoff_base * 2**attempt with jitter, i.e. milliseconds
    client = make_client(server, "random-valid+500=2", backoff_base=0.001)
    started = time.perf_counter()
    result = chat(client, ask("no retry-after"))
    assert result.usage.retries == 2
    assert time.perf_counter() - started < 0.3


def test_after_max_retries_the_error_says_what_failed(server):
    client = make_client(server, "random-valid+500=10", max_retries=2)
    ledger = Usage()
    with pytest.raises(LLMError) as info:
        chat(client, ask("give up"), ledger=ledger)
    message = str(info.value)
    assert not isinstance(info.value, BudgetExceeded)
    assert "after 3 attempts" in message
    assert "HTTP 500" in message and "injected fault" in message
    assert "random-valid+500=10" in message and server.url in message
    assert client.requests == 3
    assert ledger.calls == 1 and ledger.retries == 2  # the failed call is still on the ledger


def test_unreadable_bodies_are_retried_then_fail_clearly(server):
    client = make_client(server, "random-valid+badjson", max_retries=2)
    before = server.requests
    with pytest.raises(LLMError, match=r"after 3 attempts: the reply could not be read"):
        chat(client, ask("badjson"))
    assert server.requests - before == 3


def test_a_hanging_server_times_out_with_a_clear_message(server):
    """Sampled (temperature > 0): each timed-out attempt is abandoned and the request sent again."""
    client = make_client(server, "random-valid+hang=2", timeout=0.2, max_retries=1, temperature=0.7)
    started = time.perf_counter()
    with pytest.raises(LLMError, match=r"after 2 attempts: the request timed out"):
        chat(client, ask("hang"))
    elapsed = time.perf_counter() - started
    assert 0.4 <= elapsed < 1.5
    assert client.requests == 2


@pytest.mark.parametrize("transport", ["http", "openai"])
def test_a_deterministic_request_is_waited_for_not_sent_again(server, transport):
    """Temperature 0: a slow server is not sent the same request again while it may still be working on it;
    the client waits for the one reply as long as its retries would have (timeout x (retries + 1))."""
    slow = make_client(server, "random-valid+latency=500", timeout=0.2, max_retries=3, transport=transport)
    before = server.requests
    result = chat(slow, ask("slow"))
    assert result.text and result.usage.retries == 0
    assert slow.requests == 1 and server.requests - before == 1
    hung = make_client(server, "random-valid+hang=2", timeout=0.1, max_retries=2, transport=transport)
    started = time.perf_counter()
    with pytest.raises(LLMError, match=r"timed out.*waited 0.3 s for a deterministic reply"):
        chat(hung, ask("hang"))
    assert 0.3 <= time.perf_counter() - started < 1.5
    assert hung.requests == 1


def test_a_404_is_not_retried(server):
    client = make_client(server, "no-such-model", max_retries=4)
    with pytest.raises(LLMError) as info:
        chat(client, ask("not retried"))
    assert client.requests == 1
    message = str(info.value)
    assert "HTTP 404" in message and "attempts" not in message
    assert "random-valid, echo" in message  # the server's model list reaches the user


def test_client_options_are_validated():
    with pytest.raises(ValueError, match="non-empty string"):
        LLMClient("")
    with pytest.raises(ValueError, match="concurrency"):
        LLMClient("random-valid", concurrency=0, cache=False)
    with pytest.raises(ValueError, match="max_retries"):
        LLMClient("random-valid", max_retries=-1, cache=False)


def test_a_budget_is_whole_numbers_from_zero():
    from agents.llm.client import Budget

    for setting, value, says in (("max_calls", -1, "max_calls must be >= 0"), ("max_calls", "5", "max_calls must be an integer"),
                                 ("token_budget", 1.5, "token_budget must be an integer")):
        with pytest.raises(ValueError, match=says):  # a string compared with the calls made raised TypeError mid-episode
            Budget(**{setting: value})
    assert Budget(max_calls=0, token_budget=None).max_calls == 0
    swept = Budget(max_calls=np.int64(3), token_budget=np.int64(500))  # a sweep's values, kept as plain ints
    assert (swept.max_calls, swept.token_budget) == (3, 500) and type(swept.max_calls) is type(swept.token_budget) is int


@pytest.mark.parametrize("setting, value, says", [
    ("timeout", float("nan"), "timeout must be a finite number, got nan"),  # waited for ever on a stuck endpoint
    ("timeout", -1, "timeout must be > 0, got -1"),  # was "waited -6 s"
    ("timeout", "60", "timeout must be a finite number, got '60'"),
    ("temperature", float("nan"), "temperature must be a finite number, got nan"),  # NaN is no JSON number
    ("temperature", -0.5, "temperature must be >= 0, got -0.5"),
    ("max_tokens", 0, "max_tokens must be >= 1, got 0"),
    ("max_tokens", "64", "max_tokens must be an integer"),
    ("backoff_base", -1, "backoff_base must be >= 0, got -1"),
    ("backoff_max", float("inf"), "backoff_max must be a finite number, got inf"),
    ("concurrency", 2.5, "concurrency must be an integer, got 2.5"),
    ("concurrency", "4", "concurrency must be an integer, got '4'"),  # was a TypeError from `<`
    ("concurrency", True, "concurrency must be an integer, got True"),
    ("max_retries", "3", "max_retries must be an integer"),
    ("seed", "x", "seed must be an integer"),
    ("cache", "no", "cache must be true or false, got 'no'"),  # "no" is truthy: it would have cached
    ("headers", 5, "headers must be a mapping"),  # was "'int' object is not iterable"
    ("extra_params", ["x"], "extra_params must be a mapping"),
    ("prices", {"m": (1.0, -1.0)}, r"prices\['m'\] must be >= 0, got -1\.0"),
    ("prices", {"m": 2.5}, r"prices\['m'\] must be two numbers \(USD per 1M prompt and completion tokens\), got 2\.5"),
])
def test_a_client_setting_a_request_could_not_use_is_refused_when_the_client_is_made(setting, value, says):
    with pytest.raises(ValueError, match=says):
        LLMClient("random-valid", base_url="http://127.0.0.1:9/v1", **{"cache": False, setting: value})
    # the values the suite and the docs use are taken
    LLMClient("random-valid", base_url="http://127.0.0.1:9/v1", cache=False, timeout=0.05, temperature=0.7, max_tokens=None,
              prices={"m": (0.15, 0.6)}, backoff_base=0, headers={"X-Run": "1"}, extra_params={"top_p": 0.9})
    # numpy integers (a sweep's np.arange) are taken and kept as Python ints: the seed and max_tokens go into request
    # bodies, which json.dumps would refuse to write with np.int64 in them
    swept = LLMClient("random-valid", base_url="http://127.0.0.1:9/v1", cache=False, seed=np.int64(7), max_tokens=np.int32(64),
                      concurrency=np.int64(4), max_retries=np.uint8(2))
    assert [(getattr(swept, name), type(getattr(swept, name))) for name in ("seed", "max_tokens", "concurrency", "max_retries")] \
        == [(7, int), (64, int), (4, int), (2, int)]


# ---------------------------------------------------------------------------- budget


def test_call_budget_allows_max_calls_then_raises_before_sending(server):
    client = make_client(server)
    budget = Budget(max_calls=2)
    chat(client, ask("budget 1"), budget=budget)
    chat(client, ask("budget 2"), budget=budget)
    assert budget.calls == 2 and budget.tokens > 0
    server_before, client_before = server.requests, client.requests
    with pytest.raises(BudgetExceeded, match=r"budget of 2 model calls is spent") as info:
        chat(client, ask("budget 3"), budget=budget)
    assert isinstance(info.value, LLMError)
    assert "max_calls" in str(info.value)  # says how to go on
    assert server.requests == server_before and client.requests == client_before  # nothing was sent
    assert budget.calls == 2
    budget.reset()
    assert budget.calls == 0 and budget.tokens == 0
    chat(client, ask("budget 4"), budget=budget)  # a reset budget allows calls again


def test_token_budget_raises_once_spent(server):
    client = make_client(server)
    budget = Budget(token_budget=20)
    first = chat(client, ask("tokens 1"), budget=budget)
    used = first.usage.prompt_tokens + first.usage.completion_tokens
    assert used > 20 and budget.tokens == used
    before = server.requests
    with pytest.raises(BudgetExceeded, match=rf"budget of 20 tokens is spent \({used:,} used; raise token_budget"):
        chat(client, ask("tokens 2"), budget=budget)
    assert server.requests == before


def test_call_budget_holds_for_concurrent_calls(server):
    # calls awaited together (as run_episode awaits a step's agents) must not all pass the budget check
    client = make_client(server)
    budget = Budget(max_calls=2)
    before = server.requests
    results, _ = gather(client, [ask(f"concurrent budget {i}") for i in range(3)], budget=budget)
    sent = server.requests - before
    assert sent <= 2, f"Budget(max_calls=2) let {sent} concurrent calls through"
    assert sum(isinstance(r, BudgetExceeded) for r in results) == 1


# ---------------------------------------------------------------------------- cache


def test_an_identical_call_is_served_from_the_cache(server, tmp_path):
    client = make_client(server, cache=None, cache_dir=tmp_path)
    assert client.caching  # on by default at temperature 0
    ledger = Usage()
    first = chat(client, ask("cache hit"), ledger=ledger)
    assert not first.cached and len(list(tmp_path.glob("*.json"))) == 1
    server_before, client_before = server.requests, client.requests
    second = chat(client, ask("cache hit"), ledger=ledger)
    assert server.requests == server_before and client.requests == client_before
    assert second.cached and second.text == first.text
    # the hit counts as the call it stands for, with the tokens that call took; only its cost is nothing
    assert second.usage.calls == 1 and second.usage.cached == 1
    assert (second.usage.prompt_tokens, second.usage.completion_tokens) == (first.usage.prompt_tokens, first.usage.completion_tokens)
    assert first.usage.prompt_tokens > 0 and second.usage.largest_prompt_tokens == first.usage.prompt_tokens
    assert ledger.calls == 2 and ledger.cached == 1 and ledger.prompt_tokens == 2 * first.usage.prompt_tokens
    # a fresh client on the same folder (a re-run) hits too
    rerun = make_client(server, cache=None, cache_dir=tmp_path)
    assert chat(rerun, ask("cache hit")).cached and rerun.requests == 0


def test_a_reply_served_from_the_cache_keeps_its_finish_reason(server, tmp_path):
    # found by review: the cache kept only the text, so a rerun's log lost "length" on replies cut at the output limit
    first = chat(make_client(server, cache=None, cache_dir=tmp_path, max_tokens=3), ask("cut short"))
    assert not first.cached and first.finish_reason == "length"
    again = chat(make_client(server, cache=None, cache_dir=tmp_path, max_tokens=3), ask("cut short"))
    assert again.cached and (again.text, again.finish_reason) == (first.text, "length")


def test_a_cache_hit_counts_against_the_budget_as_the_call_it_stands_for(server, tmp_path):
    # found by review: hits were free, so an episode under --max-calls or --token-budget played further with the
    # cache warm than cold, and how far depended on which concurrent episode had filled the cache first
    client = make_client(server, cache=None, cache_dir=tmp_path)
    first = chat(client, ask("cache budget"))
    with pytest.raises(BudgetExceeded):
        chat(client, ask("cache budget"), budget=Budget(max_calls=0))
    budget = Budget(max_calls=1, token_budget=10**6)
    assert chat(client, ask("cache budget"), budget=budget).cached
    assert (budget.calls, budget.tokens) == (1, first.usage.prompt_tokens + first.usage.completion_tokens)
    spent = Budget(token_budget=first.usage.prompt_tokens)
    chat(client, ask("cache budget"), budget=spent)
    with pytest.raises(BudgetExceeded, match="tokens"):
        chat(client, ask("cache budget"), budget=spent)


def test_a_cache_entry_without_its_tokens_is_asked_again(server, tmp_path):
    # entries written before the cache kept the tokens could not count them: the call is made again and its entry
    # rewritten, rather than counted as a call of no tokens
    client = make_client(server, cache=True, cache_dir=tmp_path)
    first = chat(client, ask("old entry"))
    [path] = tmp_path.glob("*.json")
    path.write_text(json.dumps({"model": "random-valid", "text": first.text}), encoding="utf-8")
    before = server.requests
    again = chat(client, ask("old entry"))
    assert not again.cached and server.requests == before + 1
    assert json.loads(path.read_text(encoding="utf-8"))["prompt_tokens"] == first.usage.prompt_tokens
    assert chat(client, ask("old entry")).cached


def test_a_cached_call_costs_nothing_where_prices_are_given(server, tmp_path):
    # so that an episode served from the cache has a cost (0), and a report's mean cost counts it
    client = make_client(server, cache=True, cache_dir=tmp_path, prices={"random-valid": (1.0, 2.0)})
    assert chat(client, ask("priced")).usage.cost_usd > 0
    assert chat(client, ask("priced")).usage.cost_usd == 0.0


def test_the_cache_misses_on_other_messages_params_or_model(server, tmp_path):
    base = make_client(server, cache=True, cache_dir=tmp_path)
    chat(base, ask("cache miss"))
    misses = [
        (base, ask("cache miss, other message"), {}),
        (make_client(server, cache=True, cache_dir=tmp_path, temperature=0.7), ask("cache miss"), {}),
        (make_client(server, cache=True, cache_dir=tmp_path, max_tokens=64), ask("cache miss"), {}),
        (make_client(server, "random-valid+latency=1", cache=True, cache_dir=tmp_path), ask("cache miss"), {}),
        (base, ask("cache miss"), {"temperature": 0.3}),
    ]
    for client, messages, overrides in misses:
        before = server.requests
        result = chat(client, messages, **overrides)
        assert not result.cached and server.requests == before + 1, (client, overrides)
    assert len(list(tmp_path.glob("*.json"))) == 1 + len(misses)


def dead_url() -> str:
    """The URL of a port nothing listens on (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_a_warm_cache_does_not_answer_for_another_endpoint(server, tmp_path):
    warm = make_client(server, cache=True, cache_dir=tmp_path)
    text = chat(warm, ask("endpoint")).text
    same = LLMClient("random-valid", base_url=server.url + "/", cache=True, cache_dir=tmp_path)
    assert chat(same, ask("endpoint")).cached and same.requests == 0  # the same endpoint, a trailing slash aside
    dead = LLMClient("random-valid", base_url=dead_url(), cache=True, cache_dir=tmp_path, max_retries=1,
                     backoff_base=0.001, timeout=2)
    with pytest.raises(LLMError, match="could not connect"):
        chat(dead, ask("endpoint"))
    assert dead.requests == 2  # it asked, and retried, rather than answer from the other endpoint's cache
    with LocalLLMServer(seed=1) as other:
        result = chat(LLMClient("random-valid", base_url=other.url, cache=True, cache_dir=tmp_path), ask("endpoint"))
        assert not result.cached and other.requests == 1
    assert result.text  # both answers are kept, each under its own endpoint
    assert len(list(tmp_path.glob("*.json"))) == 2 and chat(warm, ask("endpoint")).text == text


def test_cache_note_says_how_much_the_cache_served():
    assert cache_note({"calls": 12, "cached": 0}) == ""
    assert cache_note({"calls": 0}) == ""
    assert cache_note({"calls": 1200, "cached": 1100}) == " (1,100 of 1,200 calls served from the cache)"
    assert cache_note(Usage(calls=3, cached=1)) == " (1 of 3 calls served from the cache)"
    assert cache_note({"calls": 225, "cached": 225}) == " (all 225 calls served from the cache: the endpoint was not asked)"


def test_temperature_above_zero_is_not_cached_unless_asked(server, tmp_path):
    warm = make_client(server, temperature=0.7, cache=None, cache_dir=tmp_path / "default")
    assert not warm.caching
    chat(warm, ask("warm"))
    before = server.requests
    assert not chat(warm, ask("warm")).cached and server.requests == before + 1
    assert not (tmp_path / "default").exists() or not list((tmp_path / "default").iterdir())

    forced = make_client(server, temperature=0.7, cache=True, cache_dir=tmp_path / "forced")
    chat(forced, ask("warm forced"))
    before = server.requests
    assert chat(forced, ask("warm forced")).cached and server.requests == before

    off = make_client(server, temperature=0.0, cache=False, cache_dir=tmp_path / "off")
    chat(off, ask("cold off"))
    chat(off, ask("cold off"))
    assert off.requests == 2 and not (tmp_path / "off").exists()


def test_a_per_call_temperature_above_zero_is_not_cached(server, tmp_path):
    # the temperature of the call, not only the client's, decides whether it is cached
    client = make_client(server, cache=None, cache_dir=tmp_path)
    chat(client, ask("sampled"), temperature=0.9)
    before = server.requests
    again = chat(client, ask("sampled"), temperature=0.9)
    assert not again.cached and server.requests == before + 1


@pytest.mark.parametrize("damage", [b"{\"model\": \"random-valid\", \"te", b"", b"{\"model\": \"random-valid\"}", b"\xff\xfe not utf-8"])
def test_a_damaged_cache_entry_is_ignored_and_rewritten(server, tmp_path, damage):
    client = make_client(server, cache=True, cache_dir=tmp_path)
    first = chat(client, ask("damaged"))
    [path] = tmp_path.glob("*.json")
    path.write_bytes(damage)
    before = server.requests
    result = chat(client, ask("damaged"))
    assert not result.cached and server.requests == before + 1
    assert result.text == first.text
    assert json.loads(path.read_text(encoding="utf-8"))["text"] == first.text  # overwritten with a good entry
    assert chat(client, ask("damaged")).cached


def test_a_damaged_cache_entry_is_not_counted_as_a_cached_call(server, tmp_path):
    # an entry without "text" is neither a cache hit nor counted as one
    client = make_client(server, cache=True, cache_dir=tmp_path)
    chat(client, ask("damaged, ledger"))
    [path] = tmp_path.glob("*.json")
    path.write_text(json.dumps({"model": "random-valid"}), encoding="utf-8")
    ledger = Usage()
    result = chat(client, ask("damaged, ledger"), ledger=ledger)
    assert not result.cached
    assert (ledger.calls, ledger.cached) == (1, 0)


@pytest.mark.parametrize("damage", [b"null", b"[1, 2]", b"\"text\""])
def test_a_cache_entry_that_is_not_an_object_is_ignored(server, tmp_path, damage):
    # an entry that is JSON but not an object is ignored and overwritten
    client = make_client(server, cache=True, cache_dir=tmp_path)
    first = chat(client, ask("damaged, not an object"))
    [path] = tmp_path.glob("*.json")
    path.write_bytes(damage)
    result = chat(client, ask("damaged, not an object"))
    assert not result.cached and result.text == first.text


def test_processes_writing_one_cache_entry_at_once_both_keep_their_answer(server, tmp_path, monkeypatch):
    # two writers (processes sharing TEAMENVS_CACHE) both past their write and at their rename at once: with one fixed
    # temporary name the second rename found its file gone ([Errno 2] ...tmp -> ...json) and lost its episode
    at_rename = threading.Barrier(2)
    rename = os.replace

    def both_then_rename(src, dst):
        at_rename.wait(timeout=10)
        rename(src, dst)

    monkeypatch.setattr(os, "replace", both_then_rename)
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: chat(make_client(server, cache=True, cache_dir=tmp_path), ask("racing writers")), range(2)))
    assert results[0].text == results[1].text and not any(r.cached for r in results)
    [entry] = tmp_path.iterdir()  # one entry, no temporary file left behind
    assert entry.suffix == ".json" and json.loads(entry.read_text(encoding="utf-8"))["text"] == results[0].text


def test_a_cache_that_cannot_be_written_keeps_the_answer_and_warns(server, tmp_path):
    client = make_client(server, cache=True, cache_dir=tmp_path / "cache")
    (tmp_path / "cache").write_text("a file now stands where the cache was to be made")
    with pytest.warns(RuntimeWarning, match=r"response cache .*cache could not be written \(.*\); answers are kept"):
        result = chat(client, ask("unwritable cache"))
    assert "ACTION: " in result.text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]  # no temporary file left behind


def test_teamenvs_cache_naming_a_file_is_an_error_before_any_call(server, tmp_path, monkeypatch):
    (tmp_path / "cachefile").write_text("not a directory")
    monkeypatch.setenv("TEAMENVS_CACHE", str(tmp_path / "cachefile"))
    before = server.requests
    with pytest.raises(ValueError, match=r"\(from TEAMENVS_CACHE\) cannot be made: .*cachefile is a file, not a directory"):
        LLMClient("random-valid", base_url=server.url, cache=None)
    assert server.requests == before  # refused before the model was asked (and paid), not after its answer
    assert chat(LLMClient("random-valid", base_url=server.url, cache=False), ask("no cache, no check")).text
    monkeypatch.setenv("TEAMENVS_CACHE", str(tmp_path / "cachefile" / "deeper"))
    with pytest.raises(ValueError, match="cachefile is a file"):
        LLMClient("random-valid", base_url=server.url, cache=True)
    with pytest.raises(ValueError, match=r"\(from cache_dir\)"):
        LLMClient("random-valid", base_url=server.url, cache=True, cache_dir=tmp_path / "cachefile")


# ---------------------------------------------------------------------------- the API key

SECRET = "sk-test-SECRET-9f8e7d6c5b4a"


def test_the_key_is_not_shown_by_repr_or_introspection(server):
    client = make_client(server, api_key=SECRET)
    chat(client, ask("key repr"))  # the key was used for a real call
    assert client._key == SECRET  # kept privately, so the test below means something
    assert SECRET not in repr(client) and SECRET not in str(client)
    assert client.api_key is None
    assert SECRET not in repr(dataclasses.asdict(client))
    for name, value in vars(client).items():
        if name != "_key":
            assert SECRET not in repr(value), name
    with pytest.raises(LLMError) as info:
        chat(make_client(server, "no-such-model", api_key=SECRET), ask("key error"))
    assert SECRET not in str(info.value)


def test_the_key_from_the_environment_never_reaches_logs_or_cache(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    env = teamenvs.make("day_trader_v0")
    policies = make_llm_policies(env, "random-valid", base_url=server.url, cache=True, cache_dir=tmp_path / "cache", backoff_base=0.001)
    client = next(iter(policies.values())).client
    assert client._key == SECRET  # the environment's key is the one in use
    result = agents.run_episode(env, policies, seed=0, log_dir=tmp_path / "logs", max_steps=3)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in files) and len(list((tmp_path / "cache").glob("*.json"))) >= 3
    for path in files:
        assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
    assert SECRET not in json.dumps(result.records, default=str)
    assert SECRET not in repr(policies) and SECRET not in repr(result)


@pytest.mark.parametrize("transport", ["http", "openai"])
def test_a_password_or_key_in_the_base_url_is_never_shown(transport):
    url = dead_url().replace("http://", "http://alice:hunter2pass@") + "?api_key=sk-in-the-query"
    client = LLMClient("m", base_url=url, transport=transport, cache=False, max_retries=0)
    with pytest.raises(LLMError, match=r"model 'm' at http://\*\*\*@127\.0\.0\.1:\d+/v1\?api_key=\*\*\* failed") as info:
        chat(client, ask("password in the URL"))
    with pytest.raises(ValueError, match=r"the URL 'http://\*\*\*@127\.0\.0\.1:99999/v1' has a bad port") as bad_port:
        LLMClient("m", base_url="http://alice:hunter2pass@127.0.0.1:99999/v1", transport=transport)
    for shown in (str(info.value), str(bad_port.value), repr(client), repr(OpenAIEmbedder("e", base_url=url))):
        assert "hunter2pass" not in shown and "sk-in-the-query" not in shown and "alice" not in shown, shown


# ---------------------------------------------------------------------------- concurrency and cost


def test_concurrency_bounds_requests_in_flight(server):
    batches = [ask(f"concurrency {i}") for i in range(6)]
    bounded = make_client(server, "random-valid+latency=200", concurrency=2)
    results, narrow_s = gather(bounded, batches)
    assert all(not isinstance(r, BaseException) for r in results)
    assert narrow_s >= 0.55, f"6 calls of 200 ms two at a time took only {narrow_s:.3f}s"  # a lower bound: load only adds
    wide = make_client(server, "random-valid+latency=200", concurrency=6)
    results, wide_s = gather(wide, batches)
    assert all(not isinstance(r, BaseException) for r in results)
    # a ratio in one run, not an absolute bound, so a loaded machine slows both alike: one round against three
    assert wide_s < 0.7 * narrow_s, f"six at a time took {wide_s:.3f}s against {narrow_s:.3f}s two at a time"


def test_cost_from_the_price_table(server):
    client = make_client(server, prices={"random-valid": (1.0, 2.0)})
    ledger = Usage()
    result = chat(client, ask("cost"), ledger=ledger)
    u = result.usage
    assert u.prompt_tokens > 0 and u.completion_tokens > 0
    assert u.cost_usd == pytest.approx((u.prompt_tokens * 1.0 + u.completion_tokens * 2.0) / 1e6)
    assert ledger.to_json()["cost_usd"] == pytest.approx(round(u.cost_usd, 6))
    second = chat(client, ask("cost 2"), ledger=ledger)
    assert ledger.cost_usd == pytest.approx(u.cost_usd + second.usage.cost_usd)
    # a fault suffix does not change the model's price
    suffixed = make_client(server, "random-valid+latency=1", prices={"random-valid": (1.0, 2.0)})
    assert chat(suffixed, ask("cost 3")).usage.cost_usd is not None
    # no price known: no cost, and none in the JSON
    unpriced = chat(make_client(server), ask("cost 4")).usage
    assert unpriced.cost_usd is None and "cost_usd" not in unpriced.to_json()


# ---------------------------------------------------------------------------- the two transports


def test_the_transport_is_chosen_and_validated(server, monkeypatch):
    assert make_client(server).transport_used == "http"  # the lean client by default
    assert make_client(server, transport="openai").transport_used == "openai"
    with pytest.raises(ValueError, match="transport must be one of auto, http, openai"):
        make_client(server, transport="httpx")
    # a proxy for the endpoint: the openai package (which speaks it) sends, unless the host is exempt
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    assert make_client(server).transport_used == "openai"
    assert make_client(server, transport="http").transport_used == "http"
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert make_client(server).transport_used == "http"


def scrub(value):
    """A ChatResult or log record without its timings (which differ from run to run)."""
    if dataclasses.is_dataclass(value):
        value = dataclasses.asdict(value)
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if k not in ("latency_s", "queue_s")}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


PARITY = [
    ("random-valid", {}),
    ("echo", {}),
    ("random-valid", {"max_tokens": 3}),  # cut: finish_reason "length"
    ("random-valid", {"stop": "ACTION"}),
    ("random-valid", {"seed": 3, "n": 2, "temperature": 0.5}),
    ("random-valid", {"response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": {
        "type": "object", "properties": {"action": {"enum": ["wait", "go"]}}, "required": ["action"]}}}}),
    ("random-valid", {"extra_body": {"grammar": "root ::= \"wait\""}}),
    ("echo+429=1+retry_after=0.01", {}),  # one retry each
]


def apart(messages, transport: str):
    """`messages` made distinct per transport (the server counts fault attempts per distinct request)
    by a system message of the same length, so that echo's reply and the token counts stay the same."""
    return [{"role": "system", "content": f"sent over {transport:>6}"}, *messages[1:]]


@pytest.mark.parametrize("model, options", PARITY)
def test_both_transports_give_the_same_results(server, model, options):
    results = {}
    for transport in ("http", "openai"):
        messages = ask(f"parity {model} {sorted(options)}")
        client = make_client(server, model, transport=transport, prices={"random-valid": (1.0, 2.0)})
        results[transport] = chat(client, apart(messages, transport) if "=" in model else messages, **options)
    assert scrub(results["http"]) == scrub(results["openai"])
    assert results["http"].text and results["http"].usage.prompt_tokens > 0
    assert results["http"].usage.retries == ("429" in model)


def test_both_transports_send_a_lone_surrogate_as_the_same_valid_text(server):
    """A model's earlier reply decoded from a JSON escape can hold a lone surrogate, which has no UTF-8 form: the openai
    package could not send it (an LLMError), the lean transport sent an escape servers read as invalid text. Both send
    U+FFFD in its place now and get the same reply; text without one is sent as it is."""
    replies = {}
    for transport in ("http", "openai"):
        client = make_client(server, "echo", transport=transport)
        messages = [{"role": "user", "content": f"odd \ud800 text over {transport:>6} \U0001f600"}]
        replies[transport] = chat(client, messages).text
        assert messages[0]["content"].startswith("odd \ud800")  # the caller's messages are left as they were
    assert replies["http"].replace("  http", "openai") == replies["openai"]
    assert "odd \ufffd text" in replies["http"] and "\U0001f600" in replies["http"]
    plain = [{"role": "user", "content": "é plain"}]
    assert sendable(plain) is plain


@pytest.mark.parametrize("model, options, kwargs", [
    ("no-such-model", {}, {}),
    ("random-valid", {"max_retries": 3}, {"logprobs": True}),  # a 400 naming the parameter, not retried
    ("random-valid", {}, {"temperature": 7}),
    ("random-valid+500=100", {"max_retries": 1}, {}),
    ("random-valid+503=100+retry_after=0.01", {"max_retries": 1}, {}),
    ("random-valid+badjson", {"max_retries": 1}, {}),
    ("random-valid+hang=1", {"max_retries": 0, "timeout": 0.2}, {}),
])
def test_both_transports_fail_the_same_way(server, model, options, kwargs):
    errors = {}
    for transport in ("http", "openai"):
        client = make_client(server, model, transport=transport, **options)
        ledger = Usage()
        with pytest.raises(LLMError) as info:
            chat(client, apart(ask(f"parity error {model}"), transport), ledger=ledger, **kwargs)
        errors[transport] = (str(info.value), ledger.calls, ledger.retries, client.requests)
    assert errors["http"] == errors["openai"]
    assert "Error code" not in errors["http"][0]  # the server's message, not the SDK's wrapping of it


@pytest.mark.parametrize("transport", ["http", "openai"])
def test_an_llm_error_keeps_the_status_and_the_servers_message(server, transport):
    client = make_client(server, "random-valid+429=100", transport=transport, max_retries=0)
    with pytest.raises(LLMError) as info:
        chat(client, ask(f"status kept {transport}"))
    assert info.value.status == 429 and info.value.server_message and info.value.server_message in str(info.value)
    assert "random-valid" not in info.value.server_message
    timing_out = make_client(server, "random-valid+hang=1", transport=transport, max_retries=0, timeout=0.2)
    with pytest.raises(LLMError) as info:
        chat(timing_out, ask(f"no status {transport}"))
    assert info.value.status is None and info.value.server_message == ""


def test_both_transports_write_the_same_episode_log(server):
    logs = {}
    for transport in ("http", "openai"):
        env = teamenvs.make("day_trader_v0")  # 30 rounds: it lasts past 4 steps whatever the draws
        policies = make_llm_policies(env, "random-valid", base_url=server.url, cache=False, transport=transport,
                                     constrain="json")
        result = agents.run_episode(env, policies, seed=0, max_steps=4)
        logs[transport] = scrub(result.records)
    assert logs["http"] == logs["openai"]
    assert sum(r["type"] == "step" for r in logs["http"]) == 4


def test_headers_go_with_every_request_on_both_transports(server):
    for transport in ("http", "openai"):
        client = make_client(server, transport=transport, headers={"X-Fault": "500=1"})
        result = chat(client, ask(f"headers {transport}"))
        assert result.usage.retries == 1 and client.requests == 2, transport  # the header's fault was injected
    with pytest.raises(ValueError, match="without line breaks"):
        make_client(server, headers={"X-Fault": "500=1\r\nX-Other: 1"})


def test_your_own_openai_client_is_used_and_left_open(server):
    async def run():
        async with openai.AsyncOpenAI(base_url=server.url, api_key="x", max_retries=0, timeout=5) as own:
            client = LLMClient("random-valid", openai_client=own, cache=False)
            assert client.transport_used == "openai" and client.endpoint == server.url
            first = await client.chat(ask("own client"))
            await client.aclose()
            assert not own.is_closed()  # the caller's to close
            return first

    assert action_line(asyncio.run(run()).text) in EXAMPLES
    with pytest.raises(ValueError, match="'openai' transport"):
        LLMClient("random-valid", openai_client=object(), transport="http")
    with pytest.raises(TypeError, match="openai_client must be"):
        LLMClient("random-valid", openai_client=object())


def test_the_lean_transport_spends_a_fraction_of_the_openai_packages_cpu(server):
    """CPU per call of each transport, measured in one run (the in-process server's share included in both)."""

    def cpu_per_call(transport: str, calls: int) -> float:
        client = make_client(server, transport=transport)

        async def run():
            try:
                await client.chat(ask(f"cpu warm-up {transport}"))
                started = time.process_time()
                for i in range(calls):
                    await client.chat(ask(f"cpu {i}"))
                return (time.process_time() - started) / calls
            finally:
                await client.aclose()

        return asyncio.run(run())

    lean = min(cpu_per_call("http", 40) for _ in range(2))
    reference = min(cpu_per_call("openai", 20) for _ in range(2))
    assert lean < 0.5 * reference, f"lean {lean * 1e3:.2f} ms against openai {reference * 1e3:.2f} ms per call"


def test_the_speed_benchmark_runs_every_arm(capsys):
    """`python -m benchmarks.llm_loop --speed` at its smallest, served in-process: every table is printed."""
    from benchmarks import llm_loop

    llm_loop.main(["--speed", "--in-process", "--sizes", "1", "--rounds", "1", "--steps", "1"])
    out = capsys.readouterr().out
    for heading in ("### (c) calls/s", "### (d) synchronous act()", "### (e) 16 episodes at 1 ms"):
        assert heading in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| Concurrent")]
    assert any(line.startswith("| 1 episodes (9 in flight, 9 calls) |") for line in rows)
    assert any("full stack over the openai package" in line for line in rows)
    assert any(line.startswith("| policy.act() (a kept loop and client) |") for line in rows)
    assert any(line.startswith("| 16 at once") for line in rows)


def test_usage_keeps_the_largest_prompt_of_one_call(server):
    """Summed usage keeps the longest single prompt (what must fit a context window), not a sum."""
    client = LLMClient("echo", base_url=server.url, cache=False)
    short = chat(client, [{"role": "user", "content": "hi"}])
    long = chat(client, [{"role": "user", "content": "word " * 400}])
    assert short.usage.largest_prompt_tokens == short.usage.prompt_tokens > 0
    assert long.usage.largest_prompt_tokens == long.usage.prompt_tokens > short.usage.prompt_tokens
    total = Usage()
    total.add(long.usage)
    total.add(short.usage)
    assert total.prompt_tokens == long.usage.prompt_tokens + short.usage.prompt_tokens
    assert total.largest_prompt_tokens == long.usage.prompt_tokens
    assert total.to_json()["largest_prompt_tokens"] == long.usage.prompt_tokens
    assert "largest_prompt_tokens" not in Usage(calls=1, cached=1).to_json()  # a cached reply sent no prompt


@pytest.mark.skipif(worker_cpus() is None, reason="needs a platform that pins processes to CPUs, and two CPUs")
def test_pin_apart_gives_the_server_its_own_cpu_and_undoes_it_for_this_process() -> None:
    """`benchmarks.llm_loop.pin_apart`: the server process (every thread) on the last CPU, this process on the
    others while pinned, and all of them again after."""
    import os
    import subprocess
    import sys

    from benchmarks.llm_loop import pin_apart

    before = os.sched_getaffinity(0)
    cpus = sorted(before)
    server = subprocess.Popen([sys.executable, "-c", "import threading, time; threading.Thread(target=time.sleep, args=(30,)).start(); time.sleep(30)"])
    try:
        time.sleep(0.3)  # its second thread has started
        undo = pin_apart([server.pid])
        tasks = os.listdir(f"/proc/{server.pid}/task")
        assert len(tasks) == 2 and all(os.sched_getaffinity(int(t)) == {cpus[-1]} for t in tasks)
        assert os.sched_getaffinity(0) == set(cpus[:-1])
        undo()
        assert os.sched_getaffinity(0) == before
    finally:
        server.kill()
        server.wait()


@pytest.mark.skipif(worker_cpus() is None, reason="needs a platform that pins processes to CPUs, and two CPUs")
def test_pin_apart_leaves_everything_unpinned_when_a_server_is_gone() -> None:
    import os

    from benchmarks.llm_loop import pin_apart

    before = os.sched_getaffinity(0)
    undo = pin_apart([2**22 + 12345])  # no such process: nothing to pin, nothing changed here
    assert os.sched_getaffinity(0) == before
    undo()
    assert os.sched_getaffinity(0) == before


@pytest.fixture(scope="module")
def module_fixture_env():
    """What a module-scoped fixture (set up before any test's own fixtures) sees of the offline settings."""
    return os.environ.get("TEAMENVS_CACHE"), os.environ.get("OPENAI_BASE_URL")


def test_module_scoped_fixtures_are_offline_and_cache_outside_the_home_directory(module_fixture_env):
    cache, base_url = module_fixture_env
    assert base_url is None
    assert cache and not Path(cache).resolve().is_relative_to(Path.home().resolve() / ".cache")


def test_a_server_dripping_its_model_list_cannot_hold_the_run():
    """Found by review: `--context-window auto` asked the server in a worker thread whose urllib timeout bounds each wait
    for bytes, so a server sending one byte a second held the thread, and with it asyncio.run's shutdown, Ctrl-C and
    --episode-timeout, for good (killed at 45 s and 150 s). Now the answer is waited for min(timeout, 10) s in all, on a
    daemon thread, asked once for concurrent callers."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    port, connections, stop = listener.getsockname()[1], [], threading.Event()

    def drip():
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            connections.append(conn)
            threading.Thread(target=lambda c=conn: [c.sendall(b"H") or stop.wait(0.2) for _ in range(300) if not stop.is_set()],
                             daemon=True).start()

    threading.Thread(target=drip, daemon=True).start()
    try:
        client = LLMClient("m", base_url=f"http://127.0.0.1:{port}/v1", timeout=1.0, cache=False)

        async def ask_twice():
            return await asyncio.gather(client.context_window(), client.context_window())

        started = time.perf_counter()
        assert asyncio.run(ask_twice()) == [None, None]
        assert time.perf_counter() - started < 5
        assert len(connections) == 1  # asked once, not once per caller
    finally:
        stop.set()
        listener.close()


class _Models:
    """A thread serving `GET`s with `answer(path) -> (status, headers, body)`, recording each request's path and headers."""

    def __init__(self, answer) -> None:
        import http.server

        outer = self
        self.seen: list[tuple[str, dict[str, str]]] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.seen.append((self.path, dict(self.headers)))
                status, headers, body = answer(self.path)
                self.send_response(status)
                for name, value in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_asking_the_context_window_follows_no_redirect_with_the_key():
    """Found by review: `--context-window auto` asked with urllib, which follows a redirect to any host with the
    request's headers, `Authorization: Bearer <key>` among them. No redirect is followed now: no window is stated."""
    elsewhere = _Models(lambda path: (200, {}, json.dumps({"id": "m", "max_model_len": 4096}).encode()))
    redirecting = _Models(lambda path: (302, {"Location": f"http://127.0.0.1:{elsewhere.port}/steal"}, b""))
    try:
        client = LLMClient("m", base_url=f"http://127.0.0.1:{redirecting.port}/v1", api_key="sk-secret", timeout=2.0,
                           cache=False)
        assert asyncio.run(client.context_window()) is None
        assert [path for path, _ in redirecting.seen] == ["/v1/models/m", "/v1/models"]
        assert elsewhere.seen == []  # nothing, the key least of all, went to the other host
    finally:
        elsewhere.close()
        redirecting.close()


def test_asking_the_context_window_keeps_the_base_urls_query_after_the_path():
    """Found by review: the question's URL was the base URL plus the path, so a base URL with a query (Azure's
    `?api-version=...`) asked `GET /v1?api-version=2024/models/m`. The path now goes before the query, as chat requests'."""
    window = json.dumps({"id": "m", "max_model_len": 4096}).encode()
    server = _Models(lambda path: (200, {}, window) if path == "/v1/models/m?api-version=2024" else (404, {}, b"{}"))
    try:
        client = LLMClient("m", base_url=f"http://127.0.0.1:{server.port}/v1?api-version=2024", timeout=2.0, cache=False)
        assert asyncio.run(client.context_window()) == 4096
        assert server.seen[0][0] == "/v1/models/m?api-version=2024"
    finally:
        server.close()
