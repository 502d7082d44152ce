"""Step-loop efficiency with LLM policies against the built-in server at a fixed latency.

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
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Any, Iterator, Mapping

import teamenvs
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


@contextlib.contextmanager
def served() -> Iterator[str]:
    """`teamenvs serve-llm` in its own process, as a real endpoint would be; yields its base URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "teamenvs.cli", "serve-llm", "--port", str(port)], stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{url}/models", timeout=1).read()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("teamenvs serve-llm did not start")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--steps", type=int, default=5, help="steps of each episode (the first decisions of DayTrader)")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--in-process", action="store_true", help="serve from a thread of this process instead of `teamenvs serve-llm`")
    args = parser.parse_args(argv)
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
            ["concurrent (agents.run_episode)", f"{m['one']:.2f}", f"{m['ideal']:.2f}", f"{m['one'] / m['ideal']:.2f}x"],
            ["one call after another", f"{m['seq']:.2f}", f"{m['ideal']:.2f}", f"{m['seq'] / m['ideal']:.2f}x"],
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


if __name__ == "__main__":
    main()
