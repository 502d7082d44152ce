"""The `teamenvs` command line: list environments, run seeded episodes with baselines.

    teamenvs list
    teamenvs run day_trader_v0 --policy scripted --seed 0 --episodes 5 --set n_agents=6 --log-dir runs
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, Sequence

from teamenvs.core.config import ConfigError
from teamenvs.registry import _REGISTRY, list_envs, make


def _parse_sets(pairs: Sequence[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set expects key=value, got {pair!r}")
        values[key.strip()] = value.strip()
    return values


def _mean_sd(xs: Sequence[float]) -> str:
    mean = sum(xs) / len(xs)
    if len(xs) < 2:
        return f"{mean:.3f}"
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1))
    return f"{mean:.3f} +- {sd:.3f}"


def format_summary(env_id: str, policy: str, results: Sequence[Any]) -> str:
    """A readable summary of episodes: per-agent returns and the scalar metrics (mean +- sd)."""
    lines = [f"{env_id} | policy {policy} | {len(results)} episode(s), seeds {', '.join(str(r.seed) for r in results)}"]
    agents = list(results[0].returns)
    width = max(len(a) for a in agents + ["metric"]) + 2
    lines.append("")
    lines.append(f"{'agent':<{width}}return")
    for a in agents:
        lines.append(f"{a:<{width}}{_mean_sd([r.returns[a] for r in results])}")
    def number(v: Any) -> bool:
        return isinstance(v, (int, float))

    # a metric may be undefined (None) in some episodes, e.g. an acceptance rate without offers
    scalar = [k for k in results[0].metrics if any(number(r.metrics.get(k)) for r in results)]
    width = max(len(k) for k in scalar + ["metric"]) + 2
    lines.append("")
    lines.append(f"{'metric':<{width}}value")
    for key in scalar:
        values = [float(r.metrics[key]) for r in results if number(r.metrics.get(key))]
        note = f"  ({len(values)} of {len(results)} episodes; undefined in the others)" if len(values) < len(results) else ""
        lines.append(f"{key:<{width}}{_mean_sd(values)}{note}")
    logs = [str(r.log_path) for r in results if r.log_path is not None]
    if logs:
        lines.append("")
        lines.append(f"logs: {logs[0]}" + (f" (+{len(logs) - 1} more in the same folder)" if len(logs) > 1 else ""))
    return "\n".join(lines)


def _cmd_list(args: argparse.Namespace) -> int:
    for env_id in list_envs():
        spec = _REGISTRY[env_id]
        print(f"{env_id:<16} {spec.gym_id:<26} {spec.summary}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    import agents

    config = _parse_sets(args.set)
    if args.preset:
        config["preset"] = args.preset
    env = make(args.env_id, **config)
    if args.episodes < 1:
        raise ConfigError(f"--episodes must be at least 1, got {args.episodes}")
    results = []
    for k in range(args.episodes):
        seed = args.seed + k
        policies = agents.make_policies(env, args.policy, seed=seed)
        label = args.policy.replace(",", "+")
        result = agents.run_episode(env, policies, seed=seed, log_dir=args.log_dir, log_name=f"{args.env_id}_{label}_seed{seed}")
        results.append(result)
    print(format_summary(args.env_id, args.policy, results))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="teamenvs", description="Multi-agent team-science environments.")
    sub = parser.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser("list", help="list registered environments")
    p_list.set_defaults(func=_cmd_list)
    p_run = sub.add_parser("run", help="run seeded episodes with scripted or random policies")
    p_run.add_argument("env_id")
    p_run.add_argument("--policy", default="scripted", help="scripted | random | a baseline name | comma list, one per agent")
    p_run.add_argument("--seed", type=int, default=0, help="seed of the first episode (episode k uses seed+k)")
    p_run.add_argument("--episodes", type=int, default=1)
    p_run.add_argument("--preset", default=None, help="a named condition, e.g. group_size_6")
    p_run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override (repeatable)")
    p_run.add_argument("--log-dir", default="runs", help="folder for the JSONL episode logs (default: runs)")
    p_run.set_defaults(func=_cmd_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, KeyError, ValueError, TypeError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
