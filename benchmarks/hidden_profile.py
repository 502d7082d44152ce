"""Hidden Profile (`hidden_profile_v0`) benchmarks: CollabSim Table 4 layout per profile, and speed.

Prints one markdown table per section to stdout. Every episode runs through the standard step loop
(`agents.loop.run_episode`, no log files); episode seed and policy seed are both 0..n-1 for
`--seeds n`; a mean ± sd is over those seeds (population sd, ddof=0). Metrics are those of
`teamenvs.hidden_profile.metrics` at the end of each episode.

1. `table4`: CollabSim Table 4's columns (final vote accuracy, vote change rate, key-candidate mention
   rate, message length) plus the share of episodes whose group majority picked the best candidate and
   of key facts surfaced, for the `baseline` and `communication_bandwidth` conditions (messages cut to 15
   words) on each shipped profile and on generated ones (a new profile per seed), for the baselines
   `share_unique`, `shared_only` and `random`.
2. `speed`: episodes back to back for `--seconds` each on the default profile, with random then scripted
   (`share_unique`) policies, in the plain synchronous loop (reset, every policy's `reset` with its
   briefing, `act` for each agent asked, `env.step`; no recording). Env steps/s counts one per `env.step`
   over the whole loop, then over the time inside `env.step` alone.

    python -m benchmarks.hidden_profile [--seeds 10] [--seconds 5] [--only table4|speed]
"""

from __future__ import annotations

import argparse
import gc
import time
from typing import Any, Sequence

import teamenvs
from teamenvs.cli import COUNT, SECONDS
from agents.loop import run_episode
from agents.scripted import make_policies
from benchmarks.common import mean_sd, table, time_episodes
from teamenvs.hidden_profile.materials import GENERATED, PROFILE_IDS

SECTIONS = ("table4", "speed")
POLICIES = ("share_unique", "shared_only", "random")
CONDITIONS = ("baseline", "communication_bandwidth")


def episode_metrics(policy: str, seed: int, **config: Any) -> dict[str, Any]:
    env = teamenvs.make("hidden_profile_v0", **config)
    return run_episode(env, make_policies(env, policy, seed=seed), seed=seed).metrics


def section_table4(seeds: int) -> None:
    print(f"### CollabSim Table 4 layout: {seeds} seeds per row\n")
    rows = []
    for profile in (*PROFILE_IDS, GENERATED):
        for condition in CONDITIONS:
            for policy in POLICIES:
                runs = [episode_metrics(policy, s, preset=condition, profile=profile) for s in range(seeds)]
                col = lambda key: [float(m[key]) for m in runs]  # noqa: E731
                rows.append([profile, condition, f"`{policy}`",
                             mean_sd(col("final_vote_accuracy"), 0, 100, "%"), mean_sd(col("majority_correct"), 0, 100, "%"),
                             mean_sd(col("vote_change_rate"), 0, 100, "%"), mean_sd(col("mention_rate"), 2),
                             mean_sd(col("key_facts_surfaced"), 0, 100, "%"), mean_sd(col("mean_message_words"), 1),
                             mean_sd(col("total_messages"), 1)])
    table(["Profile", "Condition", "Policy", "Vote acc.", "Majority best", "Change", "Mention", "Key facts surfaced",
           "Len. msg. (words)", "Messages"], rows, ["---", "---", "---"] + ["---:"] * 7)
    print()


def section_speed(seconds: float) -> None:
    print(f"### Speed: episodes back to back for {seconds:g} s each (profile `airline_captain`, preset `baseline`)\n")
    rows = []
    for kind in ("random", "scripted"):
        env = teamenvs.make("hidden_profile_v0")
        gc.collect()
        r = time_episodes(env, kind, seconds)
        rows.append([f"`{kind}`", f"{r['episodes']:,}", f"{r['steps']:,}", f"{r['steps'] / r['wall']:,.0f}",
                     f"{r['steps'] / r['step_time']:,.0f}"])
    table(["Policies", "Episodes", "Env steps", "Env steps/s (loop)", "Env steps/s (env.step only)"], rows)
    print()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=COUNT, default=10, help="episodes per row of table4 (seeds 0..n-1)")
    parser.add_argument("--seconds", type=SECONDS, default=5.0, help="seconds of episodes per policy in speed")
    parser.add_argument("--only", action="append", choices=SECTIONS, help="run only this section (repeatable)")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    start = time.perf_counter()
    for section in SECTIONS:
        if section not in (args.only or SECTIONS):
            continue
        if section == "table4":
            section_table4(args.seeds)
        else:
            section_speed(args.seconds)
    print(f"_Total benchmark time: {time.perf_counter() - start:.1f} s._")


if __name__ == "__main__":
    main()
