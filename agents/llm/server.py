"""A small local OpenAI-compatible server for offline demos and tests (`teamenvs serve-llm`).

It speaks the three endpoints the client uses, over real HTTP on 127.0.0.1:
`GET /v1/models`, `POST /v1/chat/completions` (with `usage`) and `POST /v1/embeddings`
(the offline hashing embedder). No key is checked and nothing leaves the machine.

Models:
- `random-valid`: a reasoning sentence and a last line `ACTION: <command>`, the command
  being one of the examples listed in the prompt under "Valid actions now" (lines
  `- <usage> (e.g. <example>)`), picked with a generator seeded by the server seed and the
  request's messages, so the same request always gets the same answer; asked a probe
  (`agents.probes`) it answers the JSON form with stock sentences and a random confidence,
  asked an interview item, 'Rating: <1-10>. <sentence>';
- `echo`: the last user message, verbatim.

Fault injection, by model suffix (`random-valid+latency=200+429=2`) or per request with the
header `X-Fault: latency=200,500=1`:
- `latency=MS`: answer after MS milliseconds;
- `429=N` / `500=N` / `503=N`: the first N attempts of each distinct request fail with that
  status (429 and 503 carry `Retry-After: <retry_after>` seconds, default 0.05);
- `retry_after=S`: the Retry-After value;
- `malformed`: a reply that is not an action; `empty`: an empty reply; `badjson`: a body
  that is not JSON; `hang=S`: wait S seconds (default 30) before answering, for timeouts.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

MODELS = ("random-valid", "echo")
_VALID_HEADER = "valid actions now"


def parse_faults(spec: str) -> dict[str, float]:
    """'latency=200,429=2,malformed' (or '+'-separated) as a dict; flags map to 1."""
    faults: dict[str, float] = {}
    for part in spec.replace("+", ",").split(","):
        part = part.strip()
        if not part:
            continue
        key, _, value = part.partition("=")
        try:
            faults[key.strip().lower()] = float(value) if value else 1.0
        except ValueError:
            raise ValueError(f"bad fault {part!r}: write name=number, e.g. latency=200") from None
    return faults


def valid_examples(prompt: str) -> list[str]:
    """The example commands listed in a prompt's 'Valid actions now' block."""
    examples: list[str] = []
    inside = False
    for line in prompt.splitlines():
        if line.strip().lower().startswith(_VALID_HEADER):
            inside = True
            examples = []
            continue
        if inside:
            text = line.strip()
            if not text.startswith("- "):
                if text:
                    inside = False
                continue
            if "(e.g. " in text and text.endswith(")"):
                examples.append(text[text.rindex("(e.g. ") + 6 : -1])
            else:
                examples.append(text[2:])
    return examples


_PHRASES = ("we are making steady progress", "the team is still finding its way", "most of the work is still ahead",
            "my teammates are doing their part", "I will keep to the plan", "I will adapt to what the others do")


def random_valid_reply(question: str, prompt: str, rng: np.random.Generator) -> str:
    """The `random-valid` model: a random valid action, or a well-formed random answer to a probe or a rating item."""
    if '"task_state"' in question and '"confidence"' in question:
        answer = {k: _PHRASES[int(rng.integers(len(_PHRASES)))] for k in ("task_state", "teammates", "plan")}
        answer["confidence"] = round(float(rng.random()), 2)
        return json.dumps(answer)
    if "Rating: <1-10>" in question:
        return f"Rating: {int(rng.integers(1, 11))}. {_PHRASES[int(rng.integers(len(_PHRASES)))].capitalize()}."
    examples = valid_examples(question) or valid_examples(prompt)
    choice = examples[int(rng.integers(len(examples)))] if examples else "wait"
    return f"I weighed the options I have now and picked one.\nACTION: {choice}"


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _State:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.attempts: dict[str, int] = {}
        self.lock = threading.Lock()
        self.requests = 0

    def count(self) -> None:
        with self.lock:
            self.requests += 1

    def attempt(self, key: str) -> int:
        with self.lock:
            n = self.attempts.get(key, 0)
            self.attempts[key] = n + 1
            return n


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # no 40 ms delayed-ACK stall between headers and body on kept-alive connections
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        self._send(status, {"error": {"message": message, "type": "teamenvs_local_server", "code": status}}, headers)

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "teamenvs"} for m in MODELS]})
        else:
            self._error(404, f"no such endpoint {self.path}; this server has /v1/models, /v1/chat/completions, /v1/embeddings")

    def do_POST(self) -> None:
        try:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, json.JSONDecodeError):
            self._error(400, "the request body is not JSON")
            return
        path = self.path.rstrip("/")
        if path in ("/v1/chat/completions", "/chat/completions"):
            self._chat(body)
        elif path in ("/v1/embeddings", "/embeddings"):
            self._embeddings(body)
        else:
            self._error(404, f"no such endpoint {self.path}")

    def _chat(self, body: dict[str, Any]) -> None:
        self.server.state.count()
        model_spec = str(body.get("model", ""))
        model, _, suffix = model_spec.partition("+")
        if model not in MODELS:
            self._error(404, f"model {model!r} not found; the built-in server has: {', '.join(MODELS)}")
            return
        try:
            faults = parse_faults(suffix) | parse_faults(self.headers.get("X-Fault", ""))
        except ValueError as exc:
            self._error(400, str(exc))
            return
        messages = body.get("messages") or []
        key = hashlib.sha256(json.dumps([model_spec, messages], sort_keys=True).encode()).hexdigest()
        attempt = self.server.state.attempt(key)
        if faults.get("latency"):
            time.sleep(faults["latency"] / 1000)
        if "hang" in faults:
            time.sleep(faults["hang"] if faults["hang"] != 1.0 else 30.0)
        retry_after = faults.get("retry_after", 0.05)
        for status in (429, 500, 503):
            if attempt < faults.get(str(status), 0):
                headers = {"Retry-After": f"{retry_after:g}"} if status in (429, 503) else {}
                self._error(status, f"injected fault: {status} on attempt {attempt + 1}", headers)
                return
        if "badjson" in faults:
            self._send(200, None, raw=b"{this is not json")
            return
        prompt = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
        last_user = next((str(m.get("content", "")) for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"), "")
        if "empty" in faults:
            reply = ""
        elif "malformed" in faults:
            reply = "Hmm, that is an interesting situation. I would rather talk about the weather."
        elif model == "echo":
            reply = last_user
        else:
            seed = int.from_bytes(hashlib.sha256(f"{self.server.state.seed}:{key}".encode()).digest()[:8], "little")
            reply = random_valid_reply(last_user, prompt, np.random.default_rng(seed))
        usage = {"prompt_tokens": _tokens(prompt), "completion_tokens": _tokens(reply)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        self._send(200, {
            "id": f"chatcmpl-{key[:12]}-{attempt}",
            "object": "chat.completion",
            "created": 0,
            "model": model_spec,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": usage,
        })

    def _embeddings(self, body: dict[str, Any]) -> None:
        from agents.embedders import HashingEmbedder

        inputs = body.get("input", [])
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        if not all(isinstance(t, str) for t in texts):
            self._error(400, "input must be a string or a list of strings")
            return
        vectors = HashingEmbedder().embed(texts)
        tokens = sum(_tokens(t) for t in texts)
        self._send(200, {
            "object": "list",
            "model": str(body.get("model", "hashing")),
            "data": [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]} for i, v in enumerate(vectors)],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # many agents connect at once
    state: _State


class LocalLLMServer:
    """The server on 127.0.0.1 in a background thread: `with LocalLLMServer() as server: server.url`."""

    def __init__(self, port: int = 0, seed: int = 0, host: str = "127.0.0.1") -> None:
        self._server = _Server((host, port), _Handler)
        self._server.state = _State(seed)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The base URL for an OpenAI client (`.../v1`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> int:
        """Chat requests received so far (faulty ones included)."""
        return self._server.state.requests

    def start(self) -> "LocalLLMServer":
        if self._thread is None:
            self._thread = threading.Thread(target=self._server.serve_forever, name="teamenvs-llm-server", daemon=True)
            self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread = None

    def __enter__(self) -> "LocalLLMServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def resolve_endpoint(model: str, base_url: str | None) -> tuple[str, LocalLLMServer | None]:
    """The endpoint for `model`: `base_url`, else `OPENAI_BASE_URL`, else a started built-in server.

    The built-in server is used only for its own models (a clear error otherwise, before
    anything runs); the caller stops the returned server when done.
    """
    import os
    import sys

    from teamenvs.core.config import ConfigError

    url = base_url or os.environ.get("OPENAI_BASE_URL")
    if url:
        return url, None
    if model.partition("+")[0] not in MODELS:
        raise ConfigError(
            f"no --base-url given (and no OPENAI_BASE_URL), so the built-in offline server would answer, and it "
            f"has no model {model!r} (only {', '.join(MODELS)}). For OpenAI add --base-url "
            "https://api.openai.com/v1 (key from OPENAI_API_KEY); for a local server, its URL."
        )
    server = LocalLLMServer().start()
    print(
        f"No --base-url given (and no OPENAI_BASE_URL): using the built-in offline server at {server.url}. "
        "Its models (random-valid, echo) are test doubles, not language models.",
        file=sys.stderr,
    )
    return server.url, server
