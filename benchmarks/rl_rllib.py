"""Multi-agent PPO with RLlib on a teamenvs env: one shared, action-masked policy for every agent.

    pip install -e ".[rl]"
    python -m benchmarks.rl_rllib --env day_trader_v0 --iterations 10 --env-runners 2

Every agent of the PettingZoo env (numeric observations, discrete actions with masks) is
driven by one shared policy, trained with PPO on the new API stack; `--env-runners` sample
episodes in parallel Ray actors. On one machine the script starts a local Ray instance. On a
cluster, start Ray there (`ray start --head` on one node, `ray start --address=HEAD:6379` on the
others) and pass `--address auto` (or `--address HEAD:6379`), which calls
`ray.init(address=...)`: the same script then spreads its env runners over the nodes.

Prints one line per iteration (env steps so far, mean episode return of the team's agents,
wall time) and a closing summary.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseParallelWrapper

import teamenvs
from teamenvs.cli import COUNT, SEED, whole_number


class RLlibMaskKeys(BaseParallelWrapper):
    """PettingZoo's `{"observation", "action_mask"}` as RLlib's action-masking module reads it:
    `{"observations", "action_mask"}`, the mask as float32."""

    def observation_space(self, agent: str) -> spaces.Dict:
        inner = self.env.observation_space(agent)
        return spaces.Dict({"observations": inner["observation"],
                            "action_mask": spaces.Box(0.0, 1.0, inner["action_mask"].shape, dtype=np.float32)})

    def _convert(self, observations: dict[str, Any]) -> dict[str, Any]:
        return {a: {"observations": o["observation"], "action_mask": o["action_mask"].astype(np.float32)} for a, o in observations.items()}

    def reset(self, seed: int | None = None, options: dict | None = None):
        observations, infos = self.env.reset(seed=seed, options=options)
        return self._convert(observations), infos

    def step(self, actions: dict[str, Any]):
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        return self._convert(observations), rewards, terminations, truncations, infos


def env_creator(config: dict[str, Any]) -> Any:
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

    env = teamenvs.make(config["env_id"], obs_type="vector", action_type="discrete", **config.get("env_config", {}))
    return ParallelPettingZooEnv(RLlibMaskKeys(env))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="day_trader_v0", choices=teamenvs.list_envs(), help="a registered env id")
    parser.add_argument("--iterations", type=COUNT, default=10)
    parser.add_argument("--env-runners", type=whole_number(0), default=2)
    parser.add_argument("--batch", type=COUNT, default=4000, help="env steps per training iteration (all agents)")
    parser.add_argument("--address", default=None, help="a running Ray cluster (e.g. 'auto'); default: a local Ray instance")
    parser.add_argument("--seed", type=SEED, default=0)
    args = parser.parse_args(argv)
    try:
        import ray
    except ImportError:
        print("benchmarks.rl_rllib needs the rl extra (ray[rllib], torch): pip install -e \".[rl]\"", file=sys.stderr)
        return 2
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
    register_env("teamenvs", env_creator)
    config = (
        PPOConfig()
        .environment("teamenvs", env_config={"env_id": args.env})
        .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=1)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *a, **k: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            "shared": RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config={"head_fcnet_hiddens": [64, 64]})}))
        .training(train_batch_size=args.batch, minibatch_size=512, num_epochs=5, lr=3e-4, gamma=0.995)
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    start = time.perf_counter()
    result: dict[str, Any] = {}
    for i in range(1, args.iterations + 1):
        result = algo.train()
        runners = result.get("env_runners", {})
        steps = result.get("num_env_steps_sampled_lifetime", runners.get("num_env_steps_sampled_lifetime", 0))
        print(f"iteration {i}: {int(steps):,} env steps, mean episode return (sum over agents) "
              f"{runners.get('episode_return_mean', float('nan')):,.1f}, {time.perf_counter() - start:.0f} s", flush=True)
    runners = result.get("env_runners", {})
    print(f"{args.env}: RLlib PPO, shared masked policy, {args.env_runners} env runners on "
          f"{'a local Ray instance' if args.address is None else args.address}: {args.iterations} iterations in "
          f"{time.perf_counter() - start:.0f} s; final mean episode return {runners.get('episode_return_mean', float('nan')):,.1f}")
    algo.stop()
    ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
