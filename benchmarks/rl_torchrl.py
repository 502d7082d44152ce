"""Every env through TorchRL: its spec check, and frames collected with masked random actions.

    pip install -e ".[rl]"            # torch and torchrl, never needed by the tests
    python -m benchmarks.rl_torchrl [--frames 2000] [--out results/rl/torchrl.md]

Per env, two ways in:
- the multi-agent env, `PettingZooWrapper(FlatInfo(MaskInInfo(env)), use_mask=True, return_state=True)`
  (`teamenvs.wrappers.FlatInfo`: infos TorchRL can turn into tensors; `MaskInInfo`: the action mask
  in the info, where TorchRL takes it from, not in the observation too);
- the single-agent view as it is, `GymWrapper(gymnasium.make(gym_id, obs_type="vector", action_type="discrete"),
  categorical_action_encoding=True)` (indices, not TorchRL's default one-hot actions, which a policy writing
  indices would send as action 0: the refusal count below caught that).

For each: `torchrl.envs.utils.check_env_specs` (a rollout whose every tensor must match the specs),
then `rollout(frames, policy, break_when_any_done=False)` with a policy drawing each acting agent's
action uniformly among those its `action_mask` tensor allows. It prints one row per env and way:
frames, frames per second, episodes finished, and how many actions the env refused, read back from
the tensordict (`action_rejected`, with the masks TorchRL passed on; 0 when the masks arrive intact).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path
from typing import Any, Sequence

import gymnasium
import numpy as np

import teamenvs
from teamenvs.wrappers import FlatInfo, MaskInInfo


def masked_random_policy(groups: Sequence[Any], seed: int) -> Any:
    """A TorchRL policy (tensordict in, tensordict out) drawing each row's action uniformly among its masked-in
    actions, for the tensordict keys `groups` (a multi-agent group name, or None for a single-agent env)."""
    import torch

    generator = torch.Generator().manual_seed(seed)

    def policy(td: Any) -> Any:
        for group in groups:
            mask = td.get((group, "action_mask") if group else "action_mask")
            weights = mask.to(torch.float32) + 1e-12 * (~mask.any(-1, keepdim=True))  # a row with no action: any
            action = torch.multinomial(weights.reshape(-1, weights.shape[-1]), 1, generator=generator).reshape(mask.shape[:-1])
            td.set((group, "action") if group else "action", action)
        return td

    return policy


def _count(td: Any, key: Any) -> int:
    """How many entries of `key` are true (or their sum); a key TorchRL did not record is an error, not a 0."""
    if key not in td.keys(True, True):
        raise KeyError(f"the rollout has no {key!r}: {sorted(map(str, td.keys(True, True)))}")
    return int(td.get(key).sum())


def multi_agent_row(env_id: str, frames: int, seed: int) -> list[str]:
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    env = PettingZooWrapper(FlatInfo(MaskInInfo(teamenvs.make(env_id, obs_type="vector", action_type="discrete"))),
                            use_mask=True, return_state=True, seed=seed)
    check_env_specs(env, seed=seed)
    groups = list(env.group_map)
    start = time.perf_counter()
    td = env.rollout(frames, policy=masked_random_policy(groups, seed), break_when_any_done=False)
    wall = time.perf_counter() - start
    # an agent's refusal is reported in the info of the step after its action, as TorchRL records it under "next"
    refused = sum(_count(td, ("next", g, "info", "action_rejected")) for g in groups)
    acted = sum(_count(td, (g, "info", "needs_action")) for g in groups)
    episodes = _count(td, ("next", "done"))
    env.close()
    return [env_id, "multi-agent (PettingZooWrapper)", "passed", f"{frames:,}", f"{frames / wall:,.0f}", f"{episodes}",
            f"{acted:,}", f"{refused}", ", ".join(f"{g} ({len(a)})" for g, a in env.group_map.items())]


def single_agent_row(env_id: str, frames: int, seed: int) -> list[str]:
    import torch

    from torchrl.data import Unbounded
    from torchrl.envs.gym_like import default_info_dict_reader
    from torchrl.envs.libs.gym import GymWrapper
    from torchrl.envs.utils import check_env_specs

    # actions as indices (TorchRL's default for a Discrete space is one-hot vectors)
    env = GymWrapper(gymnasium.make(teamenvs.spec(env_id).gym_id, obs_type="vector", action_type="discrete"),
                     categorical_action_encoding=True)
    # the view's info is flat already; its two flags are read into the tensordict (the mask comes with the observation)
    flags = ["needs_action", "action_rejected"]

    class FlagReader(default_info_dict_reader):  # its default reads a `dtype`, which Python's bools lack
        def __call__(self, info: dict[str, Any], td: Any) -> Any:
            return super().__call__({k: np.asarray(info[k]) for k in flags}, td)

    env.set_info_dict_reader(FlagReader(flags, spec={k: Unbounded((), dtype=torch.bool) for k in flags}))
    env.set_seed(seed)
    check_env_specs(env, seed=seed)
    start = time.perf_counter()
    td = env.rollout(frames, policy=masked_random_policy([None], seed), break_when_any_done=False)
    wall = time.perf_counter() - start
    refused = _count(td, ("next", "action_rejected"))
    episodes = _count(td, ("next", "done"))
    acted = _count(td, "needs_action")
    env.close()
    return [env_id, "single-agent view (GymWrapper)", "passed", f"{frames:,}", f"{frames / wall:,.0f}", f"{episodes}",
            f"{acted:,}", f"{refused}", "the learner"]


HEADER = ["env", "way in", "check_env_specs", "frames", "frames/s", "episodes ended", "actions taken", "refused",
          "groups (agents)"]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=2000, help="frames collected per env and way in")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="comma-separated env ids (default: every env)")
    parser.add_argument("--out", type=Path, help="also write the table (markdown) here")
    args = parser.parse_args(argv)
    try:
        import torch
        import torchrl
    except ImportError as exc:
        raise SystemExit(f"this benchmark needs torch and torchrl ({exc}): pip install -e \".[rl]\"") from None
    warnings.filterwarnings("ignore")
    env_ids = [e for e in args.only.split(",") if e] or teamenvs.list_envs()
    rows = []
    for env_id in env_ids:
        for row in (multi_agent_row, single_agent_row):
            rows.append(row(env_id, args.frames, args.seed))
            print(" | ".join(rows[-1]), flush=True)
    table = "\n".join(["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)] + ["| " + " | ".join(r) + " |" for r in rows])
    note = f"torch {torch.__version__}, torchrl {torchrl.__version__}, numpy {np.__version__}; seed {args.seed}"
    print(f"\n{table}\n\n{note}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(f"{table}\n\n{note}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
