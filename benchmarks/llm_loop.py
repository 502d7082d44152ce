"""Step-loop efficiency and client speed with LLM policies against the built-in server.

`python -m benchmarks.llm_loop [--latency-ms 200] [--steps 5] [--episodes 16]` prints:

(a) one 9-agent `day_trader_v0` episode (first `--steps` steps) with `LLMPolicy` on the
    `random-valid+latency=<ms>` model: wall time against the ideal (decision steps x
    latency: every step's calls overlap), and the same episode with the calls made one
    after another (each agent waits for the previous one), whose ideal is 9x;
(b) `--episodes` such episodes run concurrently with `agents.arun_episodes` over one shared
    client, against the same episodes one after another.
Issue targets: (a) concurrent at most 1.2x the ideal, against 9x sequential; (b) at least
12x faster concurrently. The cache is off, so every decision is a real HTTP request. The
server runs as `teamenvs serve-llm` in its own process, as a real endpoint would
(`--in-process` serves from a thread instead, sharing this process's CPU and GIL).

`python -m benchmarks.llm_loop --speed [--sizes 8,64] [--rounds 5] [--servers 1]` measures the
client's own speed instead, in one run (speed issue, item 5):

(c) calls/s of a bare asyncio HTTP client (a keep-alive connection per worker, the request
    written and the reply read and decoded by hand: what the server allows) against the full
    stack (`arun_episodes` of 9-agent `day_trader_v0` episodes with `LLMPolicy` and one
    `LLMClient`), at `--sizes` concurrent episodes, with the model `random-valid` (no added
    latency). Both arms have the same bound on requests in flight (9 x episodes, at most
    `--concurrency`) and send the same prompts; the arms alternate for `--rounds` rounds and
    the medians are shown, with the CPU each spends per call in this process and in the
    server's (Linux). The full stack over the `openai` package (the reference transport) is
    shown at the smallest size, and, at each, the full stack with its replies made in this process
    (no HTTP, no server): the ceiling the env, the policy and the loop set. Target: the full
    stack at least 50% of the bare client;
(d) the CPU per call of the synchronous `LLMPolicy.act()` against `await aact()` (the same
    policy and observation, blocks alternating), and of the old way (a fresh event loop and
    `openai` client per call). Target: at most 1.5x;
(e) 16 episodes with a 1 ms model latency run concurrently against one after another.
    Target: concurrent faster.
The server is one Python process (a thread per connection, one GIL): when both arms reach
the same calls/s it is the server's ceiling, not the client's, that was measured; `--servers N`
runs N server processes and spreads both arms over them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence
from urllib.parse import urlsplit

import teamenvs
from teamenvs.cli import COUNT, whole_number
from agents.llm.client import LLMClient
from agents.llm.policy import make_llm_policies
from agents.llm.server import LocalLLMServer
from agents.loop import arun_episode, arun_episodes
from benchmarks.common import table


class OneAtATime:
    """Wraps a team's policies so that their calls run one after another (the sequential baseline)."""

    def __init__(self, policy: Any, lock: asyncio.Lock) -> None:
        self.policy, self.lock = policy, lock

    def reset(self, agent_id: str, briefing: str) -> None:
        self.policy.reset(agent_id, briefing)

    async def aact(self, observation: str, info: Mapping[str, Any]) -> str:
        async with self.lock:
            return await self.policy.aact(observation, info)

    async def aclose(self) -> None:
        await self.policy.aclose()

    @property
    def usage(self) -> Any:
        """The wrapped policy's usage ledger, so that the episode result counts its calls."""
        return self.policy.usage

    @property
    def last_extras(self) -> Any:
        """The wrapped policy's last step annotations (rationale, reply, usage), so that the log holds them."""
        return getattr(self.policy, "last_extras", None)


def _episode(client: LLMClient, seed: int, steps: int, sequential: bool = False, n_agents: int = 9) -> dict[str, Any]:
    env = teamenvs.make("day_trader_v0", n_agents=n_agents)
    policies: dict[str, Any] = make_llm_policies(env, client.model, client=client)
    if sequential:
        lock = asyncio.Lock()
        policies = {a: OneAtATime(p, lock) for a, p in policies.items()}
    return {"env": env, "policies": policies, "seed": seed, "max_steps": steps}


async def _timed(jobs, parallel: int = 1) -> tuple[float, list]:
    start = time.perf_counter()
    if parallel == 1:
        results = [await arun_episode(**job) for job in jobs]
    else:
        results = await arun_episodes(jobs, parallel=parallel)
    return time.perf_counter() - start, results


async def time_one_episode(client: LLMClient, steps: int, n_agents: int = 9, seed: int = 0) -> dict[str, Any]:
    """(a): after a one-step warm-up, one episode with concurrent calls and the same episode with calls one after another.

    Returns the wall times (`one`, `seq`) and the two `EpisodeResult`s (`result`, `seq_result`).
    """
    await _timed([_episode(client, 99, 1, n_agents=n_agents)])  # warm up connections
    one, (result,) = await _timed([_episode(client, seed, steps, n_agents=n_agents)])
    seq, (seq_result,) = await _timed([_episode(client, seed, steps, sequential=True, n_agents=n_agents)])
    return {"one": one, "seq": seq, "result": result, "seq_result": seq_result}


def measure(url: str, latency_ms: int, steps: int, episodes: int) -> dict[str, Any]:
    """The figures of (a) and (b)."""
    model = f"random-valid+latency={latency_ms}"
    latency = latency_ms / 1000

    async def run() -> dict[str, Any]:
        client = LLMClient(model, base_url=url, cache=False, concurrency=16 * 9, max_tokens=64)
        a = await time_one_episode(client, steps)
        one, seq, result = a["one"], a["seq"], a["result"]
        calls = result.usage["total"]["calls"]
        many_seq, _ = await _timed([_episode(client, s, steps) for s in range(episodes)])
        many_par, par_results = await _timed([_episode(client, s, steps) for s in range(episodes)], parallel=episodes)
        await client.aclose()
        return {
            "steps": result.steps, "calls": calls, "one": one, "seq": seq, "ideal": result.steps * latency,
            "many_seq": many_seq, "many_par": many_par,
            "par_calls": sum(r.usage["total"]["calls"] for r in par_results),
        }

    return asyncio.run(run())


@dataclass(frozen=True)
class Served:
    url: str
    pid: int | None  # None: served from a thread of this process


@contextlib.contextmanager
def served_in_process(n: int = 1) -> Iterator[list[Served]]:
    """`n` built-in servers on threads of this process (sharing its CPU and GIL: for quick checks, not figures)."""
    with contextlib.ExitStack() as stack:
        yield [Served(stack.enter_context(LocalLLMServer()).url, None) for _ in range(n)]


def pin_apart(pids: Sequence[int]) -> Callable[[], None]:
    """Give each of the server processes `pids` a CPU of its own (the last of this process's CPUs) and this process
    the others, as a real endpoint has its own machine; returns what undoes it for this process. Nothing is pinned
    where processes cannot be (not Linux) or there are too few CPUs for one each and one for this process.

    Why: a server's threads and the client wake each other through sockets, and Linux tends to queue the woken on
    the waker's CPU, so the two often take turns on one CPU while the other idles (measured on 2 cores, 16 episodes
    at once against one after another at 1 ms: 1.06-1.08x unpinned, 1.17-1.19x pinned, both arms faster)."""
    from teamenvs.wrappers.vector import worker_cpus

    cpus = worker_cpus()
    if cpus is None or len(cpus) < len(pids) + 1:
        return lambda: None
    before = os.sched_getaffinity(0)
    try:
        for pid, cpu in zip(pids, reversed(cpus)):
            for task in os.listdir(f"/proc/{pid}/task"):  # every thread; those it starts later inherit the CPU
                os.sched_setaffinity(int(task), {cpu})
        os.sched_setaffinity(0, set(cpus[: len(cpus) - len(pids)]))
    except OSError:  # a thread that ended meanwhile, no /proc: measure unpinned rather than fail
        os.sched_setaffinity(0, before)
        return lambda: None
    return lambda: os.sched_setaffinity(0, before)


@contextlib.contextmanager
def served_many(n: int = 1, own_cpus: bool = False) -> Iterator[list[Served]]:
    """`n` `teamenvs serve-llm` processes, each on its own port; yields their base URLs and process ids. With
    `own_cpus`, each server runs on a CPU of its own and this process on the others while the block runs (`pin_apart`)."""
    procs, out = [], []
    unpin: Callable[[], None] = lambda: None  # noqa: E731
    try:
        for _ in range(n):
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
            procs.append(subprocess.Popen([sys.executable, "-m", "teamenvs.cli", "serve-llm", "--port", str(port)],
                                          stdout=subprocess.DEVNULL))
            out.append(Served(f"http://127.0.0.1:{port}/v1", procs[-1].pid))
        for server in out:
            for _ in range(200):
                try:
                    urllib.request.urlopen(f"{server.url}/models", timeout=1).read()
                    break
                except OSError:
                    time.sleep(0.05)
            else:
                raise RuntimeError("teamenvs serve-llm did not start")
        if own_cpus:
            unpin = pin_apart([proc.pid for proc in procs])
        yield out
    finally:
        unpin()
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=10)


@contextlib.contextmanager
def served() -> Iterator[str]:
    """`teamenvs serve-llm` in its own process, as a real endpoint would be; yields its base URL."""
    with served_many(1) as (server,):
        yield server.url


# ---------------------------------------------------------------------------- --speed


def process_cpu(pids: Sequence[int | None]) -> float | None:
    """CPU seconds (user + system) the processes have used, from /proc (None where there is none)."""
    total = 0.0
    if not pids or None in pids:
        return None
    try:
        for pid in pids:
            with open(f"/proc/{pid}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return total


def day_trader_prompts(n_agents: int = 9) -> list[list[dict[str, str]]]:
    """The prompts `LLMPolicy` sends in a 9-agent `day_trader_v0` episode's first step (the bare arm's requests)."""
    env = teamenvs.make("day_trader_v0", n_agents=n_agents)
    observations, infos = env.reset(seed=0)
    policies = make_llm_policies(env, "random-valid", base_url="http://127.0.0.1:9/v1")
    prompts = []
    for agent in env.agents:
        policy = policies[agent]
        policy.reset(agent, env.unwrapped.briefing(agent))
        prompts.append([{"role": "system", "content": policy.system_prompt()},
                        {"role": "user", "content": policy.user_prompt(observations[agent], infos[agent])}])
    return prompts


async def bare_client(urls: Sequence[str], workers: int, total: int, prompts: Sequence[Sequence[Mapping[str, str]]],
                      model: str = "random-valid") -> dict[str, Any]:
    """`total` chat requests from `workers` tasks, each with one kept-alive connection (spread over `urls`),
    written and read by hand: a request line, headers and `json.dumps` of the body; the reply's headers
    up to the blank line, `Content-Length` bytes of body, `json.loads`. What the server allows a client."""
    left = [total]
    errors = [0]

    async def worker(index: int) -> int:
        url = urlsplit(urls[index % len(urls)])
        reader, writer = await asyncio.open_connection(url.hostname, url.port)
        head = f"POST {url.path}/chat/completions HTTP/1.1\r\nHost: {url.hostname}:{url.port}\r\n" \
               "Content-Type: application/json\r\nContent-Length: "
        done = 0
        try:
            while left[0] > 0:
                left[0] -= 1
                messages = [dict(m) for m in prompts[(index + done) % len(prompts)]]
                messages[-1]["content"] = f"[{index}.{done}] " + messages[-1]["content"]  # every request distinct
                body = json.dumps({"model": model, "messages": messages, "temperature": 0.0, "max_tokens": 64}).encode()
                writer.write(f"{head}{len(body)}\r\n\r\n".encode() + body)
                raw = await reader.readuntil(b"\r\n\r\n")
                status = int(raw[9:12])
                length = int(raw.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
                reply = json.loads(await reader.readexactly(length))
                if status != 200 or not reply["choices"][0]["message"]["content"]:
                    errors[0] += 1
                done += 1
        finally:
            writer.close()
        return done

    start = time.perf_counter()
    calls = sum(await asyncio.gather(*(worker(i) for i in range(workers))))
    return {"calls": calls, "wall": time.perf_counter() - start, "errors": errors[0]}


async def full_stack(urls: Sequence[str], episodes: int, steps: int, concurrency: int, transport: str = "auto",
                     model: str = "random-valid") -> dict[str, Any]:
    """`episodes` 9-agent DayTrader episodes at once (`arun_episodes`), one `LLMClient` per server, after a
    one-step warm-up episode on each."""
    clients = [LLMClient(model, base_url=url, cache=False, concurrency=-(-concurrency // len(urls)), max_tokens=64,
                         transport=transport) for url in urls]
    try:
        await _timed([_episode(client, 99, 1) for client in clients], parallel=len(clients))
        start = time.perf_counter()  # the envs and policies made inside the time, as the bare arm opens its connections
        jobs = [_episode(clients[i % len(clients)], seed, steps) for i, seed in enumerate(range(episodes))]
        wall, results = await _timed(jobs, parallel=episodes)
        wall = time.perf_counter() - start
    finally:
        for client in clients:
            await client.aclose()
    return {"calls": sum(r.usage["total"]["calls"] for r in results), "wall": wall}


class InProcessReplies(LLMClient):
    """An `LLMClient` whose replies are made in this process, as `random-valid` makes them, with no HTTP:
    the full stack without the network, i.e. the ceiling that the env, the policy and the loop set."""

    async def chat(self, messages: Any, *, budget: Any = None, ledger: Any = None, **overrides: Any) -> Any:
        import hashlib

        import numpy as np

        from agents.llm.client import ChatResult, Usage
        from agents.llm.server import random_valid_reply

        await asyncio.sleep(0)
        question = messages[-1]["content"]
        seed = int.from_bytes(hashlib.sha256(question.encode()).digest()[:8], "little")
        usage = Usage(calls=1)
        if ledger is not None:
            ledger.add(usage)
        return ChatResult(random_valid_reply(question, "", np.random.default_rng(seed)), usage, self.model)


async def no_http(episodes: int, steps: int, concurrency: int) -> dict[str, Any]:
    """The full stack with `InProcessReplies` instead of a client (see there)."""
    client = InProcessReplies("random-valid", base_url="http://127.0.0.1:9/v1", cache=False, concurrency=concurrency)
    await _timed([_episode(client, 99, 1)])
    wall, results = await _timed([_episode(client, seed, steps) for seed in range(episodes)], parallel=episodes)
    return {"calls": sum(r.usage["total"]["calls"] for r in results), "wall": wall}


def _arm(run: Any, pids: Sequence[int | None]) -> dict[str, Any]:
    """Run one arm in a fresh loop; its calls/s and the CPU per call of this process and of the servers."""
    cpu, server = time.process_time(), process_cpu(pids)
    out = asyncio.run(run())
    cpu = time.process_time() - cpu
    server_after = process_cpu(pids)
    out["rate"] = out["calls"] / out["wall"]
    out["cpu_ms"] = 1e3 * cpu / out["calls"]
    out["server_ms"] = None if server is None or server_after is None else 1e3 * (server_after - server) / out["calls"]
    return out


def throughput(servers: Sequence[Served], sizes: Sequence[int], steps: int = 5, rounds: int = 3, concurrency: int = 128,
               reference: bool = True) -> list[dict[str, Any]]:
    """(c): for each size, the bare client and the full stack, alternating for `rounds`; medians per arm."""
    urls, pids = [s.url for s in servers], [s.pid for s in servers]  # type: ignore[misc]
    prompts = day_trader_prompts()
    rows = []
    for size in sizes:
        in_flight = min(9 * size, concurrency)
        total = 9 * steps * size
        arms: dict[str, list[dict[str, Any]]] = {"bare": [], "full": []}
        _arm(lambda: bare_client(urls, in_flight, min(total, 500), prompts), pids)  # warm-up: the servers' first requests
        for index in range(rounds):  # the arms alternate, and which goes first too
            for name in (("bare", "full") if index % 2 == 0 else ("full", "bare")):
                if name == "bare":
                    arms["bare"].append(_arm(lambda: bare_client(urls, in_flight, total, prompts), pids))
                else:
                    arms["full"].append(_arm(lambda: full_stack(urls, size, steps, concurrency), pids))
        row = {"episodes": size, "in_flight": in_flight, "calls": total}
        for name, runs in arms.items():
            row[name] = {k: _median([r[k] for r in runs]) for k in ("rate", "cpu_ms", "server_ms")}
            row[name]["errors"] = sum(r.get("errors", 0) for r in runs)
        row["ratio"] = row["full"]["rate"] / row["bare"]["rate"]
        row["round_ratios"] = [f["rate"] / b["rate"] for f, b in zip(arms["full"], arms["bare"])]
        row["no_http"] = _arm(lambda: no_http(size, steps, concurrency), pids)
        if reference and size == min(sizes):
            row["openai"] = _arm(lambda: full_stack(urls, size, steps, concurrency, transport="openai"), pids)
        rows.append(row)
    return rows


def _median(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def sync_against_async(url: str, calls: int = 200, rounds: int = 5, fresh_calls: int = 10) -> dict[str, float]:
    """(d): CPU and wall time per call of `LLMPolicy.act()` and of `await aact()`, the same policy and
    observation, in alternating blocks of `calls`; and of the old synchronous path (a fresh event loop and
    `openai` client per call, `fresh_calls` of them)."""
    env = teamenvs.make("day_trader_v0", n_agents=9)
    observations, infos = env.reset(seed=0)
    agent = env.agents[0]
    client = LLMClient("random-valid", base_url=url, cache=False, max_tokens=64)
    policy = make_llm_policies(env, "random-valid", client=client)[agent]
    policy.reset(agent, env.unwrapped.briefing(agent))
    observation, info = observations[agent], infos[agent]

    async def awaited(n: int) -> tuple[float, float]:
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(n):
            await policy.aact(observation, info)
        return time.process_time() - cpu, time.perf_counter() - wall

    def synchronous(n: int) -> tuple[float, float]:
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(n):
            policy.act(observation, info)
        return time.process_time() - cpu, time.perf_counter() - wall

    blocks: dict[str, list[tuple[float, float]]] = {"sync": [], "async": []}
    loop = asyncio.new_event_loop()  # the awaited arm's loop, kept across blocks as an async program's would be
    try:
        synchronous(5)
        loop.run_until_complete(awaited(5))
        for index in range(rounds):  # the paths alternate, and which goes first too
            for name in (("sync", "async") if index % 2 == 0 else ("async", "sync")):
                blocks[name].append(synchronous(calls) if name == "sync" else loop.run_until_complete(awaited(calls)))
        loop.run_until_complete(client.aclose())
    finally:
        loop.close()
        policy.close()
    n = calls * rounds
    # medians over the blocks, per call
    sync_cpu, sync_wall = (statistics.median(b[i] for b in blocks["sync"]) * rounds for i in (0, 1))
    async_cpu, async_wall = (statistics.median(b[i] for b in blocks["async"]) * rounds for i in (0, 1))

    old_client = LLMClient("random-valid", base_url=url, cache=False, max_tokens=64, transport="openai")
    old = make_llm_policies(env, "random-valid", client=old_client)[agent]
    old.reset(agent, env.unwrapped.briefing(agent))

    async def once() -> None:
        try:
            await old.aact(observation, info)
        finally:
            await old_client.aclose()

    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(fresh_calls):
        asyncio.run(once())
    fresh_cpu, fresh_wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"sync_cpu_ms": 1e3 * sync_cpu / n, "sync_wall_ms": 1e3 * sync_wall / n,
            "async_cpu_ms": 1e3 * async_cpu / n, "async_wall_ms": 1e3 * async_wall / n,
            "ratio": sync_cpu / async_cpu, "calls": n,
            "fresh_cpu_ms": 1e3 * fresh_cpu / fresh_calls, "fresh_wall_ms": 1e3 * fresh_wall / fresh_calls}


def concurrent_against_sequential(url: str, latency_ms: int = 1, episodes: int = 16, steps: int = 5,
                                  rounds: int = 3) -> dict[str, Any]:
    """(e): `episodes` episodes one after another and all at once, on one client, alternating for `rounds`."""
    model = f"random-valid+latency={latency_ms}"

    async def run() -> dict[str, Any]:
        client = LLMClient(model, base_url=url, cache=False, concurrency=16 * 9, max_tokens=64)
        try:
            # warm up both ways: the first run at once opens up to episodes x agents connections, a one-time cost
            await _timed([_episode(client, 99 + s, 1) for s in range(episodes)], parallel=episodes)
            seq, par, calls = [], [], 0
            for index in range(rounds):  # the runners alternate, and which goes first too
                for concurrent in ((False, True) if index % 2 == 0 else (True, False)):
                    wall, results = await _timed([_episode(client, s, steps) for s in range(episodes)],
                                                 parallel=episodes if concurrent else 1)
                    (par if concurrent else seq).append(wall)
                    calls = sum(r.usage["total"]["calls"] for r in results)
        finally:
            await client.aclose()
        return {"seq": statistics.median(seq), "par": statistics.median(par), "calls": calls,
                "round_speedups": [s / p for s, p in zip(seq, par)]}

    return asyncio.run(run())


def ms_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def speed_report(sizes: Sequence[int], steps: int, rounds: int, n_servers: int, concurrency: int,
                 in_process: bool = False) -> None:
    """Print (c), (d) and (e), measured in one run."""
    load = ", load average " + " / ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else ""
    where = ("server thread(s) in this process (figures not meaningful)" if in_process
             else "`teamenvs serve-llm` process(es), each on a CPU of its own where there are enough (`pin_apart`)")
    print(f"{os.cpu_count()} CPU cores{load}; {n_servers} {where}, model random-valid\n")
    with (served_in_process(n_servers) if in_process else served_many(n_servers, own_cpus=True)) as servers:
        rows = throughput(servers, sizes, steps, rounds, concurrency)
        sync = sync_against_async(servers[0].url, rounds=rounds)
        many = concurrent_against_sequential(servers[0].url, steps=steps, rounds=rounds)
    print(f"### (c) calls/s, bare asyncio HTTP client against the full stack (no added latency; medians of {rounds} rounds)\n")
    body = []
    for row in rows:
        bare, full = row["bare"], row["full"]
        body.append([f"{row['episodes']} episodes ({row['in_flight']} in flight, {row['calls']:,} calls)",
                     f"{bare['rate']:,.0f}", f"{full['rate']:,.0f}", f"{row['ratio']:.0%}",
                     ", ".join(f"{r:.0%}" for r in row["round_ratios"]),
                     f"{ms_text(bare['cpu_ms'])} / {ms_text(full['cpu_ms'])}", f"{ms_text(bare['server_ms'])} / {ms_text(full['server_ms'])}"])
        if "openai" in row:
            ref = row["openai"]
            body.append([f"{row['episodes']} episodes, full stack over the openai package", "", f"{ref['rate']:,.0f}",
                         f"{ref['rate'] / bare['rate']:.0%}", "", f"{ms_text(ref['cpu_ms'])} (full)", f"{ms_text(ref['server_ms'])} (full)"])
        ceiling = row["no_http"]
        body.append([f"{row['episodes']} episodes, full stack with replies made in-process (no HTTP, no server)", "",
                     f"{ceiling['rate']:,.0f}", "", "", f"{ms_text(ceiling['cpu_ms'])} (full)", ""])
    table(["Concurrent episodes", "Bare client calls/s", "Full stack calls/s", "Full / bare", "Each round",
           "Client CPU ms/call (bare / full)", "Server CPU ms/call (bare / full)"], body)
    errors = sum(row["bare"]["errors"] for row in rows)
    if errors:
        print(f"\n{errors} bare-client replies were errors or empty")
    print(f"\n### (d) synchronous act() against await aact(), CPU per call ({sync['calls']:,} calls each; medians of {rounds} blocks)\n")
    table(["Path", "CPU ms/call", "Wall ms/call", "CPU / aact"], [
        ["await policy.aact() (one loop)", f"{sync['async_cpu_ms']:.3f}", f"{sync['async_wall_ms']:.3f}", "1.00x"],
        ["policy.act() (a kept loop and client)", f"{sync['sync_cpu_ms']:.3f}", f"{sync['sync_wall_ms']:.3f}", f"{sync['ratio']:.2f}x"],
        ["before: a fresh loop and openai client per call", f"{sync['fresh_cpu_ms']:.3f}", f"{sync['fresh_wall_ms']:.3f}",
         f"{sync['fresh_cpu_ms'] / sync['async_cpu_ms']:.1f}x"],
    ])
    print(f"\n### (e) 16 episodes at 1 ms model latency ({many['calls']} calls; medians of {rounds} rounds)\n")
    table(["Runner", "Wall time (s)", "Speed-up", "Each round"], [
        ["one episode after another", f"{many['seq']:.3f}", "1.0x", ""],
        ["16 at once (agents.arun_episodes, one client)", f"{many['par']:.3f}", f"{many['seq'] / many['par']:.2f}x",
         ", ".join(f"{x:.2f}x" for x in many["round_speedups"])],
    ])


def counts(text: str) -> tuple[int, ...]:
    """An argparse type: comma-separated whole numbers from 1 (`--sizes 8,64`)."""
    try:
        return tuple(COUNT(part) for part in text.split(","))
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers from 1, got {text[:40]!r}") from None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--latency-ms", type=whole_number(0), default=200)
    parser.add_argument("--steps", type=COUNT, default=5, help="steps of each episode (the first decisions of DayTrader)")
    parser.add_argument("--episodes", type=COUNT, default=16)
    parser.add_argument("--in-process", action="store_true", help="serve from a thread of this process instead of `teamenvs serve-llm`")
    parser.add_argument("--speed", action="store_true", help="measure the client's speed instead: (c), (d), (e) of the module docstring")
    parser.add_argument("--sizes", type=counts, default=(8, 64), help="--speed: concurrent episodes to measure, comma-separated")
    parser.add_argument("--rounds", type=COUNT, default=5, help="--speed: rounds of each arm (medians are shown)")
    parser.add_argument("--servers", type=COUNT, default=1, help="--speed: `teamenvs serve-llm` processes to spread the requests over")
    parser.add_argument("--concurrency", type=COUNT, default=128, help="--speed: the bound on requests in flight (the server serves 256 connections)")
    args = parser.parse_args(argv)
    if args.speed:
        speed_report(list(args.sizes), args.steps, args.rounds, args.servers, args.concurrency,
                     in_process=args.in_process)
        return
    if args.in_process:
        with LocalLLMServer() as server:
            m = measure(server.url, args.latency_ms, args.steps, args.episodes)
    else:
        with served() as url:
            m = measure(url, args.latency_ms, args.steps, args.episodes)
    ms = args.latency_ms
    print(f"### (a) one 9-agent day_trader_v0 episode, {m['steps']} decision steps, {m['calls']} calls at {ms} ms each\n")
    table(
        ["Loop", "Wall time (s)", "Ideal: steps x latency (s)", "Ratio to ideal"],
        [
            ["concurrent (agents.run_episode)", f"{m['one']:.2f}", f"{m['ideal']:.2f}", _ratio(m['one'], m['ideal'])],
            ["one call after another", f"{m['seq']:.2f}", f"{m['ideal']:.2f}", _ratio(m['seq'], m['ideal'])],
        ],
    )
    print(f"\n### (b) {args.episodes} such episodes ({m['par_calls']} calls)\n")
    table(
        ["Runner", "Wall time (s)", "Speed-up"],
        [
            ["one episode after another", f"{m['many_seq']:.2f}", "1.0x"],
            [f"{args.episodes} at once (agents.arun_episodes, one client)", f"{m['many_par']:.2f}", f"{m['many_seq'] / m['many_par']:.1f}x"],
        ],
    )


def _ratio(wall: float, ideal: float) -> str:
    return f"{wall / ideal:.2f}x" if ideal > 0 else "n/a (no latency)"


if __name__ == "__main__":
    main()
