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
from typing import Sequence

import teamenvs
from benchmarks.common import time_episodes
from teamenvs.cli import SECONDS, whole_number
from teamenvs.core.config import ConfigError

SOCIAL_DILEMMAS = ("day_trader_v0", "commons_v0")


def measure(env_id: str, n_agents: int, seconds: float, kind: str = "random", seed: int = 0) -> dict[str, float]:
    """Run episodes of `kind` policies for about `seconds`; return agent-steps/s overall and in env.step."""
    r = time_episodes(teamenvs.make(env_id, n_agents=n_agents), kind, seconds, seed)
    return {
        "episodes": r["episodes"],
        "agent_steps": r["agent_steps"],
        "agent_steps_per_s": r["agent_steps"] / r["wall"],
        "env_step_agent_steps_per_s": r["agent_steps"] / r["step_time"],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=SECONDS, default=3.0)
    parser.add_argument("--agents", type=whole_number(2), default=9)
    args = parser.parse_args(argv)
    for env_id in SOCIAL_DILEMMAS:  # the configs say how many agents they take
        try:
            teamenvs.make(env_id, n_agents=args.agents)
        except ConfigError as e:
            parser.error(f"--agents: {e}")
    print("| env | policy | agents | episodes | agent-steps/s (loop) | agent-steps/s (env.step only) |")
    print("|---|---|---:|---:|---:|---:|")
    for env_id in SOCIAL_DILEMMAS:
        for kind in ("random", "scripted"):
            r = measure(env_id, args.agents, args.seconds, kind)
            print(
                f"| {env_id} | {kind} | {args.agents} | {r['episodes']} | "
                f"{r['agent_steps_per_s']:,.0f} | {r['env_step_agent_steps_per_s']:,.0f} |"
            )


if __name__ == "__main__":
    main()
