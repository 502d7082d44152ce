"""Train a single learner with masked PPO (sb3-contrib `MaskablePPO`) on the single-agent view.

    pip install -e ".[rl]"
    python -m benchmarks.rl_ppo --task day_trader --steps 60000 --out results/rl
    python -m benchmarks.rl_ppo --task commons --steps 60000 --out results/rl

The learner is one agent of a team env (`gymnasium.make("teamenvs/...", obs_type="vector",
action_type="discrete")`); its teammates are a scripted baseline (DayTrader: `tit_for_tat`,
commons: `mimic`). The script evaluates the policy every `--eval-every` env steps on held-out
seeds (deterministic, masked), and compares it, on the same seeds, with the masked random
policy and with the best fixed strategy the issue names (DayTrader: always invest group 100;
commons: the sustainable share). It writes `<out>/<task>_curve.png`, `<out>/<task>.json` and
prints a summary line: env steps, wall time, final score, random, best fixed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

import gymnasium
import numpy as np

import teamenvs  # noqa: F401  (registers the Gymnasium ids)
from teamenvs.cli import COUNT, SEED, finite_number

TASKS = {
    # learner, teammates, the best fixed strategy as a scripted baseline playing the learner's seat
    "day_trader": {"gym_id": "teamenvs/DayTrader-v0", "agent": "trader_1", "teammates": "tit_for_tat", "fixed": "cooperator",
                   "fixed_label": "always group 100 (cooperator)"},
    "commons": {"gym_id": "teamenvs/Commons-v0", "agent": "fisher_1", "teammates": "mimic", "fixed": "sustainable",
                "fixed_label": "sustainable share"},
}

# what the rewards are multiplied by for learning: DayTrader's are dollars, the commons' tons
REWARD_SCALE = {"day_trader": 0.01, "commons": 0.1}


class MaskedVector(gymnasium.ObservationWrapper):
    """The Dict observation's vector for the network, and its mask for `MaskablePPO.action_masks()`."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.observation_space = env.observation_space["observation"]
        self._mask = np.ones(env.action_space.n, dtype=bool)

    def observation(self, observation: dict[str, Any]) -> np.ndarray:
        self._mask = observation["action_mask"].astype(bool)
        return observation["observation"]

    def action_masks(self) -> np.ndarray:
        return self._mask


def make_env(task: str, reward_scale: float = 1.0) -> gymnasium.Env:
    """The learner's env; `reward_scale` multiplies the rewards PPO learns from (evaluation uses 1)."""
    spec = TASKS[task]
    env = gymnasium.make(spec["gym_id"], agent=spec["agent"], teammates=spec["teammates"], obs_type="vector", action_type="discrete")
    if reward_scale != 1.0:
        env = gymnasium.wrappers.TransformReward(env, lambda r: r * reward_scale)
    return MaskedVector(env)


def episode_return(env: gymnasium.Env, choose: Callable[[np.ndarray, np.ndarray], int], seed: int) -> float:
    observation, _ = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        observation, reward, terminated, truncated, _ = env.step(choose(observation, env.action_masks()))
        total += float(reward)
        done = terminated or truncated
    return total


def fixed_strategy_return(task: str, seed: int) -> float:
    """The learner's return when its seat is played by the scripted baseline named as the best fixed strategy."""
    from teamenvs.core.policy import make_policies

    spec = TASKS[task]
    team = teamenvs.make(gymnasium.spec(spec["gym_id"]).kwargs["env_id"])
    names = {a: (spec["fixed"] if a == spec["agent"] else spec["teammates"]) for a in team.possible_agents}
    policies = make_policies(team, names, seed=seed)
    observations, infos = team.reset(seed=seed)
    for agent in team.agents:
        policies[agent].reset(agent, team.briefing(agent))
    total = 0.0
    while team.agents:
        actions = {a: policies[a].act(observations[a], infos[a]) for a in team.agents if infos[a]["needs_action"]}
        observations, rewards, _, _, infos = team.step(actions)
        total += rewards.get(spec["agent"], 0.0)
    return total


def reference_scores(task: str, eval_env: gymnasium.Env, eval_seeds: list[int], seed: int) -> tuple[float, float]:
    """The masked random policy's and the best fixed strategy's mean learner return on the held-out seeds."""
    rng = np.random.default_rng(seed)
    random_score = float(np.mean([episode_return(eval_env, lambda o, m: int(rng.choice(np.flatnonzero(m))), s) for s in eval_seeds]))
    return random_score, float(np.mean([fixed_strategy_return(task, s) for s in eval_seeds]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", choices=sorted(TASKS), default="day_trader")
    parser.add_argument("--steps", type=COUNT, default=60_000, help="env steps of training (learner steps)")
    parser.add_argument("--eval-every", type=COUNT, default=5_000)
    parser.add_argument("--eval-episodes", type=COUNT, default=5)
    parser.add_argument("--reward-scale", type=finite_number(0, above=True), default=None,
                        help="multiply rewards for learning (default: 0.01 for DayTrader's dollars, 0.1 for the commons' tons); "
                             "returns are reported unscaled")
    parser.add_argument("--seed", type=SEED, default=0)
    parser.add_argument("--out", type=Path, default=Path("results/rl"))
    args = parser.parse_args(argv)
    try:
        from sb3_contrib import MaskablePPO
    except ImportError:
        print("benchmarks.rl_ppo needs the rl extra (torch, sb3-contrib): pip install -e \".[rl]\"", file=sys.stderr)
        return 2
    from stable_baselines3.common.callbacks import BaseCallback

    args.out.mkdir(parents=True, exist_ok=True)
    eval_env = make_env(args.task)
    eval_seeds = [10_000 + i for i in range(args.eval_episodes)]
    random_score, fixed_score = reference_scores(args.task, eval_env, eval_seeds, args.seed)
    curve: list[tuple[int, float, float]] = []
    start = time.perf_counter()

    def evaluate(model: Any) -> float:
        return float(np.mean([episode_return(eval_env, lambda o, m: int(model.predict(o, action_masks=m, deterministic=True)[0]), s)
                              for s in eval_seeds]))

    class Curve(BaseCallback):
        """Evaluates every `--eval-every` env steps on the held-out seeds (unscaled returns)."""

        def _on_step(self) -> bool:
            if self.num_timesteps % args.eval_every == 0:
                curve.append((self.num_timesteps, evaluate(self.model), time.perf_counter() - start))
            return True

    scale = args.reward_scale if args.reward_scale is not None else REWARD_SCALE[args.task]
    model = MaskablePPO("MlpPolicy", make_env(args.task, scale), seed=args.seed, n_steps=2048, batch_size=256,
                        learning_rate=3e-4, gamma=0.99, ent_coef=0.01, verbose=0)
    curve.append((0, evaluate(model), 0.0))
    model.learn(total_timesteps=args.steps, callback=Curve())
    wall = time.perf_counter() - start
    final = curve[-1][1]
    result = {"task": args.task, "teammates": TASKS[args.task]["teammates"], "env_steps": int(model.num_timesteps), "wall_s": round(wall, 1),
              "final": final, "random": random_score, "best_fixed": fixed_score, "best_fixed_label": TASKS[args.task]["fixed_label"],
              "curve": curve, "seed": args.seed, "eval_seeds": eval_seeds, "reward_scale": scale}
    (args.out / f"{args.task}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    plot(result, args.out / f"{args.task}_curve.png")
    print(f"{args.task} vs {result['teammates']}: {result['env_steps']:,} env steps in {wall:.0f} s; "
          f"MaskablePPO {final:,.1f}, random {random_score:,.1f}, {result['best_fixed_label']} {fixed_score:,.1f}")
    return 0


def plot(result: dict[str, Any], path: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.0), dpi=120)
    ax = fig.subplots()
    steps = [c[0] for c in result["curve"]]
    ax.plot(steps, [c[1] for c in result["curve"]], marker="o", label=f"{result.get('learner', 'MaskablePPO')} (deterministic, masked)")
    ax.axhline(result["random"], color="grey", linestyle=":", label="random (masked)")
    ax.axhline(result["best_fixed"], color="green", linestyle="--", label=result["best_fixed_label"])
    ax.set_xlabel("learner env steps")
    ax.set_ylabel(f"learner return (mean of {len(result['eval_seeds'])} held-out seeds)")
    ax.set_title(f"{result['task']}: one learner vs {result['teammates']} teammates")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    raise SystemExit(main())
