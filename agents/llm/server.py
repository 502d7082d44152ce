"""A small local OpenAI-compatible server for offline demos and tests (`teamenvs serve-llm`).

It speaks the endpoints the client uses, over real HTTP on 127.0.0.1: `GET /v1/models`,
`GET /v1/models/{id}` (a model with or without a fault suffix; 404 for one it does not have), `POST /v1/chat/completions` (with
`usage`) and `POST /v1/embeddings` (the offline hashing embedder). No key is checked and
nothing leaves the machine.

Models:
- `random-valid`: a reasoning sentence and a last line `ACTION: <command>`, the command
  being one of the examples listed in the prompt under "Valid actions now" (lines
  `- <usage> (e.g. <example>)`), picked with a generator seeded by the server seed and the
  request's messages, so the same request always gets the same answer; asked a probe
  (`agents.probes`) it answers the JSON form with stock sentences and a random confidence,
  asked an interview item, 'Rating: <1-10>. <sentence>';
- `echo`: the last user message, verbatim.
Message content may be a string, null or a list of text parts (joined).

Chat parameters honoured as a model would honour them:
- `max_tokens` (or `max_completion_tokens`; the smaller when both): a reply longer than it
  (tokens counted as characters / 4) is cut there, with `finish_reason` "length";
- `stop` (a string or up to 4): the reply ends just before the first stop string found, with
  `finish_reason` "stop";
- `n` (1 to 128): n choices, each drawn with its own generator, reproducibly;
- `seed`: a request seed joins the generator's seed, so it changes random-valid's draw (and a
  schema instance's), and the same seed gives the same reply;
- `stream: true`: server-sent events (`Content-Type: text/event-stream`, chunked), one
  `data: {chat.completion.chunk}` event per role, word and finish reason of each choice, then,
  with `stream_options: {"include_usage": true}`, a chunk with no choices and the `usage`, and
  last `data: [DONE]`;
- `temperature`, `top_p`, `frequency_penalty`, `presence_penalty` are checked for range (the
  test models do not sample from a distribution they could reshape).
Parameters it does not implement are refused with a 400 that names them (`tools`, `tool_choice`,
`parallel_tool_calls`, `functions`, `function_call`, `logprobs`, `top_logprobs`, `logit_bias`,
`audio`, `modalities` other than text, `prediction`, `web_search_options`) unless null or false;
other fields (server extensions such as llama.cpp's `grammar` or vLLM's `guided_regex`) are ignored.

Structured outputs: with `response_format` `{"type": "json_schema", "json_schema": {"schema": S}}`
a model's reply is a JSON instance of S drawn with the same seeded generator (objects,
`anyOf`, `enum`, `const`, integers and numbers within their bounds, strings within their
lengths, booleans, arrays), as a server doing constrained decoding would give; with
`{"type": "json_object", "schema": S}` (llama-cpp-python's form) the same, and with a bare
`{"type": "json_object"}` a JSON object. This is how the constrained-decoding path
(`teamenvs.core.constrain`, `LLMPolicy(constrain="json")`) is tested offline. The instances of one
request (all `n` choices together) may take at most `MAX_INSTANCE_SIZE` (250,000) items and
characters (array items, object properties, string characters, pattern repetitions): a schema
asking for more (`minItems`, `minLength`, a pattern's count, or their nesting) is refused with a
400 naming the keyword and the bound, in bounded time and memory.

Fault injection, by model suffix (`random-valid+latency=200+429=2`) or per request with the
header `X-Fault: latency=200,500=1` (both apply; the header wins on a name given twice):
- `latency=MS`: answer after MS milliseconds (at most 60000);
- `ctx=N`: a context window of N tokens, as a small local model has: `GET /v1/models/{id}` states it
  as `max_model_len` (as vLLM does) and a request whose prompt plus output limit (`max_tokens`)
  is longer is refused with 400 and vLLM's message (tokens counted as characters / 4);
- `429=N` / `500=N` / `503=N`: the first N attempts of each call (see below) fail with that
  status (429 and 503 carry `Retry-After: <retry_after>` seconds, default 0.05);
- `retry_after=S`: the Retry-After value (at most 60);
- `malformed`: a reply that is not an action; `empty`: an empty reply; `badjson`: a body
  that is not JSON (streamed: an event whose data is not JSON); `hang=S`: wait S seconds (default 30, at most 60) before answering, for timeouts;
- fault rates, `p<fault>=R` for `p429`, `p500`, `p503`, `ptimeout`, `pbadjson`, `pmalformed`
  and `pempty`: each attempt gets that fault with probability R (the rates add up to at most
  1); `ptimeout` holds the request `timeout_after=S` seconds (default 30, at most 60) and then
  answers 504, as a gateway that gave up would (a client with a shorter timeout sees its own);
  `seed=N` (default: the server's seed) fixes the draws (the fault seed; a request's `seed`
  field changes replies, not faults). Each attempt's draw is a hash of the
  seed, the request's identity (model with its suffix, and messages) and the attempt number, so
  the same requests get the same faults whatever order concurrent clients send them in, and a
  retry draws afresh. The attempt number is the one the request gives (`X-Retry-Count`: 0, then
  1, 2 ... for the retries, as teamenvs' client sends it with each call), so one call's faults are
  the same in every run whatever calls came before it (two episodes that ask the same question, a
  DayTrader round's in two seeds, each get the same faults, in any order); for a client that does
  not say, the server counts the attempts of each distinct request itself, for its whole life (two
  identical requests then share one counter: which gets which draw depends on the order they come
  in). The `429=N` faults above count the same attempts.
  E.g. `random-valid+p429=0.1+p500=0.05+ptimeout=0.025+pbadjson=0.025+seed=7` fails 20% of attempts.

Hostile input is answered, never dropped: every malformed request gets an OpenAI-style JSON
error (`{"error": {"message", "type", "code"}}`) saying what is wrong (400; 411 without a
Content-Length; 413 above `max_body` bytes; 408 when a started request stalls past
`read_timeout` seconds, which also bounds how long a whole request may take to arrive and how
long an idle connection is kept); at most `max_connections` connections are served at once,
and the next ones get 503 with `Retry-After`. Empty lines before a request line are skipped,
as HTTP/1.1 asks (up to `LEADING_EMPTY_LINES`; more, or a line of blanks, is a 400).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import socket
import threading
import time
import urllib.parse
from collections import Counter
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from agents.llm.http import RETRY_COUNT_HEADER
from teamenvs.core.text import excerpt

MODELS = ("random-valid", "echo")
_VALID_HEADER = "valid actions now"

READ_TIMEOUT = 10.0
MAX_BODY = 8 * 2**20
MAX_CONNECTIONS = 256
MAX_WAIT_S = 60.0
# Empty lines skipped before a request line (RFC 9112 section 2.2: a server should ignore at least one; some clients
# end a body with an extra CRLF). The standard library's handler drops the connection without a word instead.
LEADING_EMPTY_LINES = 8

# name -> (lowest, highest, what the number is); a bare name means the value in _BARE, else 1
_RATE_FAULTS = ("429", "500", "503", "timeout", "badjson", "malformed", "empty")
_FAULT_LIMITS: dict[str, tuple[float, float, str]] = {
    "latency": (0.0, MAX_WAIT_S * 1000, "milliseconds"),
    "hang": (0.0, MAX_WAIT_S, "seconds"),
    "retry_after": (0.0, MAX_WAIT_S, "seconds"),
    "timeout_after": (0.0, MAX_WAIT_S, "seconds"),
    "429": (0.0, 1e9, "attempts"),
    "500": (0.0, 1e9, "attempts"),
    "503": (0.0, 1e9, "attempts"),
    "malformed": (0.0, 1.0, "a flag"),
    "empty": (0.0, 1.0, "a flag"),
    "badjson": (0.0, 1.0, "a flag"),
    "seed": (0.0, 2.0**63, "a whole number"),
    "ctx": (64.0, 1e7, "tokens"),
    **{f"p{name}": (0.0, 1.0, "a probability") for name in _RATE_FAULTS},
}
_BARE = {"hang": 30.0}


def _clip(text: str, limit: int = 80) -> str:
    """A hostile string cut to a length fit for an error message."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def parse_faults(spec: str) -> dict[str, float]:
    """'latency=200,429=2,malformed' (or '+'-separated) as a dict; flags map to 1.

    Raises ValueError naming the part that is unknown, not a number, or out of its range.
    """
    faults: dict[str, float] = {}
    for part in spec.replace("+", ",").split(","):
        part = part.strip()
        if not part:
            continue
        key, equals, text = (s.strip() for s in part.partition("="))
        key = key.lower()
        if key not in _FAULT_LIMITS:
            raise ValueError(f"unknown fault {_clip(key)!r}; faults: {', '.join(_FAULT_LIMITS)}")
        try:
            value = float(text) if equals else _BARE.get(key, 1.0)
        except ValueError:
            raise ValueError(f"bad fault {_clip(part)!r}: write name=number, e.g. latency=200") from None
        problem = _fault_value_problem(key, value)
        if problem:
            raise ValueError(f"bad fault {_clip(part)!r}: {problem}")
        faults[key] = value
    check_rates(faults)
    return faults


def _fault_value_problem(key: str, value: float) -> str | None:
    low, high, unit = _FAULT_LIMITS[key]
    if unit == "a flag":
        return None if value in (0.0, 1.0) else f"{key} is a flag: give it bare, or =1 or =0"
    if not (math.isfinite(value) and low <= value <= high) or (unit == "a whole number" and value != int(value)):
        return f"{key} must be {unit} from {low:g} to {high:g}"
    return None


def check_rates(faults: dict[str, float]) -> None:
    """Raises ValueError if the fault rates add up to more than 1."""
    total = sum(faults.get(f"p{name}", 0.0) for name in _RATE_FAULTS)
    if total > 1.0 + 1e-9:
        raise ValueError(f"the fault rates add up to {total:g}; they must add up to at most 1")


def fault_draw(seed: int, key: str, attempt: int) -> float:
    """A number in [0, 1) fixed by the fault seed, the request's identity and the attempt number."""
    digest = hashlib.sha256(f"{seed}:{key}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2**64


def drawn_fault(faults: dict[str, float], draw: float) -> str | None:
    """The fault rate a draw falls in, the rates laid end to end over [0, 1) in `_RATE_FAULTS` order."""
    edge = 0.0
    for name in _RATE_FAULTS:
        edge += faults.get(f"p{name}", 0.0)
        if draw < edge:
            return name
    return None


# ---------------------------------------------------------------------- request checks
def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__)


def _is_number(value: Any, low: float, high: float) -> bool:
    # compared, not converted: NaN fails both bounds, and a 400-digit integer must not overflow a float
    return isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high


def content_text(content: Any) -> str | None:
    """A message's content as text (a string, null, or a list of text parts); None if it is none of those."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in content):
        return "".join(p["text"] for p in content)
    return None


# parameters that change what a reply holds, which this server cannot honour: refused, not ignored
UNSUPPORTED = {
    "tools": "tool calls", "tool_choice": "tool calls", "parallel_tool_calls": "tool calls",
    "functions": "function calls", "function_call": "function calls",
    "logprobs": "log probabilities", "top_logprobs": "log probabilities", "logit_bias": "logit biases",
    "audio": "audio output", "modalities": "output modalities", "prediction": "predicted outputs",
    "web_search_options": "web search",
}
MAX_CHOICES = 128  # `n`, as OpenAI's API
MAX_STOPS = 4  # stop strings, as OpenAI's API


def _is_whole(value: Any, low: float, high: float) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def chat_problem(body: Any) -> str | None:
    """Why a chat completion request cannot be answered (a 400's message), or None."""
    if not isinstance(body, dict):
        return f"the request body must be a JSON object, got {_kind(body)}"
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        return f"'model' must be a non-empty string, got {_kind(model)}"
    return _messages_problem(body.get("messages")) or _unsupported_problem(body) or _sampling_problem(body) or _stream_problem(body)


def _messages_problem(messages: Any) -> str | None:
    if not isinstance(messages, list) or not messages:
        return f"'messages' must be a non-empty array of message objects, got {_kind(messages)}"
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            return f"messages[{i}] must be an object with 'role' and 'content', got {_kind(message)}"
        if not isinstance(message.get("role"), str):
            return f"messages[{i}].role must be a string, got {_kind(message.get('role'))}"
        if content_text(message.get("content")) is None:
            return f"messages[{i}].content must be a string, null or an array of text parts, got {_kind(message.get('content'))}"
    return None


def _unsupported_problem(body: dict[str, Any]) -> str | None:
    """The first parameter given that this server does not implement (null and false ask for nothing)."""
    for name, what in UNSUPPORTED.items():
        if body.get(name) not in (None, False) and not (name == "modalities" and body[name] == ["text"]):
            return f"'{name}' is not supported: this test server has no {what}; leave '{name}' out"
    return None


def _sampling_problem(body: dict[str, Any]) -> str | None:
    for name, low, high in (("temperature", 0.0, 2.0), ("top_p", 0.0, 1.0), ("frequency_penalty", -2.0, 2.0),
                            ("presence_penalty", -2.0, 2.0)):
        if body.get(name) is not None and not _is_number(body[name], low, high):
            return f"'{name}' must be a number from {low:g} to {high:g}, got {_clip(json.dumps(body[name]))}"
    for name in ("max_tokens", "max_completion_tokens"):
        if body.get(name) is not None and not _is_whole(body[name], 1, math.inf):
            return f"'{name}' must be a whole number >= 1, got {_clip(json.dumps(body[name]))}"
    if body.get("n") is not None and not _is_whole(body["n"], 1, MAX_CHOICES):
        return f"'n' must be a whole number from 1 to {MAX_CHOICES}, got {_clip(json.dumps(body['n']))}"
    if body.get("seed") is not None and not _is_whole(body["seed"], -(2**63), 2**63 - 1):
        return f"'seed' must be a whole number from -2**63 to 2**63 - 1, got {_clip(json.dumps(body['seed']))}"
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else stop
    if stop is not None and not (isinstance(stops, list) and len(stops) <= MAX_STOPS and all(isinstance(s, str) and s for s in stops)):
        return f"'stop' must be a non-empty string or an array of at most {MAX_STOPS} of them, got {_clip(json.dumps(stop))}"
    return None


def _stream_problem(body: dict[str, Any]) -> str | None:
    stream, options = body.get("stream"), body.get("stream_options")
    if not isinstance(stream, (bool, type(None))):
        return f"'stream' must be true or false, got {_kind(stream)}"
    if options is None:
        return None
    if not stream:
        return "'stream_options' is only allowed when 'stream' is true"
    if not isinstance(options, dict) or not isinstance(options.get("include_usage"), (bool, type(None))):
        return "'stream_options' must be an object like {\"include_usage\": true}"
    return None


def stop_strings(body: dict[str, Any]) -> list[str]:
    """A request's stop strings (`stop` is a string, an array of them, or absent)."""
    stop = body.get("stop")
    return [stop] if isinstance(stop, str) else list(stop or [])


def output_limit(body: dict[str, Any]) -> int | None:
    """The reply's token limit: the smaller of `max_tokens` and `max_completion_tokens`, or None."""
    limits = [body[name] for name in ("max_tokens", "max_completion_tokens") if body.get(name) is not None]
    return min(limits) if limits else None


def cut_reply(reply: str, stops: list[str], limit: int | None) -> tuple[str, str]:
    """(reply, finish_reason) as a model would end it: just before the first stop string ("stop"),
    or at `limit` tokens, counted as characters / 4 ("length")."""
    cuts = [i for i in (reply.find(s) for s in stops) if i >= 0]
    if cuts:
        reply = reply[:min(cuts)]
    if limit is not None and _tokens(reply) > limit:
        return reply[: 4 * limit], "length"
    return reply, "stop"


def stream_chunks(completion_id: str, model: str, choices: list[tuple[str, str]], usage: dict[str, int] | None) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` objects of a streamed completion: for each choice its role, its
    text a word at a time and its finish reason; then, when `usage` is given (`stream_options.
    include_usage`), a last chunk with no choices and the usage (the others carry `"usage": null`)."""
    head = {"id": completion_id, "object": "chat.completion.chunk", "created": 0, "model": model}
    extra: dict[str, Any] = {"usage": None} if usage is not None else {}

    def chunk(index: int, delta: dict[str, str], finish_reason: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}], **extra}

    chunks = []
    for index, (text, finish_reason) in enumerate(choices):
        chunks.append(chunk(index, {"role": "assistant", "content": ""}))
        chunks += [chunk(index, {"content": piece}) for piece in re.findall(r"\S+\s*|\s+", text)]
        chunks.append(chunk(index, {}, finish_reason))
    if usage is not None:
        chunks.append({**head, "choices": [], "usage": usage})
    return chunks


def sse(data: str) -> bytes:
    """One server-sent event carrying `data` (a single line)."""
    return f"data: {data}\n\n".encode()


def embedding_inputs(body: Any) -> list[str] | str:
    """The texts of an embeddings request, or why it cannot be answered (a string)."""
    if not isinstance(body, dict):
        return f"the request body must be a JSON object, got {_kind(body)}"
    if body.get("model") is not None and not isinstance(body["model"], str):
        return f"'model' must be a string, got {_kind(body['model'])}"
    inputs = body.get("input")
    if isinstance(inputs, str):
        return [inputs]
    if isinstance(inputs, list) and inputs and all(isinstance(t, str) for t in inputs):
        return inputs
    got = "an empty array" if inputs == [] else _kind(inputs) if not isinstance(inputs, list) else "an array holding non-strings"
    return f"'input' must be a string or a non-empty array of strings (token arrays are not supported), got {got}"


def body_length(values: list[str], limit: int) -> int:
    """The body's length from its Content-Length header(s); raises _Refused (411, 400 or 413) when unusable."""
    if not values:
        raise _Refused(411, "a POST needs a Content-Length header (chunked bodies are not supported)", close=True)
    if len(set(v.strip() for v in values)) > 1:
        raise _Refused(400, "conflicting Content-Length headers", close=True)
    text = values[0].strip()
    if not re.fullmatch(r"[0-9]{1,20}", text):
        raise _Refused(400, f"Content-Length must be a whole number of bytes, got {_clip(text)!r}", close=True)
    length = int(text)
    if length > limit:
        raise _Refused(413, f"the request body is {length:,} bytes; this server accepts at most {limit:,}", close=True)
    return length


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_body(data: bytes) -> Any:
    """The JSON in a request body; raises _Refused (400) saying why it is not JSON."""
    if not data.strip():
        raise _Refused(400, "the request body is empty: send a JSON object")
    try:
        return json.loads(data, parse_constant=_reject_constant)
    except RecursionError:
        raise _Refused(400, "the request body is not JSON: nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, NaN/Infinity, too many digits
        raise _Refused(400, f"the request body is not JSON: {_clip(str(exc), 120)}") from None


class _Refused(Exception):
    """A request answered with an error status; `close` when the rest of its input cannot be trusted."""

    def __init__(self, status: int, message: str, close: bool = False) -> None:
        super().__init__(message)
        self.status, self.message, self.close = status, message, close


_WORDS = ("plan", "share", "fair", "together", "next", "round", "agree", "trust", "north", "lake")
MAX_SCHEMA_DEPTH = 32
MAX_INSTANCE_SIZE = 250_000  # items and characters of one request's schema instances, all `n` choices together


class SchemaTooLarge(ValueError):
    """A schema whose instance would take more than a request's `MAX_INSTANCE_SIZE`; `what` asked for it."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} asks for more than the {MAX_INSTANCE_SIZE:,} items and characters this server "
                         "generates for one request")


class _Budget:
    """What is left of a request's `MAX_INSTANCE_SIZE` items and characters."""

    def __init__(self) -> None:
        self.left = MAX_INSTANCE_SIZE

    def spend(self, amount: int, what: str) -> None:
        """Take `amount`, else raise SchemaTooLarge naming `what` (a keyword and its value)."""
        if amount > self.left:
            raise SchemaTooLarge(what)
        self.left -= max(amount, 0)


def schema_problem(response_format: Any) -> str | None:
    """Why a `response_format` cannot be honoured (a 400's message), or None."""
    if response_format is None:
        return None
    if not isinstance(response_format, dict) or response_format.get("type") not in ("text", "json_object", "json_schema"):
        return "'response_format' must be an object with type text, json_object or json_schema"
    if response_format["type"] == "json_schema":
        spec = response_format.get("json_schema")
        if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
            return "'response_format.json_schema.schema' must be a JSON schema object"
    if response_format["type"] == "json_object" and not isinstance(response_format.get("schema", {}), dict):
        return "'response_format.schema' must be a JSON schema object"
    return None


def response_schema(response_format: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema a `response_format` asks for: `json_schema`'s, the `schema` of a `json_object` (as
    llama-cpp-python's server takes it), else any object."""
    if response_format["type"] == "json_schema":
        return response_format["json_schema"]["schema"]
    return response_format.get("schema") or {"type": "object", "properties": {}}


_PRINTABLE = [chr(c) for c in range(32, 127)]


def _class_chars(body: str) -> list[str]:
    """The printable ASCII characters of a regex character class body (`a-z0-9`, `^\\n`)."""
    negate = body.startswith("^")
    return [c for c in _PRINTABLE if bool(re.fullmatch(f"[{body[1:] if negate else body}]", c)) != negate]


_CONTROL_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}


def _escaped(char: str) -> str:
    """The text a regex escape `\\<char>` stands for; ValueError for a class or other escape (`\\d`, `\\p{L}`,
    `\\u0041`, a back-reference), which is no literal text."""
    if char in _CONTROL_ESCAPES:
        return _CONTROL_ESCAPES[char]
    if char.isalnum():
        raise ValueError(f"the pattern uses regex features this server cannot generate ('\\{char}')")
    return char


def _regex_atoms(pattern: str, pos: int = 0) -> tuple[list[list[tuple[Any, int, int]]], int]:
    """Parse the regex subset of structured-output patterns (literals, escapes, classes, `(?:...)`
    groups, `|`, counts) into alternatives of (atom, low, high) items; returns (alternatives, end)."""
    options: list[list[tuple[Any, int, int]]] = [[]]
    while pos < len(pattern) and pattern[pos] != ")":
        c = pattern[pos]
        if c == "|":
            options.append([])
            pos += 1
            continue
        if c == "(":
            inner, pos = _regex_atoms(pattern, pos + (3 if pattern.startswith("(?:", pos) else 1))
            atom: Any = ("group", inner)
            pos += 1  # the ')'
        elif c == "[":
            end = pos + 1
            while pattern[end] != "]" or pattern[end - 1] == "\\":
                end += 1
            atom, pos = ("chars", _class_chars(pattern[pos + 1:end])), end + 1
        elif c == "\\":
            atom, pos = ("text", _escaped(pattern[pos + 1])), pos + 2
        elif c in "*+?":  # a count after a count (lazy `*?`, possessive `*+`), or a lookaround's `(?=`: not generated
            raise ValueError(f"the pattern uses regex features this server cannot generate ({_clip(pattern[max(pos - 1, 0):pos + 1], 10)!r})")
        elif c in "^$":
            pos += 1
            continue
        else:
            atom, pos = ("text", c), pos + 1
        low, high = 1, 1
        count = re.match(r"\?|\*|\+|\{(\d+)(,(\d*))?\}", pattern[pos:])
        if count and count.group(0):
            token = count.group(0)
            low, high = {"?": (0, 1), "*": (0, 4), "+": (1, 4)}.get(token, (0, 0))
            if token.startswith("{"):
                low = int(count.group(1))
                high = low if count.group(2) is None else int(count.group(3)) if count.group(3) else low + 4
            pos += len(token)
        options[-1].append((atom, low, min(high, low + 12), count.group(0) if count else ""))
    return options, pos


def regex_instance(pattern: str, rng: np.random.Generator, budget: _Budget | None = None) -> str:
    """A string matching `pattern` (the subset `teamenvs.core.constrain` writes), drawn with `rng`;
    SchemaTooLarge when its repetitions take more than `budget` (by default a request's)."""
    options, _ = _regex_atoms(pattern)
    budget = budget or _Budget()

    def draw(alternatives: list[list[tuple[Any, int, int, str]]]) -> str:
        out = []
        for atom, low, high, token in alternatives[int(rng.integers(len(alternatives)))]:
            what = f"the pattern's repetition {_clip(token, 40)}" if token else "the pattern"
            budget.spend(low, what)  # before the draw: a count too large for numpy is named too
            times = int(rng.integers(low, high + 1))
            budget.spend(times - low, what)
            for _ in range(times):
                kind, value = atom
                out.append(value if kind == "text" else value[int(rng.integers(len(value)))] if kind == "chars" else draw(value))
        return "".join(out)

    return draw(options)


def schema_instance(schema: Any, rng: np.random.Generator, depth: int = 0, budget: _Budget | None = None) -> Any:
    """A JSON value satisfying `schema` (the subset structured outputs use), drawn with `rng`;
    ValueError for a schema it cannot satisfy, SchemaTooLarge (a ValueError) for one whose instance
    takes more than `budget` (by default a request's `MAX_INSTANCE_SIZE`)."""
    budget = budget or _Budget()
    if depth > MAX_SCHEMA_DEPTH or not isinstance(schema, dict):
        raise ValueError("the schema is nested too deeply or is not an object")
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list):
        if not schema["enum"]:
            raise ValueError("an enum with no values cannot be satisfied")
        return schema["enum"][int(rng.integers(len(schema["enum"])))]
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list) and options:
        return schema_instance(options[int(rng.integers(len(options)))], rng, depth + 1, budget)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[int(rng.integers(len(kind)))] if kind else None
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties") or {}
        if not isinstance(properties, dict):
            raise ValueError("'properties' must be an object")
        budget.spend(len(properties), f"'properties' ({len(properties):,} of them)")
        return {name: schema_instance(sub, rng, depth + 1, budget) for name, sub in properties.items()}
    if kind == "array":
        low = int(schema.get("minItems", 0))
        high = int(schema.get("maxItems", low + 3))
        where = f" (nested {depth} deep)" if depth else ""
        budget.spend(low, f"'minItems' {low:,}{where}")  # before the draw: a count too large for numpy is named too
        count = int(rng.integers(low, max(low, high) + 1))
        budget.spend(count - max(low, 0), f"'maxItems' {high:,}{where}")
        try:
            return [schema_instance(schema.get("items", {"type": "string"}), rng, depth + 1, budget) for _ in range(count)]
        except SchemaTooLarge:
            if low < 2:
                raise
            raise SchemaTooLarge(f"'minItems' {low:,}{where}, with its items,") from None  # the outermost multiplier
    if kind in ("integer", "number"):
        low = schema.get("minimum", 0)
        high = schema.get("maximum", max(low, 0) + 100)
        if not (isinstance(low, (int, float)) and isinstance(high, (int, float))) or low > high:
            raise ValueError("a number's minimum must not exceed its maximum")
        if kind == "integer":
            return int(rng.integers(math.ceil(low), math.floor(high) + 1))
        number = float(low + (high - low) * rng.random())
        if not math.isfinite(number):  # a range such as -1e308 to 1e308 overflows: JSON has no Infinity
            raise ValueError(f"a number from {low!r} to {high!r} cannot be generated (the range overflows)")
        return number
    if kind == "boolean":
        return bool(rng.integers(2))
    if kind == "null":
        return None
    if isinstance(schema.get("pattern"), str):
        if len(schema["pattern"]) > 100_000:
            raise ValueError("a pattern longer than 100,000 characters")
        try:
            return regex_instance(schema["pattern"], rng, budget)
        except (IndexError, KeyError, re.error, RecursionError):
            raise ValueError("the pattern uses regex features this server cannot generate") from None
    low = int(schema.get("minLength", 1) or 1)
    high = int(schema.get("maxLength", 60))
    text = " ".join(_WORDS[int(i)] for i in rng.integers(len(_WORDS), size=int(rng.integers(1, 8))))
    budget.spend(max(low, len(text)), f"'minLength' {low:,}")  # before the doubling below grows to it
    while len(text) < low:
        text += " " + text
    return text[:max(high, 1)]


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


def client_attempt(value: str | None) -> int | None:
    """Which attempt of its call a request says it is (`X-Retry-Count`, as teamenvs' client sends it: 0, then 1, 2 ...
    for its retries); None where it does not say, or says something else than a whole number from 0 to 1,000."""
    if value is None or not value.strip().isdigit() or len(value.strip()) > 4:
        return None
    number = int(value)
    return number if number <= 1000 else None


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _State:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.attempts: dict[str, int] = {}
        self.lock = threading.Lock()
        self.requests = 0
        self.injected: Counter[str] = Counter()

    def count(self) -> None:
        with self.lock:
            self.requests += 1

    def attempt(self, key: str) -> int:
        with self.lock:
            n = self.attempts.get(key, 0)
            self.attempts[key] = n + 1
            return n

    def inject(self, fault: str) -> None:
        with self.lock:
            self.injected[fault] += 1


class _Reader(io.RawIOBase):
    """A connection's input: a request must arrive within `timeout` seconds of its first byte,
    and an idle connection is dropped after `timeout` seconds (a per-recv timeout alone lets a
    client that trickles a byte at a time hold a thread forever)."""

    def __init__(self, sock: socket.socket, timeout: float) -> None:
        self.sock, self.timeout = sock, timeout
        self.deadline: float | None = None  # set by a request's first byte
        self.timed_out = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        wait = self.timeout if self.deadline is None else self.deadline - time.monotonic()
        try:
            if wait <= 0:
                raise TimeoutError("the request did not arrive in time")
            self.sock.settimeout(wait)
            n = self.sock.recv_into(buffer)
        except TimeoutError:
            self.timed_out = True
            raise
        if n and self.deadline is None:
            self.deadline = time.monotonic() + self.timeout
        return n


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    default_request_version = "HTTP/1.0"  # so that errors about a garbled request line still carry a status line
    disable_nagle_algorithm = True  # no 40 ms delayed-ACK stall between headers and body on kept-alive connections
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def setup(self) -> None:
        self.timeout = self.server.read_timeout  # bounds writes to a client that does not read
        super().setup()
        self.rfile.close()
        self._reader = _Reader(self.connection, self.server.read_timeout)
        self.rfile = io.BufferedReader(self._reader)
        self._linger = False

    def handle_one_request(self) -> None:
        self._reader.deadline = None
        self._reader.timed_out = False
        self._answered = False
        self.command, self.requestline, self.request_version = "", "", self.default_request_version  # a 408 may precede them
        try:
            super().handle_one_request()  # swallows timeouts, closing the connection
            if self._reader.timed_out and self._reader.deadline is not None and not self._answered:
                self._error(408, f"the request did not arrive within {self.server.read_timeout:g} s", close=True)
        except OSError:  # the client went away (or stopped reading): nothing left to answer
            self.close_connection = True

    def parse_request(self) -> bool:
        """The standard library's, after skipping empty lines before the request line; a request line of
        blanks (or more than `LEADING_EMPTY_LINES` empty lines) gets a 400, not a dropped connection."""
        for _ in range(LEADING_EMPTY_LINES):
            if self.raw_requestline not in (b"\r\n", b"\n"):
                break
            self.raw_requestline = self.rfile.readline(65537)  # within the request's deadline (`_Reader`)
        if not self.raw_requestline:  # empty lines, then the client closed: nobody to answer
            self.close_connection = True
            return False
        if len(self.raw_requestline) > 65536:
            self.send_error(HTTPStatus.REQUEST_URI_TOO_LONG)
            return False
        if not self.raw_requestline.strip():
            self.send_error(HTTPStatus.BAD_REQUEST, "the request line is empty (expected a line such as "
                                                   "'POST /v1/chat/completions HTTP/1.1')")
            return False
        if not super().parse_request():
            return False
        if self.request_version == "HTTP/0.9":  # `GET /`, or `... HTTP/0.9`: no headers, so no JSON body could be framed
            self.send_error(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, "HTTP/0.9 is not served: send HTTP/1.1 "
                                                                  "(e.g. 'POST /v1/chat/completions HTTP/1.1')")
            return False
        return True

    def finish(self) -> None:
        try:
            super().finish()
            if self._linger:
                _drain(self.connection, min(1.0, self.server.read_timeout))
        except OSError:
            pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's errors (bad request line, headers too long, unknown method) as JSON."""
        self._error(code, _clip(message or HTTPStatus(code).phrase, 200), close=True)

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(body).encode()
        self._answered = True
        if self.request_version == "HTTP/0.9":
            # the standard library sends no status line or headers to HTTP/0.9 (and never starts the header buffer
            # this writes to): every answer here is HTTP/1.x, JSON with its length
            self.request_version = "HTTP/1.0"
        self.connection.settimeout(self.server.read_timeout)  # reads may have left a shorter one
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self._headers_buffer += (b"\r\n", data)  # `end_headers` and the body in one write, not two
        self.flush_headers()

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None, close: bool = False) -> None:
        if close:  # the rest of this connection's input is not a request to read: answer, then let it go
            self.close_connection = self._linger = True
            headers = {**(headers or {}), "Connection": "close"}
        self._send(status, error_body(status, message), headers)

    def _send_events(self, events: list[bytes]) -> None:
        """A 200 of server-sent events, each written as it would be generated: one HTTP chunk each
        (to an HTTP/1.0 client, a body that ends when the connection closes)."""
        self._answered = True
        self.connection.settimeout(self.server.read_timeout)
        chunked = self.request_version != "HTTP/1.0"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.close_connection = True
            self.send_header("Connection", "close")
        self.end_headers()
        for data in events:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    def do_GET(self) -> None:
        if self.headers.get("Content-Length", "0").strip() not in ("", "0") or "Transfer-Encoding" in self.headers:
            self.close_connection = self._linger = True  # a body this server does not read
        path = urllib.parse.urlsplit(self.path).path.rstrip("/")
        prefix = next((p for p in ("/v1/models/", "/models/") if path.startswith(p)), None)
        if path in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [model_object(m) for m in MODELS]})
        elif prefix is not None:
            self._model(urllib.parse.unquote(path[len(prefix):]))
        else:
            self._error(404, f"no such endpoint {_clip(self.path)}; this server has /v1/models, /v1/chat/completions, /v1/embeddings")

    def _model(self, model_id: str) -> None:
        """`GET /v1/models/{id}`: the model object for a model this server has (a fault suffix included)."""
        model, _, suffix = model_id.partition("+")
        try:
            known = model in MODELS and parse_faults(suffix) is not None
        except ValueError:
            known = False
        if known:
            self._send(200, model_object(model_id, parse_faults(suffix).get("ctx")))
        else:
            self._error(404, f"model {_clip(model_id)!r} not found; the built-in server has: {', '.join(MODELS)}")

    def do_POST(self) -> None:
        try:
            if "Transfer-Encoding" in self.headers:
                raise _Refused(411, "chunked bodies are not supported: send a Content-Length", close=True)
            length = body_length(self.headers.get_all("Content-Length") or [], self.server.max_body)
            data = self.rfile.read(length)
            if len(data) < length:
                raise _Refused(400, f"the body ended after {len(data)} of its {length} bytes", close=True)
            path = urllib.parse.urlsplit(self.path).path.rstrip("/")  # (a query string, e.g. Azure's api-version, is no part of it)
            if path in ("/v1/chat/completions", "/chat/completions"):
                self._chat(parse_body(data))
            elif path in ("/v1/embeddings", "/embeddings"):
                self._embeddings(parse_body(data))
            else:
                self._error(404, f"no such endpoint {_clip(self.path)}")
        except _Refused as refused:
            self._error(refused.status, refused.message, close=refused.close)
        except RecursionError:
            self._error(400, "the request is nested too deeply")
        except OSError:
            raise
        except Exception as exc:  # a bug here must still answer, not drop the connection
            self._error(500, f"the server failed on this request: {type(exc).__name__}: {_clip(str(exc))}", close=True)

    def _chat(self, body: Any) -> None:
        self.server.state.count()
        problem = chat_problem(body)
        if problem is not None:
            raise _Refused(400, problem)
        model_spec = body["model"]
        model, _, suffix = model_spec.partition("+")
        if model not in MODELS:
            self._error(404, f"model {_clip(model)!r} not found; the built-in server has: {', '.join(MODELS)}")
            return
        try:
            faults = parse_faults(suffix) | parse_faults(self.headers.get("X-Fault", ""))
            check_rates(faults)  # the suffix's and the header's together
        except ValueError as exc:
            raise _Refused(400, str(exc)) from None
        problem = schema_problem(body.get("response_format"))
        if problem is None:
            prompt = "\n".join(content_text(m.get("content")) or "" for m in body["messages"])
            problem = context_problem(body, _tokens(prompt), faults.get("ctx"))
        if problem is not None:
            raise _Refused(400, problem)
        key = hashlib.sha256(json.dumps([model_spec, body["messages"]], sort_keys=True).encode()).hexdigest()
        state = self.server.state
        attempt = client_attempt(self.headers.get(RETRY_COUNT_HEADER))
        if attempt is None:  # a client that does not say: the server counts this request's attempts itself
            attempt = state.attempt(key)
        if faults.get("latency"):
            time.sleep(faults["latency"] / 1000)
        if faults.get("hang"):
            time.sleep(faults["hang"])
        retry_after = {"Retry-After": f"{faults.get('retry_after', 0.05):g}"}
        for status in (429, 500, 503):
            if attempt < faults.get(str(status), 0):
                state.inject(str(status))
                self._error(status, f"injected fault: {status} on attempt {attempt + 1}", retry_after if status != 500 else None)
                return
        drawn = drawn_fault(faults, fault_draw(int(faults.get("seed", state.seed)), key, attempt))
        if drawn is not None:
            state.inject(drawn)
        if drawn in ("429", "500", "503"):
            self._error(int(drawn), f"injected fault: {drawn} (rate) on attempt {attempt + 1}", retry_after if drawn != "500" else None)
            return
        if drawn == "timeout":
            time.sleep(faults.get("timeout_after", 30.0))
            self._error(504, f"injected fault: timed out (rate) on attempt {attempt + 1}")
            return
        if faults.get("badjson") or drawn == "badjson":
            if body.get("stream"):
                self._send_events([sse("{this is not json"), sse("[DONE]")])
            else:
                self._send(200, None, raw=b"{this is not json")
            return
        fault = next((name for name in ("empty", "malformed") if faults.get(name) or drawn == name), None)
        self._answer(body, model, key, f"chatcmpl-{key[:12]}-{attempt}", fault)

    def _answer(self, body: dict[str, Any], model: str, key: str, completion_id: str, fault: str | None) -> None:
        """A completion of `n` choices, each cut at a stop string or the output limit, as one JSON body
        or (`stream`) as server-sent events ending with `data: [DONE]`."""
        texts = [(m["role"], content_text(m.get("content")) or "") for m in body["messages"]]
        prompt = "\n".join(text for _, text in texts)
        last_user = next((text for role, text in reversed(texts) if role == "user"), "")
        budget = _Budget()  # one for all the choices
        choices = [cut_reply(self._reply(body, model, last_user, prompt, fault, rng, budget), stop_strings(body), output_limit(body))
                   for rng in self._reply_rngs(key, body)]
        usage = {"prompt_tokens": _tokens(prompt), "completion_tokens": sum(_tokens(text) for text, _ in choices)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if body.get("stream"):
            include_usage = (body.get("stream_options") or {}).get("include_usage")
            chunks = stream_chunks(completion_id, body["model"], choices, usage if include_usage else None)
            self._send_events([sse(json.dumps(chunk)) for chunk in chunks] + [sse("[DONE]")])
            return
        self._send(200, {
            "id": completion_id,
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}
                        for i, (text, finish_reason) in enumerate(choices)],
            "usage": usage,
        })

    @staticmethod
    def _reply(body: dict[str, Any], model: str, last_user: str, prompt: str, fault: str | None, rng: np.random.Generator,
               budget: _Budget) -> str:
        """One choice's text, before it is cut; a schema instance takes from `budget`."""
        response_format = body.get("response_format")
        if fault == "empty":
            return ""
        if fault == "malformed":
            return "Hmm, that is an interesting situation. I would rather talk about the weather."
        if response_format is not None and response_format["type"] != "text":
            schema = response_schema(response_format)
            try:
                return json.dumps(schema_instance(schema, rng, budget=budget))
            except SchemaTooLarge as exc:
                raise _Refused(400, f"'response_format' schema is too large: {exc}") from None
            except (ValueError, TypeError, OverflowError) as exc:
                raise _Refused(400, f"'response_format' schema cannot be satisfied: {_clip(str(exc))}") from None
        if model == "echo":
            return last_user
        return random_valid_reply(last_user, prompt, rng)

    def _reply_rngs(self, key: str, body: dict[str, Any]) -> list[np.random.Generator]:
        """One generator per choice, seeded by the server seed, the request's identity (`key`), the
        request's `seed` when given and the choice's index. The first choice of a request without a
        `seed` uses the first two only, so that it gets the reply it got before `seed` and `n` were honoured."""
        extra = [] if body.get("seed") is None else [f"seed={body['seed']}"]
        rngs = []
        for index in range(body.get("n") or 1):
            parts = [str(self.server.state.seed), key, *extra, *([f"choice={index}"] if index else [])]
            digest = hashlib.sha256(":".join(parts).encode()).digest()
            rngs.append(np.random.default_rng(int.from_bytes(digest[:8], "little")))
        return rngs

    def _embeddings(self, body: Any) -> None:
        from agents.embedders import HashingEmbedder

        texts = embedding_inputs(body)
        if isinstance(texts, str):
            raise _Refused(400, texts)
        vectors = HashingEmbedder().embed(texts)
        tokens = sum(_tokens(t) for t in texts)
        self._send(200, {
            "object": "list",
            "model": str(body.get("model") or "hashing"),
            "data": [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]} for i, v in enumerate(vectors)],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })


def model_object(model_id: str, context_window: float | None = None) -> dict[str, Any]:
    """A model as `GET /v1/models` lists it (with vLLM's `max_model_len` when it has a context window)."""
    out: dict[str, Any] = {"id": model_id, "object": "model", "created": 0, "owned_by": "teamenvs"}
    if context_window:
        out["max_model_len"] = int(context_window)
    return out


def context_problem(body: dict[str, Any], prompt_tokens: int, window: float | None) -> str | None:
    """vLLM's refusal of a request longer than the model's context window (prompt plus output limit), or None."""
    if not window:
        return None
    completion = output_limit(body) or 0
    if prompt_tokens + completion <= window:
        return None
    return (f"This model's maximum context length is {int(window)} tokens. However, you requested "
            f"{prompt_tokens + completion} tokens ({prompt_tokens} in the messages, {completion} in the completion). "
            "Please reduce the length of the messages or completion.")


def error_body(status: int, message: str) -> dict[str, Any]:
    """An error in the shape OpenAI's API uses."""
    return {"error": {"message": message, "type": "teamenvs_local_server", "code": status}}


def _drain(sock: socket.socket, seconds: float) -> None:
    """Read and drop what the client still sends, for up to `seconds`, after our half of the
    connection is shut: closing with unread input would reset the connection, and the client
    could lose the error response it has not read yet."""
    sock.shutdown(socket.SHUT_WR)
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            if not sock.recv(65536):
                return
        except (TimeoutError, BlockingIOError):
            return


def _peer_closed(sock: socket.socket) -> bool:
    """Whether the client has closed its half of a non-blocking socket (what it sent is dropped)."""
    try:
        for _ in range(16):  # a client that keeps sending is not drained in one pass
            if not sock.recv(65536):
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True
    return False


def _busy_response(status: int, message: str, retry_after: float) -> bytes:
    """A complete HTTP response, for connections refused before any handler thread reads them."""
    body = json.dumps(error_body(status, message)).encode()
    head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nRetry-After: {retry_after:g}\r\nConnection: close\r\n\r\n")
    return head.encode() + body


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # many agents connect at once
    state: _State
    read_timeout = READ_TIMEOUT
    max_body = MAX_BODY

    def __init__(self, address: tuple[str, int], max_connections: int) -> None:
        # set before the base class binds: a failed bind calls `server_close`, which reads it
        self.refused: list[tuple[socket.socket, float]] = []  # answered 503, drained until the client closes
        self.max_connections = max_connections
        self.slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if self.slots.acquire(blocking=False):
            try:
                super().process_request(request, client_address)
            except BaseException:
                self.slots.release()
                raise
        else:
            self._refuse(request)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def _refuse(self, request: socket.socket) -> None:
        message = f"the server is busy: it serves at most {self.max_connections} connections at once; retry shortly"
        try:
            request.setblocking(False)
            request.send(_busy_response(503, message, 1.0))
            request.shutdown(socket.SHUT_WR)
        except OSError:
            request.close()
            return
        if len(self.refused) >= 4 * self.max_connections:  # no more sockets held than that
            self.refused.pop(0)[0].close()
        self.refused.append((request, time.monotonic() + 1.0))

    def service_actions(self) -> None:
        """Close each refused connection once its client has closed or a second has passed (see `_drain`)."""
        kept = []
        for sock, deadline in self.refused:
            if _peer_closed(sock) or time.monotonic() > deadline:
                sock.close()
            else:
                kept.append((sock, deadline))
        self.refused = kept

    def server_close(self) -> None:
        super().server_close()
        for sock, _ in self.refused:
            sock.close()
        self.refused = []


class LocalLLMServer:
    """The server on 127.0.0.1 in a background thread: `with LocalLLMServer() as server: server.url`.

    `read_timeout` (seconds) bounds how long a request may take to arrive and an idle
    connection is kept; `max_body` (bytes) the largest request body; `max_connections` the
    connections served at once (each has a thread), beyond which a connection gets 503.
    """

    def __init__(self, port: int = 0, seed: int = 0, host: str = "127.0.0.1", *, read_timeout: float = READ_TIMEOUT,
                 max_body: int = MAX_BODY, max_connections: int = MAX_CONNECTIONS) -> None:
        if not (read_timeout > 0 and max_body > 0 and max_connections >= 1):
            raise ValueError("read_timeout and max_body must be positive and max_connections at least 1")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port must be a whole number from 0 to 65535 (0: any free port), got {excerpt(port)}")
        try:
            self._server = _Server((host, port), max_connections)
        except OSError as exc:  # e.g. the port is taken
            raise OSError(exc.errno, f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
        self._server.state = _State(seed)
        self._server.read_timeout, self._server.max_body = float(read_timeout), int(max_body)
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

    @property
    def faults(self) -> dict[str, int]:
        """Faults injected so far, by kind ('429', '500', '503', 'timeout', 'badjson', 'malformed', 'empty')."""
        with self._server.state.lock:
            return dict(self._server.state.injected)

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
