"""Fuzz what users, models and endpoints hand the suite: actions, configs, suites, logs, HTTP, replies, the CLI.

    python -m benchmarks.fuzz [--seed 0] [--rounds 200] [--only actions,configs,suites,logs,http,replies,models,cli,isolation]

Each fuzzer draws `rounds` inputs from a seeded generator (the same seed, the same inputs) and checks
the standard every input must meet: a clear error of the documented kind (ConfigError, SuiteError,
LogError or another ValueError with a message, a JSON HTTP error, a refused action's error in the
agent's next observation) or a working result, in bounded time; never another exception, an empty or
huge message, or a raw terminal escape in a message. It prints each failure with the input that caused
it (cut short) and exits 1 if there was any.

- `actions`: per input, an env (a random preset half the time) in a random observation and action
  type, played for 150 steps with hostile actions (`teamenvs.testing.check_hostile_actions`: empty,
  100k characters, random unicode, JSON- and injection-looking text, non-strings, indices outside the
  mask or the catalogue, missing actions, actions for agents that do not exist, and mid-episode resets with seeds or
  options `reset` must refuse, which must leave the episode as it was); a quarter of the inputs play the
  single-agent Gymnasium view instead, its learner sending the hostile actions and resets. The env contract runs the
  same check with fixed seeds in every test run;
- `configs`: per env, random keys set to hostile values (huge, NaN, wrong types, long strings, lists,
  numpy scalars) and to in-range edge values (bounds, choices, presets combined), each env made,
  reset and played for 100 random valid steps;
- `suites`: the built-in suites with keys deleted, values replaced and lists repeated, parsed, and
  the first episodes' envs made;
- `logs`: logs of the smoke suite with lines replaced, dropped, repeated, cut or flipped (plain and
  gzip, the gzip stream damaged too), read, replayed in the terminal and written as an HTML viewer;
- `http`: valid chat requests with bytes flipped, inserted, dropped, headers broken and bodies
  replaced, sent over raw sockets; every answer must be JSON, and the server must still serve;
- `replies`: an endpoint that answers nonsense: chat completions with parts replaced by odd values
  (missing, wrong types, huge, control characters), odd status lines (429, 5xx, 204, 301, HTTP/2),
  spliced headers (a bad Retry-After or Content-Length, chunking) and flipped or cut bytes, read by
  the LLM client over both transports (the lean one and the `openai` package's, when installed),
  one retry: text or a clear `LLMError` within the timeouts, then a valid reply on the same client
  must be read;
- `models`: an LLM team (a random env and preset; JSON-constrained a third of the time, with memory,
  probes or the post-episode interview in some episodes) whose endpoint
  answers well-formed completions of hostile content (nothing, 100k characters, random unicode,
  terminal escapes, JSON- and injection-looking text, several ACTION lines, reasoning tags) with odd
  finish reasons and usage, for 12 steps: the episode ends with a complete log that reads back and
  replays in the terminal and as HTML with the model's text escaped;
- `cli`: the `teamenvs` command line (every command but `serve-llm`, which serves until stopped) with
  option values replaced, options of the command added and arguments dropped, run in this process in
  a scratch folder: an exit code the command line documents (0, 1, 2, 130), never a traceback or a
  raw terminal escape from an argument;
- `isolation`: not hostile input but a property every input must keep: twin episodes (a random env, preset half the
  time, seed and one to four observing agents) that differ only in the words of messages an observer is not sent and
  of teammates' refused actions give the observer the same everything (`teamenvs.testing.check_message_isolation`; the
  contract runs it with a fixed seed in every preset).

Run it with new seeds now and then: each seed is a new corpus. It found the bugs fixed in the thirteenth
session (a huge integer for a float config field, a string for a list field, empty lines before an HTTP
request line, victims that could never fit a map) and in the fourteenth (an endpoint's error message
reached LLMError with its terminal escapes acting; the openai transport quoted a garbled reply whole; a
base URL with a control character crashed the openai transport; `replay --delay 1e400` raised OverflowError) and in
the nineteenth (a lone surrogate, which has no UTF-8 form, in an action, a model's reply or a suite's name failed the
episode's log and the HTML replay; the generators had left surrogates out).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import gzip
import http.client
import io
import json
import math
import random
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np

MAX_MESSAGE = 2_000  # characters an error message may have
TIME_LIMIT = 30.0  # seconds one input may take


class Failure(NamedTuple):
    fuzzer: str
    what: str  # the input, cut short
    why: str


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _message_problem(message: str) -> str | None:
    """What is wrong with an error message shown to a user (None: nothing)."""
    if not message.strip():
        return "an empty error message"
    if len(message) > MAX_MESSAGE:
        return f"an error message of {len(message):,} characters"
    if "\x1b" in message:
        return "a raw terminal escape in the error message"
    return None


def _timed(run: Callable[[], Any]) -> tuple[Any, BaseException | None, float]:
    """`run()` in a daemon thread with `TIME_LIMIT`: (result, exception, seconds); seconds > TIME_LIMIT: it hung."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = run()
        except BaseException as exc:  # noqa: BLE001 - reported, not raised: the fuzzer goes on
            box["error"] = exc

    started = time.perf_counter()
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(TIME_LIMIT)
    return box.get("result"), box.get("error"), time.perf_counter() - started


def _check(fuzzer: str, what: Any, run: Callable[[], Any], refusals: tuple[type[BaseException], ...]) -> Failure | None:
    _, error, seconds = _timed(run)
    if seconds > TIME_LIMIT:
        return Failure(fuzzer, _short(what), f"no answer within {TIME_LIMIT:g} s")
    if error is None:
        return None
    if isinstance(error, refusals):
        problem = _message_problem(str(error))
        return Failure(fuzzer, _short(what), f"{problem}: {str(error)[:200]!r}") if problem else None
    return Failure(fuzzer, _short(what), f"{type(error).__name__}: {str(error)[:300]}")


# ---------------------------------------------------------------------- configs
HOSTILE_VALUES = (0, 1, -1, 2, 7, 100, 10**9, 10**400, -10**9, 0.5, 1.5, 1e-300, 1e300, float("nan"), float("inf"), -0.0,
                  "", "x", "10", " 5 ", "nan", "[1]", '"a"', "[" * 10_000, "a" * 10_000, "\x1b[2J", "x\ud800", None, True, False,
                  [], [1], ["medic"] * 50, {}, {"a": 1}, (), np.int64(5), np.float32(0.5), b"5")


def _edge_value(rng: random.Random, f: dataclasses.Field, default: Any) -> Any:
    """An in-range value of a config field: a bound, a bound's neighbour, a value between, or a choice."""
    meta = f.metadata.get("teamenvs") or {}
    if meta.get("choices"):
        return rng.choice(meta["choices"])
    if isinstance(default, bool):
        return rng.random() < 0.5
    if isinstance(default, tuple) and default and all(isinstance(x, str) for x in default):
        return tuple(rng.choice(default) for _ in range(rng.randint(1, 6)))
    low, high = meta.get("low"), meta.get("high")
    low = low if isinstance(low, (int, float)) else None
    high = min(high, 300) if isinstance(high, (int, float)) else None  # a playable size, not a million steps
    options = [default] + [v for v in (low, high) if v is not None]
    if low is not None and high is not None and high >= low:
        options.append(rng.randint(int(low), int(high)) if isinstance(default, int) else rng.uniform(low, high))
    return rng.choice(options)


def _play(env_id: str, config: dict[str, Any], seed: int) -> None:
    import teamenvs

    env = teamenvs.make(env_id, **config)
    observations, infos = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(100):
        if not env.agents:
            break
        actions = {a: infos[a]["valid_actions"][int(rng.integers(len(infos[a]["valid_actions"])))].sample(rng)
                   for a in env.agents if infos[a]["needs_action"] and infos[a]["valid_actions"]}
        observations, rewards, _, _, infos = env.step(actions)
        for agent, observation in observations.items():
            if not env.observation_space(agent).contains(observation):
                raise AssertionError(f"{agent}'s observation lies outside its space")


def fuzz_configs(seed: int, rounds: int) -> list[Failure]:
    import teamenvs
    from teamenvs.core.config import ConfigError

    rng = random.Random(seed)
    failures = []
    for k in range(rounds):
        env_id = rng.choice(teamenvs.list_envs())
        cls = teamenvs.spec(env_id).load_env_class()
        default = cls.config_class()
        fields = [f for f in dataclasses.fields(default) if f.init]
        hostile = rng.random() < 0.5
        chosen = rng.sample(fields, rng.randint(1, min(4, len(fields)))) if hostile else [f for f in fields if rng.random() < 0.4]
        config = {f.name: rng.choice(HOSTILE_VALUES) if hostile else _edge_value(rng, f, getattr(default, f.name)) for f in chosen}
        if cls.presets and rng.random() < 0.25:
            config["preset"] = "+".join(rng.sample(list(cls.presets), rng.randint(1, min(2, len(cls.presets)))))
        failure = _check("configs", (env_id, config), lambda: _play(env_id, config, k), (ConfigError,))
        if failure:
            failures.append(failure)
    return failures


# ---------------------------------------------------------------------- actions
ACTION_STEPS = 150  # steps of hostile play per input


def _single_agent_play(env_id: str, kw: dict[str, Any], seed: int) -> None:
    """Hostile actions for the learner of the single-agent Gymnasium view (scripted teammates)."""
    from teamenvs.testing import HOSTILE_RESETS, check_refused_reset, hostile_action
    from teamenvs.wrappers.single_agent import SingleAgentEnv

    env = SingleAgentEnv(env_id, **kw)
    rng = np.random.default_rng(seed)
    observation, info = env.reset(seed=seed)
    for step in range(ACTION_STEPS):
        if rng.random() < 0.03:  # a reset it must refuse, before anything of the view or its episode changes
            check_refused_reset(env_id, env, HOSTILE_RESETS[int(rng.integers(len(HOSTILE_RESETS)))], step,
                                state=lambda: (env.team_env.step_count, list(env.team_env.agents), env._teammates))
        action = hostile_action(rng, env.team_env, env.agent, info)
        observation, reward, terminated, truncated, info = env.step(action)
        if not env.observation_space.contains(observation):
            raise AssertionError(f"the learner's observation at step {step} lies outside its space (action {_short(action)})")
        if not isinstance(reward, float) or not math.isfinite(reward):
            raise AssertionError(f"the learner's reward at step {step} is {reward!r} (action {_short(action)})")
        if terminated or truncated:
            observation, info = env.reset(seed=int(rng.integers(2**31)))


def fuzz_actions(seed: int, rounds: int) -> list[Failure]:
    import teamenvs
    from teamenvs.testing import check_hostile_actions

    rng = random.Random(seed)
    failures = []
    for k in range(rounds):
        env_id = rng.choice(teamenvs.list_envs())
        presets = list(teamenvs.spec(env_id).load_env_class().presets)
        kw: dict[str, Any] = {"obs_type": rng.choice(("text", "vector", "both")), "action_type": rng.choice(("text", "discrete"))}
        if presets and rng.random() < 0.5:
            kw["preset"] = rng.choice(presets)
        if rng.random() < 0.25:
            kw["skip_idle"] = rng.random() < 0.5
            failure = _check("actions", ("single-agent view", env_id, kw), lambda: _single_agent_play(env_id, kw, k), ())
        else:
            failure = _check("actions", (env_id, kw), lambda: check_hostile_actions(env_id, seed=k, steps=ACTION_STEPS, **kw), ())
        if failure:
            failures.append(failure)
    return failures


ISOLATION_STEPS = 80  # steps of each pair of twin episodes


def fuzz_isolation(seed: int, rounds: int) -> list[Failure]:
    """Twin episodes that differ only in the words of messages an observer is not sent (and of teammates' refused
    actions), `teamenvs.testing.check_message_isolation`: per input an env, a random preset half the time, a seed
    and one to four observers. A failure is anything the observer received that differed between the twins."""
    import teamenvs
    from teamenvs.testing import check_message_isolation

    rng = random.Random(seed)
    failures = []
    for k in range(rounds):
        env_id = rng.choice(teamenvs.list_envs())
        presets = list(teamenvs.spec(env_id).load_env_class().presets)
        kw: dict[str, Any] = {"preset": rng.choice(presets)} if presets and rng.random() < 0.5 else {}
        observers, episode = rng.randint(1, 4), rng.randrange(2**31)
        failure = _check("isolation", (env_id, kw, episode, observers),
                         lambda: check_message_isolation(env_id, seed=episode, steps=ISOLATION_STEPS, observers=observers, **kw), ())
        if failure:
            failures.append(failure)
    return failures


# ---------------------------------------------------------------------- suites
def _mutated(rng: random.Random, value: Any, pool: tuple[Any, ...]) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            p = rng.random()
            if p < 0.08:
                continue  # dropped
            out[key] = rng.choice(pool) if p < 0.18 else _mutated(rng, item, pool) if p < 0.6 else item
        if rng.random() < 0.05:
            out[rng.choice(("extra", "seeds", "name", "groups", "title", "max_steps", "policies"))] = rng.choice(pool)
        return out
    if isinstance(value, list):
        out_list = [_mutated(rng, item, pool) if rng.random() < 0.5 else item for item in value]
        if out_list and rng.random() < 0.1:
            out_list = out_list * rng.randint(2, 50)
        return out_list
    return rng.choice(pool) if rng.random() < 0.2 else value


SUITE_VALUES = (None, 0, -1, 10**400, 1.5, float("nan"), True, "", "x" * 5000, "\x1b[2J", "x\ud800y", [], [None], {}, {"a": 1},
                "day_trader_v0", "scripted", "llm", ["baseline"], 10**6)


def fuzz_suites(seed: int, rounds: int) -> list[Failure]:
    from benchmarks.suite import BUILTIN, SuiteError, _builtin_path, parse_suite
    from teamenvs.core.config import ConfigError

    rng = random.Random(seed)
    bases = [json.loads(_builtin_path(name).read_text(encoding="utf-8")) for name in BUILTIN]
    failures = []
    for _ in range(rounds):
        raw = _mutated(rng, copy.deepcopy(rng.choice(bases)), SUITE_VALUES)

        def run(raw: Any = raw) -> None:
            suite = parse_suite(json.loads(json.dumps(raw)), "fuzz.json")  # as a file would give it
            for episode in suite.episodes()[:3]:
                episode.make_env()

        failure = _check("suites", raw, run, (SuiteError, ConfigError))
        if failure:
            failures.append(failure)
    return failures


# ---------------------------------------------------------------------- logs
LOG_LINES = (b"null", b"1e400", b"NaN", b'"x"', b"[]", b"{}", b'{"type": "step"}', b'{"type": "header", "env_id": 5}',
             b"\xff\xfe", b"\x1b[2J", b'"' + b"a" * 100_000 + b'"', b"[" * 5000,
             b'{"type": "step", "step": 1, "agents": {"a": {"observation": "</script><script>alert(1)</script>"}}}')


def _damaged(rng: random.Random, data: bytes) -> bytes:
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 4)):
        i, op = rng.randrange(len(lines)), rng.randrange(5)
        if op == 0:
            lines[i] = rng.choice(LOG_LINES)
        elif op == 1:
            del lines[i]
        elif op == 2:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif op == 3:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        elif lines[i]:
            flipped = bytearray(lines[i])
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
            lines[i] = bytes(flipped)
    return b"\n".join(lines)


def _read_and_replay(path: Path, folder: Path) -> None:
    from teamenvs import replay
    from teamenvs.core.recorder import read_log

    try:
        read_log(path)
    except ValueError:
        pass  # refused: the replay below must refuse it too, with its own message
    out = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()):
        replay.play(path, stream=out, color=True)
    if "\x1b[2J" in out.getvalue() or "\x1b]0;" in out.getvalue():  # (the replay's own colours are escapes too)
        raise AssertionError("a raw terminal escape from the log reached the terminal replay")
    html = replay.write_html(path, folder / "viewer.html").read_text(encoding="utf-8")
    if "<script>alert(1)" in html:
        raise AssertionError("text from the log reached the HTML viewer unescaped")


def fuzz_logs(seed: int, rounds: int) -> list[Failure]:
    from benchmarks.bench import run_bench
    from benchmarks.suite import load_suite

    rng = random.Random(seed)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        run_bench(load_suite("smoke"), folder / "smoke", workers=1, progress=False, report=False)
        texts = [gzip.decompress(p.read_bytes()) for p in sorted((folder / "smoke" / "logs").glob("*.jsonl.gz"))]
        for k in range(rounds):
            data = _damaged(rng, rng.choice(texts))
            packed = rng.random() < 0.5
            blob = gzip.compress(data) if packed else data
            if packed and rng.random() < 0.2:  # the gzip stream itself damaged
                broken = bytearray(blob)
                broken[rng.randrange(len(broken))] ^= 0xFF
                blob = bytes(broken[: len(broken) - rng.randrange(20)])
            path = folder / f"episode{k}.jsonl{'.gz' if packed else ''}"
            path.write_bytes(blob)
            failure = _check("logs", blob[:200], lambda: _read_and_replay(path, folder), (ValueError,))
            if failure:
                failures.append(failure._replace(what=f"{path.name}: {failure.what}"))
            path.unlink()
    return failures


# ---------------------------------------------------------------------- HTTP
_CHAT = json.dumps({"model": "random-valid", "messages": [
    {"role": "user", "content": "Valid actions now:\n- wait: do nothing (e.g. wait)\nEnd with ACTION: <command>"}]}).encode()
_SPLICES = (b"\r\n", b"\r\n\r\n", b"\x00", b"%", b"{", b'"', b"\xff\xfe", b"Content-Length: 99999999999\r\n",
            b"Transfer-Encoding: chunked\r\n", b"X-Fault: latency=1e300\r\n", b"HTTP/0.9", b"HTTP/1.0")


_METHODS = (b"POST", b"GET", b"HEAD", b"PUT", b"OPTIONS", b"BREW", b"")
_PATHS = (b"/v1/chat/completions", b"/v1/models", b"/v1/embeddings", b"/", b"*", b"//v1//models", b"/v1/models?x=%ff",
          b"/%ff%fe", b"/v1/chat/completions/../models", b"http://127.0.0.1/v1/models", b"")
_VERSIONS = (b"HTTP/1.1", b"HTTP/1.0", b"HTTP/0.9", b"HTTP/2.0", b"HTTP/1.1 extra", b"", b"HTTP/01.1", b"http/1.1")


def _request(body: bytes = _CHAT) -> bytes:
    return (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)) + body


def _mutated_bytes(rng: random.Random, data: bytes, splices: tuple[bytes, ...] = _SPLICES) -> bytes:
    """`data` with bytes flipped, inserted and dropped, one of `splices` inserted, or cut short (1-6 times)."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        i, op = rng.randrange(len(b) + 1), rng.randrange(5)
        if op == 0 and b:
            b[min(i, len(b) - 1)] = rng.randrange(256)
        elif op == 1:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 20)))
        elif op == 2:
            del b[i:i + rng.randint(1, 30)]
        elif op == 3:
            b[i:i] = rng.choice(splices)
        else:
            b = b[:i]
    return bytes(b)


def _exchange(port: int, data: bytes) -> tuple[int, Any]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, json.loads(response.read())


def fuzz_http(seed: int, rounds: int) -> list[Failure]:
    from agents.llm.server import LocalLLMServer

    rng = random.Random(seed)
    failures = []
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), LocalLLMServer(read_timeout=0.3, max_body=1 << 20, max_connections=16) as server:
        for _ in range(rounds):
            body = json.dumps(rng.choice([{"model": "random-valid"}, {"messages": "x"}, {"model": 5, "messages": [{"role": 1}]},
                                          {"model": "echo", "messages": [{"role": "user", "content": "\x00" * 1000}]}, []])).encode()
            data = _request(body if rng.random() < 0.3 else _CHAT)
            if rng.random() < 0.2:  # another method, path or protocol version in the request line
                data = (data.replace(b"POST", rng.choice(_METHODS), 1).replace(b"HTTP/1.1", rng.choice(_VERSIONS), 1)
                        .replace(b"/v1/chat/completions", rng.choice(_PATHS), 1))
            data = _mutated_bytes(rng, data) if rng.random() < 0.8 else data
            started = time.monotonic()
            try:
                status, answer = _exchange(server.port, data)
            except (OSError, http.client.HTTPException, ValueError) as exc:
                if b"HTTP/1." in data[:80]:  # it reads as an HTTP request: it must be answered
                    failures.append(Failure("http", _short(data[:160]), f"no JSON answer: {exc!r}"[:300]))
                continue
            error = answer.get("error") if isinstance(answer, dict) else None
            if status >= 400 and not (isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]):
                failures.append(Failure("http", _short(data[:160]), f"a {status} without an OpenAI-style error: {_short(answer)}"))
            elif time.monotonic() - started > 5:
                failures.append(Failure("http", _short(data[:160]), f"answered after {time.monotonic() - started:.1f} s"))
        status, _ = _exchange(server.port, _request())
        if status != 200:
            failures.append(Failure("http", "a valid request after the fuzz", f"answered {status}"))
    if errors.getvalue():
        failures.append(Failure("http", "the server's stderr", errors.getvalue()[:300]))
    return failures


# ---------------------------------------------------------------------- replies
REPLY_TIMEOUT = 0.3  # seconds the client waits for one reply in the replies fuzzer
_COMPLETION = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
               "choices": [{"index": 0, "message": {"role": "assistant", "content": "ACTION: wait"}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}
_ODD_VALUES = (None, 0, -1, 10**30, 1.5, float("nan"), "", "x" * 3000, "\x1b[2J\x07", [], [None], {}, {"a": {"b": []}}, True)
_REPLY_SPLICES = _SPLICES + (b"HTTP/1.1 100 Continue\r\n\r\n", b"Retry-After: 1e400\r\n", b"Retry-After: -5\r\n",
                             b"Connection: close\r\n", b"Content-Length: -1\r\n", b"Content-Type: text/html\r\n",
                             b"<html><title>\x1b[31mdown</title></html>", b"0\r\n\r\n")
_STATUS_LINES = (b"HTTP/1.1 200 OK", b"HTTP/1.1 429 Too Many Requests", b"HTTP/1.1 500 Internal Server Error",
                 b"HTTP/1.1 503 Busy", b"HTTP/1.1 400 Bad Request", b"HTTP/1.1 301 Moved", b"HTTP/1.1 204 No Content",
                 b"HTTP/1.0 200 OK", b"HTTP/2 200", b"HTTP/1.1 999 Odd", b"HTTP/1.1 200")


def _child(node: Any, key: str | int) -> Any:
    """node[key] where it exists (a dict's key, a list's index), else None."""
    if isinstance(node, dict):
        return node.get(key)
    if isinstance(node, list) and isinstance(key, int) and key < len(node):
        return node[key]
    return None


def _odd_completion(rng: random.Random) -> Any:
    """A chat completion with random parts replaced by odd values (or an error object, or not an object)."""
    completion = copy.deepcopy(_COMPLETION)
    paths = (("choices",), ("choices", 0), ("choices", 0, "message"), ("choices", 0, "message", "content"),
             ("choices", 0, "message", "role"), ("choices", 0, "finish_reason"), ("usage",), ("usage", "prompt_tokens"),
             ("usage", "completion_tokens"), ("error",), ("model",))
    for _ in range(rng.randint(1, 3)):
        *parents, last = rng.choice(paths)
        node: Any = completion
        for key in parents:  # (an earlier replacement may have cut the path short)
            node = _child(node, key)
        if _child(node, last) is not None or isinstance(node, dict):
            node[last] = copy.deepcopy(rng.choice(_ODD_VALUES))
    return completion if rng.random() < 0.9 else rng.choice(_ODD_VALUES)


def _hostile_reply(rng: random.Random) -> bytes:
    """One reply to a chat request: a completion, odd in its JSON, its status, its headers or its bytes."""
    try:
        body = json.dumps(_odd_completion(rng)).encode() if rng.random() < 0.8 else _mutated_bytes(rng, json.dumps(_COMPLETION).encode())
    except ValueError:
        body = b"{}"
    data = _reply_bytes(body, rng.choice(_STATUS_LINES) if rng.random() < 0.3 else _STATUS_LINES[0])
    return _mutated_bytes(rng, data, _REPLY_SPLICES) if rng.random() < 0.5 else data


def _chat_against(replies: list[bytes], close: bool, transport: str) -> None:
    """Two chats of one client against a server that sends `replies` (then valid ones): the first must give text or a
    clear `LLMError` in bounded time, and the second, a valid reply on the same client, must be read."""
    import asyncio

    from agents.llm.client import LLMClient, LLMError

    valid = _reply_bytes(json.dumps(_COMPLETION).encode())

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
                await reader.readexactly(length)
                writer.write(replies.pop(0) if replies else valid)
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, asyncio.CancelledError):
            pass  # the client went away, or the input is over
        finally:
            writer.close()

    async def run() -> None:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        llm = LLMClient("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="x", cache=False, transport=transport,
                        timeout=REPLY_TIMEOUT, max_retries=1, backoff_base=0.001, backoff_max=0.05)
        try:
            started = time.monotonic()
            try:
                first = await llm.chat([{"role": "user", "content": "hello"}])
            except LLMError as exc:
                problem = _message_problem(str(exc))
                if problem:
                    raise AssertionError(f"{problem}: {str(exc)[:200]!r}") from None
            else:
                if not isinstance(first.text, str):
                    raise AssertionError(f"a reply read as {type(first.text).__name__}, not text")
            if time.monotonic() - started > 4 * REPLY_TIMEOUT + 1:
                raise AssertionError(f"the chat took {time.monotonic() - started:.1f} s with a {REPLY_TIMEOUT} s timeout and 1 retry")
            replies.clear()
            second = await llm.chat([{"role": "user", "content": "again"}])
            if second.text != "ACTION: wait":
                raise AssertionError(f"a valid reply after the hostile one read as {second.text!r}")
        finally:
            await llm.aclose()
            server.close()

    asyncio.run(run())


def _reply_bytes(body: bytes, status: bytes = _STATUS_LINES[0]) -> bytes:
    return status + b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body


def fuzz_replies(seed: int, rounds: int) -> list[Failure]:
    """Replies of an OpenAI-compatible endpoint that answers nonsense, read by the LLM client's two transports."""
    import importlib.util

    # the reference transport is fuzzed when the openai package is installed
    transports = ("http", "openai") if importlib.util.find_spec("openai") is not None else ("http",)
    rng = random.Random(seed)
    failures = []
    for _ in range(rounds):
        replies = [_hostile_reply(rng) for _ in range(rng.randint(1, 2))]
        close, transport = rng.random() < 0.5, rng.choice(transports)
        failure = _check("replies", (transport, replies[0][:160]), lambda: _chat_against(list(replies), close, transport), ())
        if failure:
            failures.append(failure)
    return failures


# ---------------------------------------------------------------------- models
MODEL_STEPS = 12  # env steps of each episode an LLM team plays in the models fuzzer


def _hostile_content(rng: random.Random, words: list[str]) -> str:
    """What a confused or adversarial model might answer: nothing, prose, 100k characters, random unicode with control
    characters and terminal escapes, JSON-looking and prompt-injection-looking text, command fragments, reasoning
    tags, several ACTION lines, or a plausible action."""
    from teamenvs.testing import FRAGMENTS, INJECTIONS

    word = rng.choice(words)
    kind = rng.randrange(10)
    if kind == 0:
        return rng.choice(["", " ", "\n\n", "ACTION:", "ACTION: ", "I cannot help with that."])
    if kind == 1:
        return ("thinking " * 12_000)[: rng.choice((5_000, 100_000))] + rng.choice(["", f"\nACTION: {word}"])
    if kind == 2:  # lone surrogates among them: the endpoint sends them as JSON escapes ("\ud800"), as a real one can
        return "".join(chr(rng.randrange(0x2FFFF)) for _ in range(rng.randint(1, 200)))
    if kind == 3:
        text = json.dumps({"action": rng.choice([word, f"{word} {rng.choice(words)}", 7, None, [word]]),
                           "rationale": rng.choice(["\x1b[2J", "<script>alert(1)</script>", "x" * 3000, None])})
        return text[: rng.randint(1, len(text))]
    if kind == 4:
        return rng.choice(INJECTIONS) + f"\nACTION: {word}"
    if kind == 5:
        return " ".join(rng.choice(list(FRAGMENTS) + words) for _ in range(rng.randint(1, 12)))
    if kind == 6:
        return f"<think>{'ACTION: wait ' * rng.randint(1, 50)}</think>\nACTION: {word} \x1b]0;pwned\x07"
    if kind == 7:
        return "\n".join(f"ACTION: {rng.choice(words)} {rng.randint(-10**6, 10**6)}" for _ in range(rng.randint(2, 6)))
    return f"Rationale: \x1b[31mred\x1b[0m. ACTION: {word} {rng.choice(words)} {rng.randint(0, 100)}"


def _hostile_model_server(seed: int, words: list[str]) -> Any:
    """An OpenAI-compatible endpoint (a background thread on 127.0.0.1) answering every chat with hostile content, in
    well-formed completions with odd finish reasons and usage."""
    import http.server

    rng, lock = random.Random(seed), threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # the head and the body are two writes: no 40 ms wait for a delayed ACK between them

        def do_POST(self) -> None:  # noqa: N802 - the standard library's name
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                content = _hostile_content(rng, words)
                finish = rng.choice(["stop", "stop", "length", None, "content_filter"])
                usage = rng.choice([{"prompt_tokens": 10, "completion_tokens": 5}, {}, {"prompt_tokens": 0, "completion_tokens": 10**9}])
            body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m", "usage": usage,
                               "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return server


def _llm_team_episode(env_id: str, kw: dict[str, Any], seed: int, folder: Path) -> None:
    """An LLM team against the hostile endpoint for `MODEL_STEPS` steps, logged; the log must be complete, read back
    and replay (terminal and HTML) without a raw escape or unescaped HTML from the model reaching them."""
    import teamenvs
    from agents.llm.policy import make_llm_policies
    from agents.loop import run_episodes
    from agents.probes import Prober
    from teamenvs.core.recorder import read_log

    env = teamenvs.make(env_id, **kw)
    words = [w for c in env.unwrapped.commands for w in c.name.split()] + list(env.possible_agents)
    server = _hostile_model_server(seed, words)
    try:
        # the parts that read model text beside the actions, each in some of the episodes: constrained replies,
        # memories retrieved into prompts, probe questions and the post-episode interview
        policies = make_llm_policies(env, "m", f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="x",
                                     cache=False, timeout=10, max_retries=0, memory=seed % 4 == 1,
                                     **({"constrain": "json"} if seed % 3 == 0 else {}))
        (result,) = run_episodes([{"env": env, "policies": policies, "seed": seed, "log_dir": folder, "log_name": f"models{seed}",
                                   "max_steps": MODEL_STEPS, "compress": seed % 2 == 0,
                                   "probes": Prober(every=4) if seed % 5 == 2 else None, "interview": seed % 5 == 3}])
    finally:
        server.shutdown()
        server.server_close()
    records = read_log(result.log_path) if result.log_path is not None else []
    if not records or records[-1].get("type") != "end":
        raise AssertionError(f"the episode's log has no end line: {result.log_path}")
    _read_and_replay(result.log_path, folder)
    result.log_path.unlink()


def fuzz_models(seed: int, rounds: int) -> list[Failure]:
    """LLM teams whose model answers nonsense: every env (a random preset half the time), one episode each."""
    import teamenvs

    rng = random.Random(seed)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(rounds):
            env_id = rng.choice(teamenvs.list_envs())
            presets = list(teamenvs.spec(env_id).load_env_class().presets)
            kw = {"preset": rng.choice(presets)} if presets and rng.random() < 0.5 else {}
            episode_seed = seed * 100_003 + k
            failure = _check("models", (env_id, kw, episode_seed),
                             lambda: _llm_team_episode(env_id, kw, episode_seed, Path(tmp)), ())
            if failure:
                failures.append(failure)
    return failures


# ---------------------------------------------------------------------- command line
CLI_CORPUS = (  # argument lists the mutations start from; {tmp} is a scratch folder, {log} a short episode log in it
    ["list"], ["info", "day_trader_v0"], ["info", "search_rescue_v0"],
    ["run", "day_trader_v0", "--episodes", "1", "--max-steps", "3", "--log-dir", "{tmp}/runs"],
    ["run", "commons_v0", "--policy", "greedy", "--max-steps", "3", "--set", "n_agents=3", "--log-dir", "{tmp}/runs"],
    ["run", "search_rescue_v0", "--preset", "easy", "--policy", "random", "--max-steps", "2", "--log-dir", "{tmp}/runs"],
    ["run", "map_task_v0", "--policy", "llm", "--model", "random-valid", "--max-steps", "2", "--log-dir", "{tmp}/runs"],
    ["report", "{tmp}/runs", "--plots", "none"], ["replay", "{log}", "--stop", "2"], ["replay", "{log}", "--html", "{tmp}/v.html"],
    ["bench", "--suite", "nope", "--out", "{tmp}/b"], ["bench", "--suite", "{tmp}/suite.json", "--out", "{tmp}/b", "--quiet", "--plots", "none"],
    # (building the engine takes minutes: the fuzzer asks for its status, and a mutation that drops --status is a usage error)
    ["compile", "--status", "--dir", "{tmp}/compiled"], ["compile", "--status", "--only", "teamenvs.core", "--dir", "{tmp}"],
)
CLI_VALUES = ("", "-1", "0", "2", "1.5", "1e400", "nan", "inf", "abc", "9" * 30, "x" * 5000, "\x1b[2J", "a=b=c", "=5",
              "n_agents", "n_agents=1e400", "rounds=-3", "team=[1]", "businesses='5'", "nope", "easy+nope", "scripted,random",
              "llm", "day_trader_v0", "/etc/passwd", "/proc/nope/x", "{tmp}", "{log}", "{tmp}/suite.json", "png,jpg",
              "http://127.0.0.1:1/v1", "0.1,nan", "auto")
CLI_CODES = (0, 1, 2, 130)  # the exit codes the command line documents (argparse's usage errors are 2)


def _cli_options() -> dict[str, tuple[str, ...]]:
    """Each command's long options, read from the parser (argparse keeps them in its private tables), and two unknown ones."""
    from teamenvs.cli import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    return {name: tuple(o for o in sub._option_string_actions if o.startswith("--") and o != "--help") + ("--nope", "-x")
            for name, sub in commands.items()}


def _cli_setup(folder: Path) -> dict[str, str]:
    """A scratch folder with a short episode log and a small suite, for the command-line corpus (made again before each
    input: an earlier one may have written over them)."""
    from teamenvs.cli import main

    shutil.rmtree(folder / "runs", ignore_errors=True)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(["run", "day_trader_v0", "--episodes", "1", "--max-steps", "3", "--log-dir", str(folder / "runs")])
    (folder / "suite.json").unlink(missing_ok=True)
    (folder / "suite.json").write_text(json.dumps({"name": "tiny", "seeds": 2, "groups": [
        {"env": "commons_v0", "policies": ["greedy"], "conditions": ["baseline"], "max_steps": 3}]}), encoding="utf-8")
    return {"{tmp}": str(folder), "{log}": str(next((folder / "runs").glob("*.jsonl*")))}


def _run_cli(argv: list[str]) -> None:
    """`teamenvs <argv>` in this process: an exit code the command line documents, no traceback, no raw escape."""
    from teamenvs.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
            code = exc.code if isinstance(exc.code, int) else 2
    text = out.getvalue() + err.getvalue()
    if code not in CLI_CODES:
        raise AssertionError(f"exit code {code!r}: {err.getvalue()[-300:]!r}")
    if "Traceback" in text:
        raise AssertionError(f"a traceback: {text[-400:]!r}")
    if "\x1b[2J" in text:
        raise AssertionError("a raw terminal escape from an argument reached the output")
    if len(err.getvalue()) > 20 * MAX_MESSAGE:
        raise AssertionError(f"{len(err.getvalue()):,} characters on stderr")


def _mutated_argv(rng: random.Random, argv: list[str], options: dict[str, tuple[str, ...]]) -> list[str]:
    """Mostly an option's value replaced or one of the command's options added, so that most inputs get past argparse
    to the command."""
    argv = list(argv)
    own = options.get(argv[0], ("--nope",))
    for _ in range(rng.randint(1, 2)):
        values = [i for i in range(2, len(argv)) if argv[i - 1].startswith("--") and not argv[i].startswith("--")]
        roll = rng.random()
        if roll < 0.5 and values:
            argv[rng.choice(values)] = rng.choice(CLI_VALUES)
        elif roll < 0.75:
            argv += [rng.choice(own)] + ([rng.choice(CLI_VALUES)] if rng.random() < 0.8 else [])
        elif roll < 0.85 and len(argv) > 1:
            argv[1] = rng.choice(CLI_VALUES)
        elif roll < 0.95 and values:
            k = rng.choice(values)
            del argv[k - 1:k + 1]
        else:
            argv.insert(rng.randrange(1, len(argv) + 1), rng.choice(CLI_VALUES))
    return argv


def fuzz_cli(seed: int, rounds: int) -> list[Failure]:
    """The `teamenvs` command line with arguments replaced, inserted and dropped (not `serve-llm`, which serves until
    stopped), run in this process in a scratch folder."""
    import os

    rng = random.Random(seed)
    failures = []
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # a command that writes to its default folder (runs/) writes here
        try:
            options = _cli_options()
            for _ in range(rounds):
                names = _cli_setup(Path(tmp))
                argv = _mutated_argv(rng, rng.choice(CLI_CORPUS), options)
                for key, value in names.items():
                    argv = [a.replace(key, value) for a in argv]
                failure = _check("cli", ["teamenvs", *argv], lambda argv=argv: _run_cli(argv), ())
                if failure:
                    failures.append(failure)
        finally:
            os.chdir(here)
    return failures


FUZZERS: dict[str, Callable[[int, int], list[Failure]]] = {
    "actions": fuzz_actions, "configs": fuzz_configs, "suites": fuzz_suites, "logs": fuzz_logs, "http": fuzz_http,
    "replies": fuzz_replies, "models": fuzz_models, "cli": fuzz_cli, "isolation": fuzz_isolation}


def main(argv: list[str] | None = None) -> int:
    from teamenvs.cli import COUNT, SEED

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=SEED, default=0, help="seed of the inputs (each seed is a new corpus)")
    parser.add_argument("--rounds", type=COUNT, default=200, help="inputs per fuzzer")
    parser.add_argument("--only", default=",".join(FUZZERS), help=f"comma-separated fuzzers (of {', '.join(FUZZERS)})")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in FUZZERS]
    if unknown:
        parser.error(f"unknown fuzzer(s) {', '.join(map(repr, unknown))}")
    failed = 0
    for name in names:
        started = time.perf_counter()
        failures = FUZZERS[name](args.seed, args.rounds)
        failed += len(failures)
        print(f"{name}: {args.rounds} inputs, {len(failures)} failure(s) in {time.perf_counter() - started:.1f} s")
        for f in failures:
            print(f"  FAIL {f.what}\n       {f.why}".encode("ascii", "backslashreplace").decode())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
