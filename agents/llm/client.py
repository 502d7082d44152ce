"""One client for any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp, the built-in server).

`LLMClient.chat(messages, agent=..., usage=...)` sends one chat completion over the
`openai` package's `AsyncOpenAI` and returns a `ChatResult` (text, token usage from the
API's `usage` field, latency, retries, whether it came from the cache). Around the call:

- timeouts, and retries with exponential backoff and jitter on 429, 5xx, timeouts,
  connection errors and unreadable bodies, honouring `Retry-After`; after `max_retries`
  a `LLMError` says what failed last;
- a budget per episode (`Budget`: max calls, max tokens) that raises `BudgetExceeded`
  instead of returning a made-up answer;
- an on-disk response cache keyed by endpoint, model, messages and sampling parameters: exact
  re-runs cost nothing and are reproducible, and a warm cache never answers for another endpoint.
  By default it is on for temperature 0 and off above (`cache=True` forces it on, `False` off);
  `cache_note` says how much of a run the cache served;
- a `Usage` ledger per agent (calls, retries, prompt and completion tokens, latency, cache
  hits, cost from an optional price table);
- a bound on concurrent requests shared by everything using the client.

The API key is read from the argument or `OPENAI_API_KEY`; it is never logged, written to
a file or shown in a repr.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

RETRY_STATUS = (408, 409, 429, 500, 502, 503, 504)
DEFAULT_ENDPOINT = "https://api.openai.com/v1"  # the openai package's, when no base_url is given


class LLMError(RuntimeError):
    """The endpoint could not give an answer (after retries, or a non-retryable error)."""


class BudgetExceeded(LLMError):
    """The episode's call or token budget is spent; no answer is made up."""


@dataclass
class Usage:
    """What calls cost: per agent and, summed, per episode."""

    calls: int = 0
    retries: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0  # from the request leaving the client to the answer (retries and their waits included)
    queue_s: float = 0.0  # waiting for a free slot of the client's concurrency bound, before any request
    cost_usd: float | None = None

    def add(self, other: "Usage") -> None:
        self.calls += other.calls
        self.retries += other.retries
        self.cached += other.cached
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.latency_s += other.latency_s
        self.queue_s += other.queue_s
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd

    def to_json(self) -> dict[str, Any]:
        out = {
            "calls": self.calls,
            "retries": self.retries,
            "cached": self.cached,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": round(self.latency_s, 4),
        }
        if self.queue_s:
            out["queue_s"] = round(self.queue_s, 4)
        if self.cost_usd is not None:
            out["cost_usd"] = round(self.cost_usd, 6)
        return out


@dataclass
class Budget:
    """A per-episode limit on calls and tokens, shared by the policies of one episode."""

    max_calls: int | None = None
    max_tokens: int | None = None
    calls: int = 0
    tokens: int = 0

    def check(self) -> None:
        if self.max_calls is not None and self.calls >= self.max_calls:
            raise BudgetExceeded(f"the episode's budget of {self.max_calls} model calls is spent (raise max_calls to go on)")
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            raise BudgetExceeded(
                f"the episode's budget of {self.max_tokens:,} tokens is spent ({self.tokens:,} used; raise max_tokens to go on)"
            )

    def reset(self) -> None:
        self.calls = self.tokens = 0


@dataclass(frozen=True)
class ChatResult:
    text: str
    usage: Usage
    model: str
    cached: bool = False
    finish_reason: str | None = None  # the API's: "stop", "length" (the output limit was hit), ...


@dataclass
class LLMClient:
    """An OpenAI-compatible chat client with retries, cache, budget, usage ledger and a concurrency bound."""

    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    max_retries: int = 5
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    temperature: float = 0.0
    max_tokens: int | None = 512
    cache: bool | None = None
    cache_dir: str | Path | None = None
    concurrency: int = 16
    prices: Mapping[str, tuple[float, float]] | None = None  # model -> (USD per 1M prompt tokens, per 1M completion tokens)
    extra_params: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model:
            raise ValueError("model must be a non-empty string, e.g. 'gpt-4o-mini' or 'random-valid'")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        self.base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or None
        self._key = self.api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self.api_key = None  # kept only privately, so it cannot leak through asdict/repr
        self._jitter = random.Random(self.seed)
        self._per_loop: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[Any, asyncio.Semaphore]]" = weakref.WeakKeyDictionary()
        if self.cache_dir is None:
            self.cache_dir = Path(os.environ.get("TEAMENVS_CACHE", Path.home() / ".cache" / "teamenvs")) / "llm"
        self.requests = 0  # HTTP attempts made (cache hits make none)
        self._turn = 0  # round-robin over the connection pools

    # ------------------------------------------------------------------ plumbing
    def _loop_client(self) -> tuple[Any, asyncio.Semaphore]:
        """An `AsyncOpenAI` for the running loop (HTTP connections belong to one loop) and the concurrency gate.

        Requests are spread over one connection pool per 16 concurrent requests: a single
        httpx pool slows down quadratically with the number of its open connections.
        """
        loop = asyncio.get_running_loop()
        found = self._per_loop.get(loop)
        if found is None:
            try:
                from openai import AsyncOpenAI
            except ImportError as exc:  # pragma: no cover - openai is a dependency
                raise ImportError("the LLM client needs the openai package: pip install openai") from exc
            pools = [
                AsyncOpenAI(base_url=self.base_url, api_key=self._key, timeout=self.timeout, max_retries=0)
                for _ in range(-(-self.concurrency // 16))
            ]
            found = (pools, asyncio.Semaphore(self.concurrency))
            self._per_loop[loop] = found
        pools, gate = found
        self._turn = (self._turn + 1) % len(pools)
        return pools[self._turn], gate

    @property
    def caching(self) -> bool:
        """Whether calls at the client's own temperature are cached (a call's own temperature decides for it)."""
        return self.cache if self.cache is not None else self.temperature == 0

    def _params(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": self.temperature, **self.extra_params, **overrides}
        if self.max_tokens is not None:
            params.setdefault("max_tokens", self.max_tokens)
        return params

    @property
    def endpoint(self) -> str:
        """The base URL requests go to (the OpenAI API when none is set)."""
        return (self.base_url or DEFAULT_ENDPOINT).rstrip("/")

    def _cache_path(self, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> Path:
        key = json.dumps({"endpoint": self.endpoint, "model": self.model, "messages": list(messages), "params": params},
                         sort_keys=True)
        return Path(self.cache_dir) / f"{hashlib.sha256(key.encode()).hexdigest()}.json"

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.backoff_max)
        return min(self.backoff_max, self.backoff_base * 2**attempt) * self._jitter.uniform(0.5, 1.5)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        if not self.prices or self.model.partition("+")[0] not in self.prices:
            return None
        per_in, per_out = self.prices[self.model.partition("+")[0]]
        return (prompt_tokens * per_in + completion_tokens * per_out) / 1e6

    # ------------------------------------------------------------------ the call
    async def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        budget: Budget | None = None,
        ledger: Usage | None = None,
        **overrides: Any,
    ) -> ChatResult:
        """One chat completion. `ledger` (a `Usage`) and `budget` are updated; raises LLMError or BudgetExceeded."""
        params = self._params(overrides)
        caching = self.cache if self.cache is not None else params.get("temperature", 0) == 0
        path = self._cache_path(messages, params) if caching else None
        if path is not None and path.exists():
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                stored = None  # a damaged cache entry is ignored and overwritten
            if isinstance(stored, dict) and isinstance(stored.get("text"), str):
                usage = Usage(calls=1, cached=1)
                if ledger is not None:
                    ledger.add(usage)
                return ChatResult(stored["text"], usage, self.model, cached=True)
        if budget is not None:
            budget.check()
            budget.calls += 1  # reserved now, so that concurrent calls cannot all pass the check
        client, gate = self._loop_client()
        usage = Usage(calls=1)
        queued = time.perf_counter()
        last_error = "no attempt made"
        finish_reason = None
        async with gate:
            started = time.perf_counter()
            usage.queue_s = started - queued
            for attempt in range(self.max_retries + 1):
                retry_after: float | None = None
                self.requests += 1
                try:
                    response = await client.chat.completions.create(model=self.model, messages=list(messages), **params)
                    choice = response.choices[0] if response.choices else None
                    text = (choice.message.content or "") if choice is not None else ""
                    finish_reason = getattr(choice, "finish_reason", None) if choice is not None else None
                    if response.usage is not None:
                        usage.prompt_tokens = int(response.usage.prompt_tokens or 0)
                        usage.completion_tokens = int(response.usage.completion_tokens or 0)
                    break
                except Exception as exc:  # classified below; anything unexpected is not retried
                    retryable, retry_after, last_error = _classify(exc)
                    if not retryable or attempt == self.max_retries:
                        usage.latency_s = time.perf_counter() - started
                        if ledger is not None:
                            ledger.add(usage)
                        tries = f" after {attempt + 1} attempts" if attempt else ""
                        raise LLMError(f"model {self.model!r} at {self.base_url or 'the OpenAI API'} failed{tries}: {last_error}") from None
                    usage.retries += 1
                    await asyncio.sleep(self._delay(attempt, retry_after))
        usage.latency_s = time.perf_counter() - started
        usage.cost_usd = self.cost(usage.prompt_tokens, usage.completion_tokens)
        if budget is not None:
            budget.tokens += usage.prompt_tokens + usage.completion_tokens
        if ledger is not None:
            ledger.add(usage)
        if path is not None and text:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"model": self.model, "text": text}), encoding="utf-8")
            tmp.replace(path)
        return ChatResult(text, usage, self.model, finish_reason=finish_reason)

    async def aclose(self) -> None:
        """Close the HTTP connections of the running event loop (call before the loop ends)."""
        found = self._per_loop.pop(asyncio.get_running_loop(), None)
        if found is not None:
            for pool in found[0]:
                await pool.close()

    def __repr__(self) -> str:
        return f"LLMClient(model={self.model!r}, base_url={self.base_url!r}, api_key='***')"


def cache_note(total: Mapping[str, Any] | Usage) -> str:
    """How much of a run the response cache served, for a summary line: '' when none of it,
    ' (N of M calls served from the cache)', or, when every call was, a note that the endpoint
    was not asked at all."""
    calls, cached = (total.calls, total.cached) if isinstance(total, Usage) else (total.get("calls", 0), total.get("cached", 0))
    if not cached:
        return ""
    if cached >= calls:
        return f" (all {calls:,} calls served from the cache: the endpoint was not asked)"
    return f" ({cached:,} of {calls:,} calls served from the cache)"


def _classify(exc: Exception) -> tuple[bool, float | None, str]:
    """(retryable, Retry-After seconds or None, a short description) of an exception from the openai package."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        header = exc.response.headers.get("retry-after") if exc.response is not None else None
        retry_after = None
        if header is not None:
            try:
                retry_after = float(header)
            except ValueError:
                retry_after = None
        message = str(getattr(exc, "message", exc))
        return exc.status_code in RETRY_STATUS, retry_after, f"HTTP {exc.status_code}: {message}"
    if isinstance(exc, openai.APITimeoutError):
        return True, None, "the request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return True, None, f"could not connect ({exc})"
    if isinstance(exc, (openai.APIResponseValidationError, json.JSONDecodeError, ValueError)):
        return True, None, f"the reply could not be read ({type(exc).__name__})"
    return False, None, f"{type(exc).__name__}: {exc}"
