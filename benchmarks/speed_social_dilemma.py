"""Speed of the social-dilemma envs: agent-steps per second with random and scripted policies, on one core.

An agent-step is one agent's turn: its action parsed and applied, its view built and its
text observation rendered (every observation is rendered; nothing is skipped). The loop is
the plain synchronous agent-env loop with the same policy kind for every agent, so the
figure includes choosing the actions and resetting between episodes. A second column times
`env.step` alone. (Random fishers empty the commons in the first month or two, so its
random episodes are short and resets weigh more.)

    python -m benchmarks.speed_social_dilemma [--seconds 3] [--agents 9]
"""

from __future__ import annotations

import argparse
import time

import teamenvs
from agents.scripted import make_policies


def measure(env_id: str, n_agents: int, seconds: float, kind: str = "random", seed: int = 0) -> dict[str, float]:
    """Run episodes of `kind` policies for about `seconds`; return agent-steps/s overall and in env.step."""
    env = teamenvs.make(env_id, n_agents=n_agents)
    agent_steps = episodes = 0
    step_time = 0.0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        policies = make_policies(env, kind, seed=seed + episodes)
        observations, infos = env.reset(seed=seed + episodes)
        for agent in env.agents:
            policies[agent].reset(agent, "")
        while env.agents:
            actions = {a: policies[a].act(observations[a], infos[a]) for a in env.agents if infos[a]["needs_action"]}
            t0 = time.perf_counter()
            observations, _, _, _, infos = env.step(actions)
            step_time += time.perf_counter() - t0
            agent_steps += len(observations)
        episodes += 1
    elapsed = time.perf_counter() - start
    return {
        "episodes": episodes,
        "agent_steps": agent_steps,
        "agent_steps_per_s": agent_steps / elapsed,
        "env_step_agent_steps_per_s": agent_steps / step_time,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--agents", type=int, default=9)
    args = parser.parse_args()
    print("| env | policy | agents | episodes | agent-steps/s (loop) | agent-steps/s (env.step only) |")
    print("|---|---|---:|---:|---:|---:|")
    for env_id in teamenvs.list_envs():
        for kind in ("random", "scripted"):
            r = measure(env_id, args.agents, args.seconds, kind)
            print(
                f"| {env_id} | {kind} | {args.agents} | {r['episodes']} | "
                f"{r['agent_steps_per_s']:,.0f} | {r['env_step_agent_steps_per_s']:,.0f} |"
            )


if __name__ == "__main__":
    main()
