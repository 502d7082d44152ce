"""The Gymnasium single-agent view of a team env: one learner, teammates driven by policies.

    import gymnasium, teamenvs
    env = gymnasium.make("teamenvs/DayTrader-v0", agent="trader_1", teammates="defector")
    obs, info = env.reset(seed=0)

`teammates` is a baseline kind ("scripted" by default, "random", a baseline name, a comma
list, a mapping agent -> name; unnamed teammates play the default) or a mapping teammate ->
policy object, one for each teammate. A mapping never names the learner, nor mixes names with
objects; the view says so when it is made. A policy object plays in one view's episode at a time
(a reset refuses one still playing elsewhere): the copies in a vector env each need their own,
made in the env function. With `log_dir`, each episode is written to a `.jsonl.gz` log of its own
there (`<env id>_<learner>_seed<N>`, or `..._episode<N>` after a reset without a seed), which
`teamenvs replay` shows. `obs_type` and
`action_type` pick the learner's interface as in `teamenvs.make` (numeric observations, discrete
actions with their mask); the teammates get text observations whatever the learner's interface
(the team env is made with `learners=(agent,)`), as their policies expect.

With `skip_idle=True` (the default), steps in which the learner need not act (busy, not its
turn) are played by the teammates alone and their rewards for the learner are summed into the
step's reward: one learner step may cover several env steps, a semi-MDP. `info["env_steps"]`
says how many env steps the learner step covered (and `info["skipped_steps"]` how many of them
the learner had nothing to decide); its `last_action` (`action_rejected` in a flat info) is what became of the
learner's action, and so is the last-action line of its next observation. A reward for the learner in steps before its
first decision comes with its first step's. With `skip_idle=False` every env step is a learner step;
in idle ones the learner's action is ignored (`info["needs_action"]` is false).

With numeric observations `info` is flat (needs_action, action_rejected, action_mask, env_steps,
skipped_steps), so that Gymnasium's vector envs can stack it; with text observations it is the
team env's full info (view, valid_actions, ...) plus the step counts. The view's structure changes
from step to step (a last round appears, ...), which Gymnasium's vector envs cannot stack: vectorise
text observations with `flat_info=True` (`teamenvs.wrappers.make_async` does).

`gymnasium.make` wraps the view in a `TimeLimit` of the default config's episode length
(`max_episode_steps` of the registration); a config with longer episodes (more rounds, a larger
`max_steps`) needs `max_episode_steps=...` (or -1) too, and the view warns once if it was cut short.
"""

from __future__ import annotations

import functools
import os
import weakref
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Iterator, Mapping

import gymnasium

from teamenvs.core.config import check_flag
from teamenvs.core.env import check_reset, warn_at_caller
from teamenvs.core.metrics import episode_metrics
from teamenvs.core.recorder import EpisodeRecorder, claim_log_name, step_records
from teamenvs.core.rl import flat_info
from teamenvs.core.text import excerpt, quote
from teamenvs.core.view import thaw
from teamenvs.registry import make


# Teammate policy objects of live episodes, by id: (the policy, the view playing it), both weakly held. One object in
# the episodes of two views at once (a SyncVectorEnv whose env function hands every copy the same mapping) would play
# both with one history.
_PLAYING: dict[int, tuple[weakref.ref, weakref.ref]] = {}


class SingleAgentEnv(gymnasium.Env):
    """One agent of a multi-agent team env as a `gymnasium.Env` with text observations and actions."""

    metadata = {"render_modes": ["ansi"]}
    # The learner's observation (its text, vector and mask) is built only for the env step that ends a learner step,
    # not for the skipped steps in between, whose observations nobody reads (the same observation either way: see
    # `TeamEnv.observe_now`; a log still gets every step's text), and teammates whose policies do not read their
    # observation (`reads_observation` false: the baselines) get None. Nor is the view of either built in a step
    # where it has nothing to decide (its info's `view` is None there). False: every observation built every env step.
    defer_skipped_observations = True

    def __init__(
        self,
        env_id: str,
        agent: str | None = None,
        teammates: str | Mapping[str, Any] = "scripted",
        render_mode: str | None = None,
        obs_type: str = "text",
        action_type: str = "text",
        skip_idle: bool = True,
        flat_info: bool | None = None,
        log_dir: str | os.PathLike | None = None,
        **config: Any,
    ) -> None:
        if log_dir is not None and not isinstance(log_dir, (str, os.PathLike)):
            raise ValueError(f"log_dir must be a folder's path or None, got {excerpt(log_dir)}")
        if "learners" in config:  # (the team env's own option; here `agent` is the learner)
            raise ValueError(f"the single-agent view has one learner, agent={excerpt(agent)}: pass agent=... instead of "
                             f"learners={excerpt(config['learners'])} (learners is teamenvs.make's option for the multi-agent env)")
        check_flag("skip_idle", skip_idle)
        if flat_info is not None:
            check_flag("flat_info", flat_info)
        self.team_env = make(env_id, render_mode=render_mode, **config)
        self.skip_idle = bool(skip_idle)
        agents = self.team_env.possible_agents
        self.agent = agent if agent is not None else agents[0]
        if self.agent not in agents:
            raise ValueError(f"unknown agent {excerpt(self.agent)} for {env_id}; agents are {', '.join(agents)}")
        if obs_type != "text" or action_type != "text":
            # the learner alone gets the numeric interface: the teammates' policies read text, and nobody pays
            # for encoding and masking observations that no learner reads
            self.team_env = make(env_id, render_mode=render_mode, obs_type=obs_type, action_type=action_type,
                                 learners=(self.agent,), **config)
        # flat: numbers only, the same keys every step (what vector envs stack); by default with numeric observations
        self.flat_info = (obs_type != "text") if flat_info is None else bool(flat_info)
        self._episode_live, self._learner_steps, self._time_limit_said = False, 0, False
        self.teammates_spec = teammates
        self.log_dir = None if log_dir is None else Path(log_dir)
        self._episodes = 0  # episodes begun, for the logs' names
        self._check_teammates()
        self.render_mode = render_mode
        self.observation_space = self.team_env.observation_space(self.agent)
        self.action_space = self.team_env.action_space(self.agent)
        self._teammates: dict[str, Any] = {}
        self._unread: frozenset[str] = frozenset()
        self._reward_before = 0.0

    def _check_teammates(self) -> None:
        """Refuse, when the view is made, a teammate spec its first reset would refuse or quietly misread: a mapping
        naming no agent of the env, or the learner (whose policy would never play: the Gymnasium agent plays it), or
        mixing baseline names with policy objects; then make the teammates once, so a misspelt baseline is named now."""
        spec, agents = self.teammates_spec, list(self.team_env.possible_agents)
        if isinstance(spec, Mapping):
            unknown = [excerpt(a) for a in spec if a not in agents]
            if unknown:
                raise ValueError(f"teammates names agents the env does not have: {', '.join(unknown)}; agents are {', '.join(agents)}")
            if self.agent in spec:
                raise ValueError(f"teammates maps the learner {quote(self.agent)}, whose actions come from the Gymnasium "
                                 f"agent, not a policy: leave it out (teammates are {', '.join(a for a in agents if a != self.agent)})")
            named = [isinstance(v, str) for v in spec.values()]
            if any(named) and not all(named):
                raise ValueError("teammates maps agents to baseline names or to policy objects, not both: make the "
                                 "named ones with teamenvs.core.policy.make_policies and give objects for all")
        self._make_teammates(None)

    def _make_teammates(self, seed: int | None) -> dict[str, Any]:
        from teamenvs.core.policy import check_own_policies, make_policies

        others = [a for a in self.team_env.possible_agents if a != self.agent]
        spec = self.teammates_spec
        if isinstance(spec, Mapping) and spec and not any(isinstance(v, str) for v in spec.values()):
            missing = [a for a in others if a not in spec]
            if missing:
                raise ValueError(f"no teammate policy for {', '.join(missing)} (teammates maps agents to policy objects: "
                                 f"give one for each of {', '.join(others)})")
            check_own_policies(spec, others, self.team_env)
            return {a: spec[a] for a in others}
        policies = make_policies(self.team_env, spec, seed=seed)
        return {a: policies[a] for a in others}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        check_reset(seed, options)  # before the view or its teammates change
        self._claim_teammates()
        super().reset(seed=seed)
        if self.log_dir is not None:
            self._next_log(seed)
        if self._episode_live and self._learner_steps and self._learner_steps == self._registered_limit():
            self._warn_time_limit()
        # without a seed (a vector env's autoreset) the teammates' seeds come from the view's own generator, seeded
        # by the last reset with a seed, so that a seeded run stays reproducible episode after episode
        self._teammates = self._make_teammates(seed if seed is not None else int(self.np_random.integers(2**31)))
        # teammates whose policies never read their text observation (the baselines) get none: nothing renders it
        self._unread = frozenset(a for a, p in self._teammates.items() if not getattr(p, "reads_observation", True))
        self.team_env.interface.deferred = self._unread if self.defer_skipped_observations else frozenset()
        observations, infos = self.team_env.reset(seed=seed, options=options)
        for agent, policy in self._teammates.items():
            policy.reset(agent, self.team_env.briefing(agent))
            bind = getattr(policy, "bind_rules", None)
            if bind is not None:  # as agents.run_episode does: constrained decoding may ask the rules, as a mask does
                bind(functools.partial(self.team_env.accepts, agent))
        self._obs, self._infos = observations, infos
        steps, self._reward_before = 0, 0.0
        if self.skip_idle:
            with self._deferring():
                # (a reward for the learner in the steps before its first decision is paid with its first step's)
                self._reward_before, _, _, steps = self._advance_teammates()
        self._episode_live, self._learner_steps = bool(self.team_env.agents), 0
        return self._obs[self.agent], self._learner_info(steps, steps)

    def _claim_teammates(self) -> None:
        """Refuse a teammate policy object that plays in another view's live episode (its history would mix both
        episodes'), then mark this view's objects as playing here. Baseline names are made anew for each view."""
        spec = self.teammates_spec
        if not isinstance(spec, Mapping) or any(isinstance(v, str) for v in spec.values()):
            return
        for agent, policy in spec.items():
            held = _PLAYING.get(id(policy))
            other = held[1]() if held is not None and held[0]() is policy else None
            if other is not None and other is not self and other._episode_live:
                raise ValueError(f"the teammate policy of {quote(agent)} plays in another view's episode, which is not over: "
                                 f"each view needs policy objects of its own (in a vector env, make the teammates inside "
                                 f"the env function), or close the other view first")
        for key in [k for k, (policy, view) in _PLAYING.items() if policy() is None or view() is None]:
            del _PLAYING[key]  # (gone objects: their ids may be reused)
        for policy in spec.values():
            try:
                _PLAYING[id(policy)] = (weakref.ref(policy), weakref.ref(self))
            except TypeError:  # an object that cannot be weakly referenced is not tracked
                pass

    def _next_log(self, seed: int | None) -> None:
        """A log of its own for the episode about to begin (a log holds one episode), in `log_dir`:
        `<env id>_<learner>_seed<N>.jsonl.gz`, or `..._episode<N>` for a reset without a seed (a vector env's
        autoreset), made unique with `-2`, `-3`, ... where the name is taken (a vector env's copies share the folder)."""
        self._close_log()
        self._episodes += 1
        name = f"{self.team_env.env_id}_{self.agent}_" + (f"seed{seed}" if seed is not None else f"episode{self._episodes}")
        claimed = claim_log_name(self.log_dir, name, ".jsonl.gz")
        self.team_env.record_to(EpisodeRecorder(self.log_dir / f"{claimed}.jsonl.gz", keep="metrics"))

    def _close_log(self, ended: bool = False) -> None:
        """Close the episode's log; with `ended` (the team's episode is over), after its `end` line (every agent's
        return and the episode's metrics, as `agents.run_episode` writes them), so that it reads as complete."""
        recorder = self.team_env.record_to(None) if self.log_dir is not None else None
        if recorder is None:
            return
        if ended:
            records = recorder.records  # (the metrics views of its lines, kept for this)
            returns = dict.fromkeys(self.team_env.possible_agents, 0.0)
            for record in step_records(records):
                for agent, entry in record["agents"].items():
                    returns[agent] += entry["reward"]
            recorder.write({"type": "end", "steps": self.team_env.step_count, "returns": returns,
                            "metrics": episode_metrics(records)})
        recorder.close()

    def close(self) -> None:
        """End the episode (its teammates may then play in another view), close its log and the team env."""
        self._episode_live = False
        self._close_log()
        self.team_env.close()
        super().close()

    def _registered_limit(self) -> int | None:
        """The `max_episode_steps` Gymnasium registered this view's id with (None: made without `gymnasium.make`)."""
        if self.spec is None:
            return None
        try:
            return gymnasium.spec(self.spec.id).max_episode_steps
        except gymnasium.error.Error:
            return None

    def _warn_time_limit(self) -> None:
        # Gymnasium's TimeLimit wraps the view from outside with the length of the default config's episodes; a config
        # with longer ones is cut there, and only the view can notice (its team's episode was still going)
        if not self._time_limit_said:
            self._time_limit_said = True
            warn_at_caller(
                f"{self.spec.id}: the last episode was cut after {self._learner_steps} learner steps, the time limit "
                f"Gymnasium registered for the default config, while the team's episode went on; this config's "
                f"episodes are longer: pass max_episode_steps=... to gymnasium.make (-1: no limit, the env ends its "
                f"own episodes)", UserWarning)

    @contextmanager
    def _deferring(self) -> Iterator[None]:
        """Inside the block the learner's observations (text, vector, mask) are left out (`Interface.deferred`); at
        its end the last one is built (`TeamEnv.observe_now`)."""
        interface = self.team_env.interface
        if not self.defer_skipped_observations:
            yield
            return
        interface.deferred = self._unread | {self.agent}
        try:
            yield
        finally:
            interface.deferred = self._unread
        if self._obs.get(self.agent, ...) is None:
            self._obs[self.agent] = self.team_env.observe_now(self.agent)

    def briefing(self) -> str:
        """The learner's briefing (role, rules, commands)."""
        return self.team_env.briefing(self.agent)

    def _teammate_actions(self) -> dict[str, str]:
        return {
            a: p.act(self._obs[a], self._infos[a])
            for a, p in self._teammates.items()
            if a in self.team_env.agents and self._infos[a]["needs_action"]
        }

    def _step_team(self, actions: dict[str, Any]) -> tuple[float, bool, bool]:
        observations, rewards, terminations, truncations, infos = self.team_env.step(actions)
        self._obs, self._infos = observations, infos
        return rewards.get(self.agent, 0.0), terminations.get(self.agent, False), truncations.get(self.agent, False)

    def _advance_teammates(self) -> tuple[float, bool, bool, int]:
        """Step while the learner has nothing to do; returns its reward, end flags and the steps taken."""
        total, terminated, truncated, steps = 0.0, False, False, 0
        while self.team_env.agents and not self._infos[self.agent]["needs_action"]:
            reward, terminated, truncated = self._step_team(self._teammate_actions())
            total += reward
            steps += 1
        return total, terminated, truncated, steps

    def _learner_info(self, env_steps: int, skipped: int, acted: Mapping[str, Any] | None = None) -> dict[str, Any]:
        full = self._infos.get(self.agent, {})
        if acted is not None and skipped:
            # the learner step's `last_action` is what became of the learner's action, in the first of its env steps,
            # not the idle mark of the last one (the observation's last-action line says the same: `last_action_line`)
            full = {**full, "last_action": acted}
        if not self.flat_info:
            info = {**full, "env_steps": env_steps, "skipped_steps": skipped}
            if self.team_env.views_share_parts_across_steps and info.get("view") is not None:
                info["view"] = thaw(info["view"])  # its read-only parts, which later views hold too, as the learner's own
            return info
        # a flat info of numbers and arrays, which vector envs can stack (the view's nested, step-varying
        # structure is for text and scripted policies)
        info = flat_info(full)
        mask = info.pop("action_mask", None)  # kept last, where it has always been
        info["env_steps"], info["skipped_steps"] = env_steps, skipped
        if mask is not None:
            info["action_mask"] = mask
        return info

    def step(self, action: Any):
        if not self.team_env.agents:
            raise RuntimeError("the episode is over; call reset()")
        actions = self._teammate_actions()
        actions[self.agent] = action
        skipped = 0
        reward_before, self._reward_before = self._reward_before, 0.0
        with self._deferring() if self.skip_idle else nullcontext():
            reward, terminated, truncated = self._step_team(actions)
            acted = self._infos[self.agent]["last_action"] if self.agent in self._infos else None
            if self.skip_idle and not (terminated or truncated):
                more, terminated, truncated, skipped = self._advance_teammates()
                reward += more
            if reward_before:
                reward += reward_before
        self._episode_live, self._learner_steps = bool(self.team_env.agents), self._learner_steps + 1
        if not self._episode_live:
            self._close_log(ended=True)  # the episode's log complete as soon as it is over
        return self._obs[self.agent], reward, terminated, truncated, self._learner_info(1 + skipped, skipped, acted)

    def render(self) -> str | None:
        return self.team_env.render()
