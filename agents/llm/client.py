"""One client for any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp, the built-in server).

`LLMClient.chat(messages, budget=..., ledger=...)` sends one chat completion and returns a
`ChatResult` (text, token usage from the API's `usage` field, latency, retries, whether it came
from the cache). Two transports send it, giving the same results and error messages for the same
replies (the lean one bounds a whole request by `timeout`, where the openai package bounds each
wait for bytes):

- "http" (the default for http:// and https:// endpoints): `agents.llm.http`, a lean asyncio
  HTTP/1.1 client with kept-alive connections, which sends the JSON body built here with
  `json.dumps` and reads the reply with `json.loads`: a small fraction of the `openai` package's CPU
  per call, which sets the pace against a local server (vLLM, SGLang, llama.cpp) at hundreds of
  concurrent requests;
- "openai": the `openai` package's `AsyncOpenAI`, the reference (its raw reply read by the same parser,
  `completion_fields`, as the lean one's); used when `transport="openai"`,
  when you pass your own client (`openai_client=AsyncOpenAI(...)`), and, with `transport="auto"`
  (the default), when an HTTP proxy is configured for the endpoint (the lean client speaks no proxy).

Around the call:

- timeouts, and retries with exponential backoff and jitter on 429, 5xx, timeouts,
  connection errors and unreadable bodies, honouring `Retry-After`; after `max_retries`
  a `LLMError` says what failed last;
- a budget per episode (`Budget`: max calls, a token budget) that raises `BudgetExceeded`
  instead of returning a made-up answer;
- an on-disk response cache keyed by endpoint, model, messages and sampling parameters: exact
  re-runs cost nothing and are reproducible, and a warm cache never answers for another endpoint.
  By default it is on for temperature 0 and off above (`cache=True` forces it on, `False` off);
  `cache_note` says how much of a run the cache served. Each entry is written through a temporary
  file of its own, so processes may share a cache directory; a write that fails is a warning (the
  answer is kept), and a `TEAMENVS_CACHE` (or `cache_dir`) that runs into a file is an error when
  the client is made, before any call;
- a `Usage` ledger per agent (calls, retries, prompt and completion tokens, latency, cache
  hits, cost from an optional price table);
- a bound on concurrent requests shared by everything using the client;
- `headers`: extra HTTP headers sent with every request (e.g. an organisation or routing header);
- `max_tokens`: each call's output limit (the API's field); the episode's token budget is `Budget`'s;
- `context_window()`: the model's context window as the server states it (`GET /models/{id}`:
  vLLM's `max_model_len`, `context_length`, `context_window`, llama.cpp's `n_ctx`), else None.

Synchronous callers (`LLMPolicy.act`, `run_sync`) run on an event loop kept from call to call
(one per thread), so their connections are kept between calls; `close()` closes them.

The API key is read from the argument or `OPENAI_API_KEY`; it is never logged, written to
a file or shown in a repr; nor is a password or a key in the base URL (`redact_url`).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import hashlib
import json
import math
import os
import random
import threading
import time
import warnings
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Mapping, Sequence, TypeVar

from teamenvs.core.config import ConfigError, check_flag, check_int, check_number
from teamenvs.core.files import write_whole
from teamenvs.core.text import excerpt, valid_unicode

from agents.llm.http import (HTTPPool, ProtocolError, RequestTimeout, Response, StatusError, TransportError, check_base_url, check_header, clip,
                             RETRY_COUNT_HEADER, redact_url, status_message, within)

T = TypeVar("T")

RETRY_STATUS = (408, 409, 429, 500, 502, 503, 504)
DEFAULT_ENDPOINT = "https://api.openai.com/v1"  # the openai package's, when no base_url is given
TRANSPORTS = ("auto", "http", "openai")
_RETRY_COUNTS = tuple({RETRY_COUNT_HEADER: str(n)} for n in range(16))  # (read only)


class LLMError(RuntimeError):
    """The endpoint could not give an answer (after retries, or a non-retryable error). `status` and `server_message`:
    the HTTP status and the server's own message of the last attempt's error reply (None and '' when it had none)."""

    def __init__(self, message: str, *, status: int | None = None, server_message: str = "") -> None:
        super().__init__(message)
        self.status, self.server_message = status, server_message


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
    largest_prompt_tokens: int = 0  # the longest prompt of one call: what must fit the model's context window

    def add(self, other: "Usage") -> None:
        self.calls += other.calls
        self.retries += other.retries
        self.cached += other.cached
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.latency_s += other.latency_s
        self.queue_s += other.queue_s
        self.largest_prompt_tokens = max(self.largest_prompt_tokens, other.largest_prompt_tokens)
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
        if self.largest_prompt_tokens:
            out["largest_prompt_tokens"] = self.largest_prompt_tokens
        if self.cost_usd is not None:
            out["cost_usd"] = round(self.cost_usd, 6)
        return out


def _cache_hit(stored: Any) -> tuple[str, str | None, int, int] | None:
    """(text, finish_reason, prompt tokens, completion tokens) of a cache entry, or None where it cannot stand for the
    call: damaged, or written before entries held their tokens (such a call is made again and its entry rewritten, as
    a hit that counted no tokens would let a token budget run further with the cache warm than cold)."""
    if not isinstance(stored, dict) or not isinstance(stored.get("text"), str):
        return None
    tokens = stored.get("prompt_tokens"), stored.get("completion_tokens")
    if not all(type(t) is int and 0 <= t <= MAX_TOKENS_PER_CALL for t in tokens):
        return None
    reason = stored.get("finish_reason")
    return stored["text"], reason if isinstance(reason, str) else None, tokens[0], tokens[1]


@dataclass
class Budget:
    """A per-episode limit on calls and tokens, shared by the policies of one episode.

    The token budget is decided at step boundaries (`mark`, which the episode loop calls before each step's actions,
    its probes and the interview): until the next one, a call is checked against the tokens used when the step
    began, not against however many of the step's concurrent replies have landed, so that the same replies stop an
    episode at the same step whatever order they arrive in (a step begun within the budget is played whole). Without
    a mark (a policy called on its own), against the tokens used so far."""

    max_calls: int | None = None
    token_budget: int | None = None  # prompt + completion tokens of all calls (a call's own output limit is the client's max_tokens)
    calls: int = 0
    tokens: int = 0
    tokens_at_mark: int | None = None  # the tokens used at the last step boundary: what the token budget is checked against

    def __post_init__(self) -> None:
        for name in ("max_calls", "token_budget"):
            if getattr(self, name) is not None:
                setattr(self, name, check_int(name, getattr(self, name), 0))

    def check(self) -> None:
        if self.max_calls is not None and self.calls >= self.max_calls:
            raise BudgetExceeded(f"the episode's budget of {self.max_calls} model calls is spent (raise max_calls to go on)")
        tokens = self.tokens if self.tokens_at_mark is None else self.tokens_at_mark
        if self.token_budget is not None and tokens >= self.token_budget:
            raise BudgetExceeded(
                f"the episode's budget of {self.token_budget:,} tokens is spent ({tokens:,} used; raise token_budget to go on)"
            )

    def mark(self) -> None:
        """A step boundary: the token budget is checked against the tokens used by now until the next one."""
        self.tokens_at_mark = self.tokens

    def reset(self) -> None:
        self.calls = self.tokens = 0
        self.tokens_at_mark = None


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
    transport: str = "auto"  # "http" (the lean client), "openai" (the openai package), "auto" (see the module docstring)
    headers: Mapping[str, str] | None = None  # extra HTTP headers on every request
    openai_client: Any = field(default=None, repr=False, compare=False)  # your own openai.AsyncOpenAI (implies "openai")

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model:
            raise ValueError("model must be a non-empty string, e.g. 'gpt-4o-mini' or 'random-valid'")
        self._check_settings()
        if self.transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, got {self.transport!r}")
        if self.openai_client is not None:
            if self.transport == "http":
                raise ValueError("an openai_client is used by the 'openai' transport, not 'http'")
            if not hasattr(self.openai_client, "chat"):
                raise TypeError(f"openai_client must be an openai.AsyncOpenAI (or alike), got {type(self.openai_client).__name__}")
            if self.base_url is None and getattr(self.openai_client, "base_url", None) is not None:
                self.base_url = str(self.openai_client.base_url)
        self.base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or None
        self._key = self.api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self.api_key = None  # kept only privately, so it cannot leak through asdict/repr
        self.headers = dict(self.headers or {})
        try:
            check_header("Authorization", f"Bearer {self._key}" if isinstance(self._key, str) else self._key)
        except ValueError:
            raise ValueError("the API key must be Latin-1 text without line breaks") from None  # never shown
        for name, value in self.headers.items():
            check_header(name, value)
        check_base_url(self.endpoint if isinstance(self.base_url, (str, type(None))) else self.base_url)  # a bad URL (scheme, host, port, control characters) is refused now, over either transport
        self._transport = self._pick_transport()
        self._jitter = random.Random(self.seed)
        self._per_loop: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[list[Any], asyncio.Semaphore]]" = weakref.WeakKeyDictionary()
        source = "cache_dir"
        if self.cache_dir is None:
            source = "TEAMENVS_CACHE" if "TEAMENVS_CACHE" in os.environ else "the default cache directory"
            self.cache_dir = Path(os.environ.get("TEAMENVS_CACHE", Path.home() / ".cache" / "teamenvs")) / "llm"
        if self.cache is not False:
            self._check_cache_dir(source)
        self.requests = 0  # HTTP attempts made (cache hits make none)
        self._turn = 0  # round-robin over the connection pools

    def _check_settings(self) -> None:
        """A ValueError naming the setting for a value a request could not use: a timeout of NaN waited for ever on a
        stuck endpoint, a negative one reported "waited -6 s", and the rest reached the endpoint, to be refused there (or
        not) in its own words."""
        self.concurrency = check_int("concurrency", self.concurrency, 1)
        self.max_retries = check_int("max_retries", self.max_retries, 0)
        self.seed = check_int("seed", self.seed)
        if self.max_tokens is not None:
            self.max_tokens = check_int("max_tokens", self.max_tokens, 1)
        check_number("timeout", self.timeout, 0, above=True)
        for name in ("backoff_base", "backoff_max", "temperature"):
            check_number(name, getattr(self, name), 0)
        if self.cache is not None:
            check_flag("cache", self.cache)
        for name in ("extra_params", "headers", "prices"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Mapping):
                raise ConfigError(f"{name} must be a mapping (a dict), got {excerpt(value)}")
        for model, price in (self.prices or {}).items():
            if not (isinstance(price, (tuple, list)) and len(price) == 2):
                raise ConfigError(f"prices[{excerpt(model)}] must be two numbers (USD per 1M prompt and completion tokens), "
                                  f"got {excerpt(price)}")
            for x in price:
                check_number(f"prices[{excerpt(model)}]", x, 0)

    def _pick_transport(self) -> str:
        """"http" or "openai", from `transport` (see the module docstring)."""
        if self.openai_client is not None or self.transport == "openai":
            return "openai"
        if self.transport == "http":
            return "http"
        from urllib.parse import urlsplit
        from urllib.request import getproxies, proxy_bypass

        parts = urlsplit(self.endpoint)
        if parts.scheme not in ("http", "https"):
            return "openai"
        proxies = getproxies()
        if (proxies.get(parts.scheme) or proxies.get("all")) and not proxy_bypass(parts.hostname or ""):
            return "openai"  # the openai package (httpx) honours the proxy
        return "http"

    @property
    def transport_used(self) -> str:
        """The transport requests go over: "http" or "openai"."""
        return self._transport

    # ------------------------------------------------------------------ plumbing
    def _loop_pool(self) -> tuple[Any, asyncio.Semaphore]:
        """The connection pool for the running loop (connections belong to one loop) and the concurrency gate.

        The lean transport has one pool (`agents.llm.http.HTTPPool`). With the openai package, requests
        are spread over one `AsyncOpenAI` per 16 concurrent requests: a single httpx pool slows down
        quadratically with the number of its open connections.
        """
        loop = asyncio.get_running_loop()
        found = self._per_loop.get(loop)
        if found is None:
            found = (self._new_pools(), asyncio.Semaphore(self.concurrency))
            self._per_loop[loop] = found
            _SYNC.register(loop, self)
        pools, gate = found
        if len(pools) == 1:
            return pools[0], gate
        self._turn = (self._turn + 1) % len(pools)
        return pools[self._turn], gate

    def _new_pools(self) -> list[Any]:
        if self._transport == "http":
            headers = {"Authorization": f"Bearer {self._key}", **self.headers}
            return [HTTPPool(self.endpoint, headers=headers, timeout=self.timeout, max_idle=self.concurrency)]
        if self.openai_client is not None:
            return [self.openai_client]
        try:
            from openai import AsyncOpenAI
        except ImportError as exc:  # pragma: no cover - openai is a dependency
            raise ImportError("the 'openai' transport needs the openai package: pip install openai") from exc
        return [
            AsyncOpenAI(base_url=self.base_url, api_key=self._key, timeout=self.timeout, max_retries=0,
                        default_headers=self.headers or None)
            for _ in range(-(-self.concurrency // 16))
        ]

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

    @property
    def shown_endpoint(self) -> str:
        """The endpoint as messages and logs may show it: without a password or key in the URL."""
        return redact_url(self.base_url) if self.base_url else "the OpenAI API"

    def _check_cache_dir(self, source: str) -> None:
        """Raises ValueError, naming `source` (where the directory came from), if a file is in the cache directory's way."""
        # An error now, before any call, rather than running uncached: the cache was asked for, and a run that silently
        # pays for every call again (and is no longer an exact re-run) is worse than a clear stop that costs nothing.
        try:
            where = next((p for p in (Path(self.cache_dir), *Path(self.cache_dir).parents) if p.exists()), None)
        except OSError:  # not even readable: left to the writes, which warn
            return
        if where is not None and not where.is_dir():
            raise ValueError(f"the LLM response cache {self.cache_dir} (from {source}) cannot be made: {where} is a file, "
                             "not a directory; point TEAMENVS_CACHE (or cache_dir) at a directory, or pass cache=False")

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
        """One chat completion. `ledger` (a `Usage`) and `budget` are updated; raises LLMError or BudgetExceeded.

        `overrides` are request fields (`temperature`, `response_format`, `stop`, ...); as with the
        openai package, `extra_body` is merged into the request's JSON, `extra_headers` are sent as
        headers and `timeout` replaces the client's for this call.
        """
        params = self._params(overrides)
        messages = sendable(messages)
        caching = self.cache if self.cache is not None else params.get("temperature", 0) == 0
        path = self._cache_path(messages, params) if caching else None
        if path is not None and path.exists():
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                stored = None  # a damaged cache entry is ignored and overwritten
            hit = _cache_hit(stored)
            if hit is not None:
                # A cached reply counts as the call it stands for: against the budget, with the tokens it took (only its
                # cost is 0), so that an episode with --max-calls or --token-budget plays alike with the cache warm or
                # cold, and whatever the order in which concurrent episodes filled it.
                text, reason, prompt_tokens, completion_tokens = hit
                if budget is not None:
                    budget.check()
                    budget.calls += 1
                    budget.tokens += prompt_tokens + completion_tokens
                usage = Usage(calls=1, cached=1, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                              largest_prompt_tokens=prompt_tokens, cost_usd=self.cost(0, 0))
                if ledger is not None:
                    ledger.add(usage)
                return ChatResult(text, usage, self.model, cached=True, finish_reason=reason)
        if budget is not None:
            budget.check()
            budget.calls += 1  # reserved now, so that concurrent calls cannot all pass the check
        # A deterministic request (temperature 0) that times out is not sent again while the server may still
        # be working on it (a slow local server would then do the same work twice, the copy queued behind the
        # original): the client waits for its reply instead, as long as the retries would have waited in all.
        wait_it_out = params.get("temperature", 0) == 0 and "timeout" not in params and self.max_retries > 0
        if wait_it_out:
            params = {**params, "timeout": self.timeout * (self.max_retries + 1)}
        pool, gate = self._loop_pool()
        send = self._send_http if self._transport == "http" else self._send_openai
        usage = Usage(calls=1)
        queued = time.perf_counter()
        last_error = "no attempt made"
        async with gate:
            started = time.perf_counter()
            usage.queue_s = started - queued
            for attempt in range(self.max_retries + 1):
                retry_after: float | None = None
                self.requests += 1
                try:
                    text, finish_reason, usage.prompt_tokens, usage.completion_tokens = await send(pool, messages, params, attempt)
                    break
                except Exception as exc:  # classified below; anything unexpected is not retried
                    retryable, retry_after, last_error = _classify(exc, lenient=self._transport == "openai")
                    if wait_it_out and self._timed_out(exc):
                        retryable, last_error = False, f"{last_error} (waited {params['timeout']:g} s for a deterministic reply)"
                    if not retryable or attempt == self.max_retries:
                        usage.latency_s = time.perf_counter() - started
                        if ledger is not None:
                            ledger.add(usage)
                        tries = f" after {attempt + 1} attempts" if attempt else ""
                        status, message = _error_reply(exc)
                        raise LLMError(f"model {self.model!r} at {self.shown_endpoint} failed{tries}: {last_error}",
                                       status=status, server_message=message) from None
                    usage.retries += 1
                    await asyncio.sleep(self._delay(attempt, retry_after))
        usage.latency_s = time.perf_counter() - started
        usage.largest_prompt_tokens = usage.prompt_tokens
        usage.cost_usd = self.cost(usage.prompt_tokens, usage.completion_tokens)
        if budget is not None:
            budget.tokens += usage.prompt_tokens + usage.completion_tokens
        if ledger is not None:
            ledger.add(usage)
        if path is not None and text:
            self._store(path, text, finish_reason, usage.prompt_tokens, usage.completion_tokens)
        return ChatResult(text, usage, self.model, finish_reason=finish_reason)

    def _store(self, path: Path, text: str, finish_reason: str | None, prompt_tokens: int, completion_tokens: int) -> None:
        """Write a cache entry through a temporary file of its own (processes sharing the cache may write the same
        entry at once); a failure is a warning, never the loss of the answer."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            entry = {"model": self.model, "text": text, **({"finish_reason": finish_reason} if finish_reason else {}),
                     "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
            write_whole(path, json.dumps(entry))
        except OSError as exc:
            warnings.warn(f"the LLM response cache {self.cache_dir} could not be written ({exc.strerror or exc}); "
                          "answers are kept but not cached", RuntimeWarning)

    def _timed_out(self, exc: Exception) -> bool:
        """Whether an attempt failed because its reply did not come in time."""
        if isinstance(exc, RequestTimeout):
            return True
        if self._transport == "openai":
            import openai

            return isinstance(exc, openai.APITimeoutError)
        return False

    async def _send_http(self, pool: HTTPPool, messages: Sequence[Mapping[str, Any]],
                         params: Mapping[str, Any], attempt: int = 0) -> tuple[str, str | None, int, int]:
        """One attempt over the lean transport: (text, finish_reason, prompt tokens, completion tokens). The request says
        which attempt of the call it is (`RETRY_COUNT_HEADER`)."""
        headers: Mapping[str, str] = _RETRY_COUNTS[attempt] if attempt < len(_RETRY_COUNTS) else {RETRY_COUNT_HEADER: str(attempt)}
        timeout = None
        if "extra_body" in params or "extra_headers" in params or "timeout" in params:
            params = dict(params)
            extra_body = params.pop("extra_body", None) or {}
            headers, timeout = {**(params.pop("extra_headers", None) or {}), **headers}, params.pop("timeout", None)
            params.update(extra_body)
        payload = {"model": self.model, "messages": messages if isinstance(messages, list) else list(messages), **params}
        response = await pool.post_json("/chat/completions", payload, headers=headers, timeout=timeout)
        if not 200 <= response.status < 300:
            raise StatusError(response.status, response.headers, response.body)
        return completion_fields(response.json())

    async def _send_openai(self, client: Any, messages: Sequence[Mapping[str, Any]],
                           params: Mapping[str, Any], attempt: int = 0) -> tuple[str, str | None, int, int]:
        """One attempt over the openai package, within one deadline for the whole reply (the package's timeout bounds each
        wait for bytes, so a server sending a byte a second would hold the call for good), as the lean transport's."""
        seconds = float(params.get("timeout") or self.timeout)
        params = {**params, "extra_headers": {**(params.get("extra_headers") or {}), RETRY_COUNT_HEADER: str(attempt)}}
        try:
            # the raw reply, read by the lean transport's parser: the package's own reading took a 200 `{"error": ...}`
            # or a reply without choices for an empty answer, and refused content sent as a list of text parts
            raw = await within(seconds, client.chat.completions.with_raw_response.create(
                model=self.model, messages=list(messages), **params))
        except (TimeoutError, asyncio.TimeoutError):  # the same class from Python 3.11 on
            raise RequestTimeout(f"no complete reply within {seconds:g} s") from None
        return completion_fields(Response(raw.status_code, {}, raw.content).json())

    async def aclose(self) -> None:
        """Close the HTTP connections of the running event loop (call before the loop ends).

        An `openai_client` you passed is yours to close."""
        found = self._per_loop.pop(asyncio.get_running_loop(), None)
        if found is not None:
            for pool in found[0]:
                if pool is not self.openai_client:
                    await (pool.aclose() if isinstance(pool, HTTPPool) else pool.close())

    async def context_window(self) -> int | None:
        """The model's context window in tokens as its server states it, asked once per client
        (`GET {base_url}/models/{model}`, then the `/models` list); None when the server does not
        say (OpenAI, llama-cpp-python, Ollama), cannot be asked, or has not said within
        `min(timeout, 10)` seconds in all.

        The question runs on a daemon thread of its own, waited for up to that deadline: urllib's
        timeout bounds each wait for bytes, not the answer, so a server that drips its reply could
        hold a worker thread, and with it the event loop's shutdown and Ctrl-C, for good. No redirect is
        followed: the question carries the API key."""
        if not hasattr(self, "_context_window"):
            pending = self.__dict__.get("_window_asked")
            if pending is None:  # the first caller asks; concurrent callers wait for the same answer
                pending = self._window_asked = concurrent.futures.Future()
                threading.Thread(target=self._answer_context_window, args=(pending,), daemon=True,
                                 name="teamenvs-context-window").start()
            deadline = time.monotonic() + min(self.timeout, 10.0)
            while not pending.done() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)  # (polled: no callback from the thread into a loop that may be gone)
            self._context_window = pending.result() if pending.done() else None
        return self._context_window

    def _answer_context_window(self, pending: "concurrent.futures.Future[int | None]") -> None:
        try:
            window = self._ask_context_window()
        except Exception:  # noqa: BLE001 - the server cannot be asked: no window stated
            window = None
        pending.set_result(window)

    def _ask_context_window(self) -> int | None:
        import urllib.error
        import urllib.parse
        import urllib.request

        headers = {"Authorization": f"Bearer {self._key}", **self.headers}
        opener = _no_redirects()
        for path in (f"/models/{urllib.parse.quote(self.model, safe='')}", "/models"):
            try:
                request = urllib.request.Request(_with_path(self.endpoint, path), headers=headers)
                with opener.open(request, timeout=min(self.timeout, 10.0)) as response:
                    data = json.loads(response.read(1_000_000))
            except (OSError, ValueError, urllib.error.URLError):
                continue
            if isinstance(data, dict) and isinstance(data.get("data"), list):  # the list: this model's entry
                data = next((m for m in data["data"] if isinstance(m, dict) and m.get("id") == self.model), None)
            window = stated_context_window(data)
            if window is not None:
                return window
        return None

    def close(self) -> None:
        """Close the connections that synchronous calls (`run_sync`, `LLMPolicy.act`) keep open."""
        _SYNC.close(self)

    def __repr__(self) -> str:
        shown = None if self.base_url is None else redact_url(self.base_url)
        return f"LLMClient(model={self.model!r}, base_url={shown!r}, api_key='***')"


def _with_path(url: str, path: str) -> str:
    """`url` with `path` added to its path, before its query (`http://h/v1?api-version=1` -> `http://h/v1/models?api-version=1`),
    as `HTTPPool` sends it."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path))


def _no_redirects() -> Any:
    """A urllib opener that follows no redirect (a 3xx fails as an HTTPError), as the lean transport: urllib's own sends
    the request's headers, the API key's `Authorization` among them, on to whatever host a reply names."""
    import urllib.request

    class NoRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(NoRedirects)


CONTEXT_FIELDS = ("max_model_len", "context_length", "context_window", "max_context_length", "n_ctx", "n_ctx_train")


def sendable(messages: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """`messages` with every lone surrogate of their text replaced by U+FFFD (`valid_unicode`): a model's earlier reply
    decoded from a JSON escape can hold one and bring it back in a prompt (memories, rationales), and the `openai`
    package could not send it while the lean transport sent an escape that servers read as invalid text. Both send the
    same valid text now. The messages themselves when nothing needs replacing (the usual case)."""
    if all(type(m.get("content")) is not str or valid_unicode(m["content"]) is m["content"] for m in messages):
        return messages
    return [{**m, "content": valid_unicode(m["content"])} if type(m.get("content")) is str else m for m in messages]


def stated_context_window(model: Any) -> int | None:
    """The context window a model object states (top level, or under llama.cpp's `meta`), else None."""
    if not isinstance(model, dict):
        return None
    for where in (model, model.get("meta")):
        if isinstance(where, dict):
            for name in CONTEXT_FIELDS:
                value = where.get(name)
                if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 10**8:
                    return value
    return None


def completion_fields(data: Any) -> tuple[str, str | None, int, int]:
    """(text, finish_reason, prompt tokens, completion tokens) of a chat completion's JSON; ProtocolError
    when it is not one. The first choice's text ('' when there is none, or its content is null)."""
    if not isinstance(data, dict):
        raise ProtocolError(f"not a chat completion: a JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    text, finish_reason = "", None
    if choices is None and "error" not in data:  # no model's answer at all: an endpoint's fault, not the model's empty reply
        raise ProtocolError("not a chat completion: it has no 'choices'")
    if choices is not None and not isinstance(choices, list):  # (an empty dict, 0 or "" too: not a model's empty reply)
        raise ProtocolError("not a chat completion: 'choices' is not a list of choices with a message")
    if choices:
        choice = choices[0]
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(choice, dict) or not isinstance(message, (dict, type(None))):
            raise ProtocolError("not a chat completion: 'choices' is not a list of choices with a message")
        content = (message or {}).get("content")
        if isinstance(content, list):  # text parts
            texts = [p.get("text") for p in content if isinstance(p, dict)]
            if not all(isinstance(t, (str, type(None))) for t in texts):
                raise ProtocolError("not a chat completion: the message content is not text")
            content = "".join(t or "" for t in texts)
        if not isinstance(content, (str, type(None))):
            raise ProtocolError("not a chat completion: the message content is not text")
        text, finish_reason = content or "", choice.get("finish_reason")
    elif choices is None and "error" in data:  # an error sent with a 2xx status
        raise ProtocolError(f"an error with a success status: {status_message(200, json.dumps(data))}")
    used = data.get("usage")
    prompt = token_count(used.get("prompt_tokens")) if isinstance(used, dict) else 0
    completion = token_count(used.get("completion_tokens")) if isinstance(used, dict) else 0
    return text, finish_reason if isinstance(finish_reason, str) else None, prompt, completion


MAX_TOKENS_PER_CALL = 10**9
"""The most tokens a reply's usage may count for one call (a hundred times the largest context windows): a count
beyond it, or below 0, is an endpoint's nonsense, which would write a log no reader takes or undo a token budget."""


def token_count(value: Any) -> int:
    """A usage count of a reply as an int (0 where there is none); ProtocolError when it is not a count of tokens."""
    try:
        count = int(value or 0)
    except (TypeError, ValueError, OverflowError):
        raise ProtocolError("not a chat completion: its usage counts are not numbers") from None
    if not 0 <= count <= MAX_TOKENS_PER_CALL:
        raise ProtocolError(f"not a chat completion: a usage count outside 0 to {MAX_TOKENS_PER_CALL:,} tokens for one "
                            f"call ({excerpt(value)})")
    return count


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


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (a number of seconds or an HTTP date); None when absent or unreadable."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        from datetime import datetime, timezone
        from email.utils import parsedate_to_datetime

        try:
            seconds = (parsedate_to_datetime(value) - datetime.now(timezone.utc)).total_seconds()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    return seconds if math.isfinite(seconds) else None


def _classify(exc: Exception, lenient: bool = True) -> tuple[bool, float | None, str]:
    """(retryable, Retry-After seconds or None, a short description) of a failed attempt, from either transport.

    `lenient`: a ValueError counts as an unreadable reply (the openai transport raises JSONDecodeError
    for a body that is not JSON); the lean transport says so with a ProtocolError, so there a
    ValueError is a bad request made here (a header with a line break), not retried.

    The same reply gives the same description over both: a status error says `HTTP <status>: <the
    server's message>` (the `error.message` of its JSON body, else its text, clipped)."""
    if isinstance(exc, StatusError):
        return exc.status in RETRY_STATUS, _retry_after(exc.headers.get("retry-after")), exc.describe()
    if isinstance(exc, TransportError):
        return exc.retryable, None, exc.describe()
    if type(exc).__module__.split(".")[0] == "openai":
        import openai

        if isinstance(exc, openai.APIStatusError):
            header = exc.response.headers.get("retry-after") if exc.response is not None else None
            return (exc.status_code in RETRY_STATUS, _retry_after(header),
                    f"HTTP {exc.status_code}: {status_message(exc.status_code, _openai_body(exc))}")
        if isinstance(exc, openai.APITimeoutError):
            return True, None, "the request timed out"
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            return True, None, f"could not connect ({clip(str(cause or exc))})"  # (httpx quotes a garbled reply whole)
        if isinstance(exc, openai.APIResponseValidationError):
            return True, None, f"the reply could not be read ({type(exc).__name__})"
    if lenient and isinstance(exc, ValueError):  # the openai package's reading of a body that is not JSON
        return True, None, f"the reply could not be read ({type(exc).__name__})"
    return False, None, f"{type(exc).__name__}: {clip(str(exc))}"


def _openai_body(exc: Any) -> Any:
    """The body of an openai.APIStatusError's reply."""
    try:
        return exc.response.text
    except Exception:  # the body was not read
        return exc.body if isinstance(exc.body, str) else json.dumps(exc.body) if exc.body is not None else ""


def _error_reply(exc: Exception) -> tuple[int | None, str]:
    """(HTTP status, the server's message) of a failed attempt's error reply, from either transport; (None, '')
    when the attempt got none (a timeout, an unreadable reply)."""
    if isinstance(exc, StatusError):
        return exc.status, status_message(exc.status, exc.body)
    if type(exc).__module__.split(".")[0] == "openai":
        import openai

        if isinstance(exc, openai.APIStatusError):
            return exc.status_code, status_message(exc.status_code, _openai_body(exc))
    return None, ""


# ---------------------------------------------------------------------- synchronous callers
class _SyncLoops:
    """The event loops that synchronous calls (`run_sync`, `LLMPolicy.act`) run on, kept from call to call.

    A thread with no event loop running gets one loop of its own, run in place for each call (no
    hand-over between threads: a call costs about what the same `await` does); a thread that runs
    a loop already (Jupyter, or sync code called from async code) hands its call to one loop on a
    background daemon thread and waits. Either way a client's connections stay open between calls,
    where a fresh loop per call would open new ones each time. A forked child starts loops of its
    own (the parent's are left alone: closing them would unregister the parent's sockets). At exit,
    or on `LLMClient.close()`, the connections opened on these loops are closed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()
        self._pid = os.getpid()
        self.background: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._clients: "weakref.WeakValueDictionary[int, LLMClient]" = weakref.WeakValueDictionary()
        self._loops: "weakref.WeakSet[asyncio.AbstractEventLoop]" = weakref.WeakSet()
        self._orphans: list[asyncio.AbstractEventLoop] = []  # a forked parent's loops: never closed or collected here

    def _forked(self) -> None:
        if self._pid != os.getpid():
            with self._lock:
                if self._pid != os.getpid():
                    self._orphans += [loop for loop in (self.background, *self._loops) if loop is not None]
                    self._local = threading.local()
                    self.background, self._thread, self._pid = None, None, os.getpid()
                    self._clients, self._loops = weakref.WeakValueDictionary(), weakref.WeakSet()

    def _own(self) -> asyncio.AbstractEventLoop:
        """This thread's loop (made on first use; closed when the thread ends)."""
        owned = getattr(self._local, "owned", None)
        if owned is None or owned.loop.is_closed():
            owned = self._local.owned = _OwnLoop(asyncio.new_event_loop(), self)
            self._loops.add(owned.loop)
        return owned.loop

    def _background(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self.background is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=self._serve, args=(loop,), name="teamenvs-llm-sync", daemon=True)
                thread.start()
                self.background, self._thread = loop, thread
                self._loops.add(loop)
            return self.background

    @staticmethod
    def _serve(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        loop.run_forever()

    def register(self, loop: asyncio.AbstractEventLoop, client: "LLMClient") -> None:
        if loop in self._loops:
            self._clients[id(client)] = client

    def run(self, coro: Awaitable[T]) -> T:
        self._forked()
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop runs in this thread: run this thread's own, in place
            loop = self._own()
            task = loop.create_task(coro)  # type: ignore[arg-type]
            try:
                return loop.run_until_complete(task)
            except BaseException:
                if not task.done():  # e.g. Ctrl-C: stop the request too, so nothing is left half done
                    task.cancel()
                    try:
                        loop.run_until_complete(task)
                    except BaseException:
                        pass
                raise
        if threading.current_thread() is self._thread:
            getattr(coro, "close", lambda: None)()
            raise RuntimeError("a synchronous LLM call was made from inside an async one: await aact()/chat() there")
        future = asyncio.run_coroutine_threadsafe(coro, self._background())  # type: ignore[arg-type]
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def close(self, client: "LLMClient") -> None:
        """Close `client`'s connections on this thread's loop and on the background loop."""
        self._forked()
        owned = getattr(self._local, "owned", None)
        own = owned.loop if owned is not None else None
        if own is not None and own in client._per_loop and not own.is_running() and not own.is_closed():
            own.run_until_complete(client.aclose())
        background = self.background
        if background is not None and background in client._per_loop and self._thread is not None and self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(client.aclose(), background).result(5.0)

    def shutdown(self) -> None:
        """At exit: close the connections of every client on this thread's loop and the background one."""
        if self._pid != os.getpid():
            return
        for client in list(self._clients.values()):
            try:
                self.close(client)
            except Exception:  # best effort at exit
                pass
        background, thread = self.background, self._thread
        if background is not None and thread is not None and thread.is_alive():
            background.call_soon_threadsafe(background.stop)
            thread.join(2.0)
        owned = getattr(self._local, "owned", None)
        if owned is not None:
            owned.close()

    def pools_on(self, loop: asyncio.AbstractEventLoop) -> list[Any]:
        """The connection pools clients keep on `loop`."""
        return [pool for client in list(self._clients.values()) for pool in client._per_loop.get(loop, ([], None))[0]]


class _OwnLoop:
    """A thread's own loop for synchronous calls, closed (its connections first) when the thread ends and
    its thread-local storage goes, or at exit: a loop left to the garbage collector can be finalised after
    its own sockets and fail noisily."""

    __slots__ = ("loop", "loops", "pid")

    def __init__(self, loop: asyncio.AbstractEventLoop, loops: _SyncLoops) -> None:
        self.loop: asyncio.AbstractEventLoop | None = loop
        self.loops, self.pid = loops, os.getpid()

    def close(self) -> None:
        loop, self.loop = self.loop, None
        if loop is None or self.pid != os.getpid() or loop.is_running() or loop.is_closed():
            return  # a forked parent's loop is never closed in the child: that would unregister the parent's sockets
        try:
            for pool in self.loops.pools_on(loop):
                if isinstance(pool, HTTPPool):
                    pool.close_now()
            loop.close()
        except Exception:  # at interpreter exit, or a loop in a state this cannot fix
            pass

    def __del__(self) -> None:
        self.close()


_SYNC = _SyncLoops()
atexit.register(_SYNC.shutdown)


def run_sync(coro: Awaitable[T]) -> T:
    """Run `coro` (an LLM call, `LLMPolicy.aact`, ...) to its end from synchronous code, on a loop kept
    for synchronous calls (see `_SyncLoops`), and return its result."""
    return _SYNC.run(coro)
