"""Every env through TorchRL: its spec check, and frames collected with masked random actions; and masked PPO
trained with TorchRL's own modules on the single-agent view.

    pip install -e ".[rl]"            # torch and torchrl, never needed by the tests
    python -m benchmarks.rl_torchrl [--frames 2000] [--out results/rl/torchrl.md]
    python -m benchmarks.rl_torchrl --train day_trader --steps 61440 --out results/rl/torchrl

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

`--train TASK` trains PPO the way TorchRL's tutorials do, on the task of `benchmarks.rl_ppo` (one learner
against scripted teammates): `GymWrapper` with index actions, an MLP actor whose logits go through
`MaskedCategorical` with the view's `action_mask`, a value MLP, `Collector`, `GAE` and
`ClipPPOLoss`, with the hyperparameters `benchmarks.rl_ppo` gives `MaskablePPO`. It is evaluated as
`benchmarks.rl_ppo` evaluates (the same held-out seeds, the deterministic masked policy, the masked
random policy and the best fixed strategy beside it) and writes `<out>/<task>.json` and
`<out>/<task>_curve.png`.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path
from typing import Any, Sequence

import gymnasium
import numpy as np

import teamenvs
from teamenvs.cli import COUNT, SEED
from benchmarks import rl_ppo
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


def train(task: str, steps: int, out: Path, seed: int = 0, eval_every: int = 2048, eval_episodes: int = 5,
          reward_scale: float | None = None) -> dict[str, Any]:
    """Masked PPO with TorchRL on `benchmarks.rl_ppo`'s task; returns (and writes) its result and curve."""
    import torch
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.data import LazyTensorStorage, ReplayBuffer, SamplerWithoutReplacement
    from torchrl.envs import Compose, DTypeCastTransform, RewardScaling, TransformedEnv
    from torchrl.envs.libs.gym import GymWrapper
    from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

    spec = rl_ppo.TASKS[task]
    scale = reward_scale if reward_scale is not None else rl_ppo.REWARD_SCALE[task]
    torch.manual_seed(seed)
    env = TransformedEnv(
        GymWrapper(gymnasium.make(spec["gym_id"], agent=spec["agent"], teammates=spec["teammates"], obs_type="vector",
                                  action_type="discrete"), categorical_action_encoding=True),
        # MaskedCategorical takes a bool mask; the view's is int8, as Gymnasium's MultiBinary
        Compose(DTypeCastTransform(torch.int8, torch.bool, in_keys=["action_mask"]), RewardScaling(loc=0.0, scale=scale)))
    env.set_seed(seed)
    size, n = env.observation_spec["observation"].shape[-1], env.action_spec.space.n

    def mlp(outputs: int) -> nn.Module:  # stable-baselines3's default MlpPolicy body: two layers of 64, tanh
        return nn.Sequential(nn.Linear(size, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, outputs))

    logits = mlp(n)
    actor = ProbabilisticActor(TensorDictModule(logits, in_keys=["observation"], out_keys=["logits"]),
                               in_keys={"logits": "logits", "mask": "action_mask"}, out_keys=["action"],
                               distribution_class=MaskedCategorical, return_log_prob=True, spec=env.action_spec)
    critic = ValueOperator(mlp(1), in_keys=["observation"])
    batch, minibatch, epochs = 2048, 256, 10
    collector = Collector(env, actor, frames_per_batch=batch, total_frames=steps)
    buffer = ReplayBuffer(storage=LazyTensorStorage(batch), sampler=SamplerWithoutReplacement(), batch_size=minibatch)
    advantage = GAE(gamma=0.99, lmbda=0.95, value_network=critic, average_gae=True)
    # stable-baselines3's PPO loss: advantages normalised per minibatch, squared value error, Adam with eps 1e-5
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01, critic_coeff=0.5, loss_critic_type="l2",
                       normalize_advantage=True)
    optimiser = torch.optim.Adam(loss.parameters(), lr=3e-4, eps=1e-5)

    eval_env = rl_ppo.make_env(task)
    eval_seeds = [10_000 + i for i in range(eval_episodes)]
    random_score, fixed_score = rl_ppo.reference_scores(task, eval_env, eval_seeds, seed)

    def choose(observation: np.ndarray, mask: np.ndarray) -> int:  # deterministic: the likeliest allowed action
        with torch.no_grad():
            scores = logits(torch.as_tensor(observation, dtype=torch.float32))
        return int(torch.where(torch.as_tensor(mask, dtype=torch.bool), scores, -torch.inf).argmax())

    def evaluate() -> float:
        return float(np.mean([rl_ppo.episode_return(eval_env, choose, s) for s in eval_seeds]))

    start = time.perf_counter()
    curve = [(0, evaluate(), 0.0)]
    frames, next_eval = 0, eval_every
    for data in collector:
        frames += data.numel()
        with torch.no_grad():
            advantage(data)  # once per batch, before its epochs, as stable-baselines3
        buffer.extend(data.reshape(-1))
        for _ in range(epochs):  # each epoch draws every frame once (sampling without replacement)
            for _ in range(batch // minibatch):
                losses = loss(buffer.sample())
                total = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optimiser.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optimiser.step()
        collector.update_policy_weights_()
        if frames >= next_eval:
            curve.append((frames, evaluate(), time.perf_counter() - start))
            next_eval += eval_every
    collector.shutdown()
    wall = time.perf_counter() - start
    result = {"task": task, "teammates": spec["teammates"], "learner": "TorchRL PPO",
              "env_steps": frames, "wall_s": round(wall, 1), "final": curve[-1][1], "random": random_score,
              "best_fixed": fixed_score, "best_fixed_label": spec["fixed_label"], "curve": curve, "seed": seed,
              "eval_seeds": eval_seeds, "reward_scale": scale}
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{task}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    rl_ppo.plot(result, out / f"{task}_curve.png")
    print(f"{task} vs {spec['teammates']}: {frames:,} env steps in {wall:.0f} s; TorchRL PPO {result['final']:,.1f}, "
          f"random {random_score:,.1f}, {spec['fixed_label']} {fixed_score:,.1f}")
    return result


HEADER = ["env", "way in", "check_env_specs", "frames", "frames/s", "episodes ended", "actions taken", "refused",
          "groups (agents)"]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=COUNT, default=2000, help="frames collected per env and way in")
    parser.add_argument("--seed", type=SEED, default=0)
    parser.add_argument("--only", default="", help="comma-separated env ids (default: every env)")
    parser.add_argument("--out", type=Path, help="also write the table (markdown) here; with --train, the folder of the results")
    parser.add_argument("--train", choices=sorted(rl_ppo.TASKS), help="train masked PPO on this task instead (see above)")
    parser.add_argument("--steps", type=COUNT, default=61_440, help="--train: learner env steps (30 batches of 2,048)")
    args = parser.parse_args(argv)
    unknown = [e for e in args.only.split(",") if e and e not in teamenvs.list_envs()]
    if unknown:
        parser.error(f"--only: unknown env id(s) {', '.join(map(repr, unknown))}; registered: {', '.join(teamenvs.list_envs())}")
    try:
        import torch
        import torchrl
    except ImportError as exc:
        raise SystemExit(f"this benchmark needs torch and torchrl ({exc}): pip install -e \".[rl]\"") from None
    warnings.filterwarnings("ignore")
    if args.train:
        train(args.train, args.steps, args.out or Path("results/rl/torchrl"), seed=args.seed)
        return
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
