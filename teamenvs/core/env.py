"""Base class of every teamenvs environment: a PettingZoo ParallelEnv with text in and text out.

A paradigm subclass supplies its rules through a few hooks (`_setup`, `_situation`,
`_apply`, `_view`, `_render_view`, `_is_over`, ...). The base class owns what every
paradigm shares: the seeded generator, the text spaces, parsing actions with the paradigm's
`CommandSet`, messaging (`say`/`tell`) under the communication conditions, the `info`
schema, recording, and the PettingZoo bookkeeping.

Everything an agent receives is derived from its *view* (`_view(agent)`): the text
observation is `_render_view(view)`, scripted baselines read `info[agent]["view"]`.
"""

from __future__ import annotations

import sys
import warnings
from abc import ABC, abstractmethod
from contextlib import contextmanager
from typing import Any, Callable, ClassVar, Hashable, Iterator, Mapping

import numpy as np
from pettingzoo import ParallelEnv

from teamenvs.core.commands import MEMO_TEXT_CHARS, Action, ActionError, ActionForm, CommandSet, Situation
from teamenvs.core.config import build_config, check_seed
from teamenvs.core.messaging import Conversation, Messenger, event, word_limits
from teamenvs.core.recorder import EpisodeRecorder, header_record
from teamenvs.core.rl import Feature, Interface, integer_of
from teamenvs.core.text import OBSERVATION_MAX_CHARS, Briefing, Observation, excerpt

IGNORED = {"ok": None, "ignored": True}
# A situation's memo keeps the parses of actions sent in it (texts up to commands.MEMO_TEXT_CHARS): random and scripted
# play repeat a few hundred commands. Bounded per situation (the env keeps at most 4,096 situations), so free text
# (messages) cannot grow it without end. (The command set's own recent parses serve an LLM policy's check of the
# text it then sends; without this per-situation memo, which outlasts episodes, random play ran 3-8% slower.)
MEMO_ENTRIES = 512
MAX_SITUATIONS = 4096  # situations an env keeps (`SituationCache`)
# Memo entries (parses and masks) an env keeps over all its situations: without this bound, free text sent in many
# situations filled up to 4,096 x 512 entries (random play of the commons grew by 2.6 MB per 1,000 episodes, to
# 125 MB after 38,000 and still growing); 16,384 entries are about 11 MB, several times what random play of any env
# reuses (DayTrader about 2,000).
MAX_MEMO_TOTAL = 16_384
# How an observation's last-action line begins (`TeamEnv.last_action_line`): the numeric encoders read it back
LAST_ACTION = "Your last action: "  # then the accepted command, " (accepted).", or the idle line's rest
LAST_ACTION_REJECTED = "Your last action was REJECTED"  # then ": " and why
NO_LAST_ACTION = "Your last action: none yet."  # before the agent's first action

__all__ = ["IGNORED", "check_reset", "LAST_ACTION", "LAST_ACTION_REJECTED", "NO_LAST_ACTION", "SituationCache", "TeamEnv",
           "UnknownAgentWarning", "event", "warn_at_caller"]


class UnknownAgentWarning(UserWarning):
    """`step` was sent an action for a name that is no agent of the env (a misspelt agent, say): that action is ignored."""


# packages whose frames `warn_at_caller` passes over: this one and the env libraries' wrappers around its envs
_LIBRARY_PACKAGES = ("teamenvs.", "gymnasium.", "pettingzoo.", "supersuit.")


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """`warnings.warn(message, category)`, said at the first line outside teamenvs and the env libraries' wrappers that
    led here: the user's call of `step`, say. A fixed stack level would count frames the compiled engine's functions do
    not have, and the wrappers a user may or may not have put around the env."""
    frame, level = sys._getframe(0), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_LIBRARY_PACKAGES):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def check_reset(seed: Any, options: Any) -> None:
    """Refuse a reset's arguments that PettingZoo's and Gymnasium's `reset` do not take, with what was wrong (numpy's own
    errors name its internals, and a list of seeds would seed a generator the log's header could not record as one
    seed): `seed` None or a non-negative integer (a numpy integer too; not a bool), `options` None or a mapping."""
    check_seed(seed, "reset(seed=...)")
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"reset(options=...) takes a dict or None, got {excerpt(options)}")


class SituationCache(dict):
    """What an agent may do, per situation key (`TeamEnv._situation_for`): the situation, its forms, their usage line
    and the situation's memo of parses and masks. A cache, so bounded: past `MAX_SITUATIONS` situations or
    `MAX_MEMO_TOTAL` memo entries over all of them it starts afresh, and what it held is worked out again when asked
    (the same forms, parses and masks: each is a function of the situation and the text)."""

    __slots__ = ("memo_entries",)

    def __init__(self) -> None:
        super().__init__()
        self.memo_entries = 0

    def clear(self) -> None:
        super().clear()
        self.memo_entries = 0

    def add(self, key: Hashable, entry: tuple[Situation, tuple[ActionForm, ...], str, dict[str, Any]]) -> None:
        """Keep a new situation's entry."""
        if len(self) >= MAX_SITUATIONS:
            self.clear()
        self[key] = entry

    def remember(self, memo: dict[Any, Any], key: Any, value: Any) -> None:
        """Put `key: value` in `memo`, the memo of one of these situations, within the bound over all of them."""
        if self.memo_entries >= MAX_MEMO_TOTAL:
            self.clear()  # `memo`'s situation goes too: it is worked out again when next asked for
            return
        memo[key] = value
        self.memo_entries += 1


class TeamEnv(Conversation, ParallelEnv, ABC):
    """Shared machinery of the text ParallelEnvs. Subclasses set the class attributes and hooks."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "name": "team_env_v0", "is_parallelizable": True}
    env_id: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("env_id"):  # PettingZoo's metadata name is the env id
            cls.metadata = {**TeamEnv.metadata, "name": cls.env_id}
    commands: ClassVar[CommandSet]
    config_class: ClassVar[type]
    presets: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    agent_prefix: ClassVar[str] = "agent"
    episode_metrics: ClassVar[Any]  # staticmethod: list of log records -> dict of metrics
    metric_goals: ClassVar[dict[str, str]] = {}  # metric -> "max" | "min" (which way is better), for reports
    metric_bounds: ClassVar[dict[str, tuple[float, float]]] = {}  # metric -> (least, most) any episode can give, for figures
    # True where an agent's situation, and the rules' verdict on a command in it, are functions of the config and
    # `_situation_key` alone (the messaging block is added to the key here): the situations worked out so far,
    # with their memos of parsed commands and masks, are then kept across episodes, still exact
    situations_outlast_episodes: ClassVar[bool] = False
    idle_line: ClassVar[str] = f"{LAST_ACTION}none needed (you were busy)."  # after a step without needs_action
    # True where views of later steps hold some of the same read-only parts (`teamenvs.core.view.SharedFacts`): the
    # single-agent Gymnasium view then gives its learner a thawed copy (`teamenvs.core.view.thaw`)
    views_share_parts_across_steps: ClassVar[bool] = False

    def __init__(self, render_mode: str | None = None, preset: str | None = None, obs_type: str = "text",
                 action_type: str = "text", learners: Any = None, **config: Any) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {excerpt(render_mode)}")
        self.render_mode = render_mode
        self.preset = preset
        self.config = build_config(self.config_class, self.presets, preset, config)
        self.possible_agents = list(self._agent_ids())
        self._agent_names = frozenset(self.possible_agents)
        self.agents: list[str] = []
        self.interface = Interface(self, obs_type, action_type, learners)
        self._observation_spaces = self.interface.observation_spaces
        self._action_spaces = self.interface.action_spaces
        self._rng = np.random.default_rng()
        self._recorder: EpisodeRecorder | None = None
        self._was_reset = False
        self.messenger = Messenger(self.possible_agents, self.config)
        self.step_count = 0
        self._step_parts: tuple[int, dict[str, Any]] = (-1, {})  # see `once_per_step`
        self._situations = SituationCache()

    # ------------------------------------------------------------------ hooks for paradigms
    def _agent_ids(self) -> list[str]:
        """Agent ids; by default `<agent_prefix>_1` ... `<agent_prefix>_<n_agents>`."""
        return [f"{self.agent_prefix}_{i}" for i in range(1, self.config.n_agents + 1)]

    @abstractmethod
    def _setup(self) -> None:
        """Build the episode's state from `self._rng` and `self.config`."""
        ...

    @abstractmethod
    def _situation_key(self, agent: str) -> Hashable:
        """A key such that equal keys mean equal `_situation(agent)` (for caching valid actions)."""
        ...

    @abstractmethod
    def _situation(self, agent: str) -> Situation:
        """What `agent` may do now (phase denials, live argument limits, names)."""
        ...

    @abstractmethod
    def _apply(self, actions: dict[str, Action | None]) -> dict[str, float]:
        """Carry out this step's well-formed actions (None: none given); return rewards.

        Use `self.reject(agent, why)` for a well-formed action the rules refuse and
        `self.tell_agent(agent, event)` / `self.global_events` to report what happened.
        Messages are already handled by the base class.
        """
        ...

    @abstractmethod
    def _view(self, agent: str) -> dict[str, Any]:
        """The dict of everything `agent` may know now; every observation is derived from it."""

    @abstractmethod
    def _render_view(self, view: Mapping[str, Any]) -> str:
        """The text observation for a view (a function of the view alone)."""

    @abstractmethod
    def _is_over(self) -> tuple[bool, bool]:
        """(terminated, truncated) for the whole team."""
        ...

    @abstractmethod
    def _state(self) -> dict[str, Any]:
        """The omniscient global state, JSON-ready."""

    @abstractmethod
    def _render_frame(self) -> str:
        """The human-readable ansi frame of the whole state."""

    @abstractmethod
    def _role_briefing(self, agent: str) -> str:
        """The role and rules part of `agent`'s briefing, in the paradigm's words."""

    def _needs_action(self, agent: str) -> bool:
        return True

    # numeric observations and discrete actions (teamenvs.core.rl): None means "text only"
    def _features(self) -> tuple[Feature, ...] | None:
        """The feature table of the numeric observation (from the paradigm's `view.features`)."""
        return None

    def _encode(self, view: Mapping[str, Any]) -> Any:
        """The numeric observation of a view, slot by slot as `_features` declares."""
        raise TypeError(f"{self.env_id} has no numeric observation")

    def _catalogue(self) -> tuple[str, ...] | None:
        """The discrete action labels, index 0 the no-op (from the paradigm's `commands.catalogue`)."""
        return None

    def _command_for(self, view: Mapping[str, Any], label: str) -> str | None:
        """The command a catalogue label stands for in this view, or None when it is impossible now."""
        raise TypeError(f"{self.env_id} has no discrete actions")

    def _mask_candidates(self, view: Mapping[str, Any]) -> list[tuple[int, str]]:
        """(index, command) of each catalogue label that stands for a command in this view (`_command_for` not None),
        in index order: what a mask checks against the rules. A paradigm may give them all at once, working out
        once what its labels share."""
        command_for = self._command_for
        return [(i, command) for i, label in enumerate(self.interface.labels) if (command := command_for(view, label)) is not None]

    def _refusal(self, agent: str, action: Action) -> str | None:
        """Why the rules would refuse this well-formed action now (None: they would carry it out)."""
        return None

    def _mask_key(self, view: Mapping[str, Any]) -> Hashable | None:
        """A key of the view such that, within one situation (`_situation_key` and the messaging
        block), equal keys give the same action mask and commands, so a mask is worked out once
        per (situation, key); None: work it out every time (the default)."""
        return None

    def accepts(self, agent: str, command: str) -> bool:
        """Whether `command` parses in `agent`'s situation now and the rules would carry it out."""
        offered = self._offered.get(agent)
        if offered is None:
            return False
        parsed = offered[3]
        action = parsed.get(command)
        if action is None:
            action = self._mask_parse(command, offered[0])
            self._situations.remember(parsed, command, action)  # within the bound over all situations' memos
        return isinstance(action, Action) and self._refusal(agent, action) is None

    def _mask_parse(self, command: str, situation: Situation) -> Action | ActionError:
        """How `accepts` parses a command: the command set's parser (a paradigm may share parses across
        situations with a `teamenvs.core.commands.ParseMemo`)."""
        return self.commands.parse(command, situation)

    def _extra_info(self, agent: str) -> dict[str, Any]:
        return {}

    def _reset_record(self) -> dict[str, Any]:
        """Extra fields of the log's reset line (hidden setup worth recording)."""
        return {}

    # ------------------------------------------------------------------ PettingZoo API
    def observation_space(self, agent: str) -> Any:
        try:
            return self._observation_spaces[agent]
        except (KeyError, TypeError):  # (an unhashable agent) a KeyError, as PettingZoo's envs raise, that says why
            raise KeyError(self._unknown_agent(agent)) from None

    def action_space(self, agent: str) -> Any:
        try:
            return self._action_spaces[agent]
        except (KeyError, TypeError):
            raise KeyError(self._unknown_agent(agent)) from None

    def _unknown_agent(self, agent: Any) -> str:
        return f"unknown agent {excerpt(agent)}; agents are {', '.join(self.possible_agents)}"

    def _warn_unknown_agents(self, actions: Mapping[str, Any]) -> None:
        """A warning naming the keys of `actions` that are no agent of this env: their actions are ignored. `step` never
        raises for what it is sent (a hostile action gets its error in the agent's next observation), but a misspelt
        agent has no observation to tell, and its action used to be dropped without a word."""
        unknown = [key for key in actions if key not in self._agent_names]
        named = ", ".join(excerpt(key) for key in unknown[:3]) + (f" and {len(unknown) - 3:,} more" if len(unknown) > 3 else "")
        warn_at_caller(f"step() ignored the action(s) for {named}: no agent of this env (agents are "
                       f"{', '.join(self.possible_agents)})", UnknownAgentWarning)

    def _check_agent(self, agent: Any) -> None:
        """A ValueError naming the agents, for an agent that is not one of them."""
        if not isinstance(agent, str) or agent not in self.possible_agents:
            raise ValueError(self._unknown_agent(agent))

    def reset(self, seed: int | None = None, options: dict | None = None):
        check_reset(seed, options)  # before anything changes: a refused reset leaves the env as it was
        if self._recorder is not None:
            self._recorder.begin(self, seed)  # (refuses a log that holds an episode already)
        self._was_reset = True
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self.step_count = 0
        self.renew_step_parts()
        self.messenger.reset()
        self._situations = self.__dict__.setdefault("_lasting_situations", SituationCache()) if self.situations_outlast_episodes else SituationCache()
        self._messages_cache: dict[str, tuple[int, dict[str, tuple[str, ...]], int]] = {}
        self._last_action: dict[str, dict[str, Any] | None] = {a: None for a in self.agents}
        self._decided: dict[str, dict[str, Any]] = {}  # agent -> what became of its last decision (its last step's action)
        self._events: dict[str, list[dict[str, Any]]] = {a: [] for a in self.agents}
        self.global_events: list[dict[str, Any]] = []
        self.reset_options = dict(options or {})
        self._setup()
        observations, infos = self._observe()
        if self._recorder is not None:
            self._recorder.write(header_record(self, seed))
            self._recorder.write({"type": "reset", "step": 0, "agents": {a: {"observation": self._texts[a]} for a in self.agents},
                                  **self._reset_record()})
        return observations, infos

    def step(self, actions: Mapping[str, Any]):
        if not self._was_reset:
            self._check_reset("step")
        if not self.agents:
            return {}, {}, {}, {}, {}
        if type(actions) is not dict and not isinstance(actions, Mapping):  # (typing.Mapping checks slowly)
            raise TypeError(f"step() takes a dict agent -> action string, got {type(actions).__name__}")
        if not self._agent_names.issuperset(actions):  # (one pass over the keys, in C)
            self._warn_unknown_agents(actions)
        if self._recorder is not None and self._recorder.holder != id(self):
            self._recorder.check_holds(self)  # raises: a recorder attached mid-episode, or holding another env's episode
        actions = self.interface.as_text(actions)
        self._events = {a: [] for a in self.agents}
        self.global_events = []
        parsed: dict[str, Action | None] = {}
        self._last_action = {}
        for agent in self.agents:
            offered = self._offered[agent]
            if offered is None:
                parsed[agent] = None
                self._last_action[agent] = dict(IGNORED)
                continue
            if agent not in actions:
                result: Action | ActionError = ActionError("no action was received from you this step", "missing")
            else:
                # a command already parsed in this situation (by an action mask, or sent before) is not parsed again
                text = actions[agent]
                memo = offered[3].get(text) if type(text) is str else None
                if memo is not None:
                    result = memo
                else:
                    result = self.interface.parse(self, agent, text, offered[0])
                    if type(text) is str and len(text) <= MEMO_TEXT_CHARS and len(offered[3]) < MEMO_ENTRIES:
                        self._situations.remember(offered[3], text, result)  # parsing reads only the text and the situation
            parsed[agent] = result if isinstance(result, Action) else None
            self._last_action[agent] = self._decided[agent] = result.to_json()
        for agent, action in parsed.items():
            if action is not None and action.command in ("say", "tell"):
                self._send(agent, action)
        rewards = self._apply(parsed)
        self.messenger.deliver()
        if self.messenger.last_delivery:
            self._on_delivered(self.messenger.last_delivery)
        self.step_count += 1
        terminated, truncated = self._is_over()
        observations, infos = self._observe(final=terminated or truncated)
        live = list(self.agents)
        terminations = {a: terminated for a in live}
        truncations = {a: truncated and not terminated for a in live}
        rewards = {a: float(rewards.get(a, 0.0)) for a in live}
        if self._recorder is not None:
            self._recorder.write_step(self, self._texts, actions, rewards, terminated or truncated)
        if terminated or truncated:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        self._check_reset("render")
        return self._render_frame()

    def _check_reset(self, called: str) -> None:
        if not self._was_reset:
            raise RuntimeError(f"{self.env_id}: {called}() was called before reset(); call env.reset(seed=...) first")

    def state(self) -> Any:
        """The omniscient global state as a dict (for analysis and replay, never given to agents); with
        numeric observations, the array `state_space` describes (every agent's observation vector)."""
        self._check_reset("state")
        return self._state() if self.interface.features is None else self.interface.state()

    @property
    def state_space(self) -> Any:
        """The space of `state()` with numeric observations (None with text observations)."""
        return self.interface.state_space

    def action_text(self, agent: str, index: int) -> str | None:
        """The command discrete action `index` stands for now for `agent` (None: not available now)."""
        self._check_agent(agent)
        value = integer_of(index)
        if value is None:
            raise TypeError(f"a discrete action is an integer index, got {type(index).__name__}")
        return self.interface.command_now(agent, value)

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ recording
    @property
    def recorder(self) -> EpisodeRecorder | None:
        """The recorder the env writes its log lines to (set with `recording`)."""
        return self._recorder

    def record_to(self, recorder: EpisodeRecorder | None) -> EpisodeRecorder | None:
        """Write this env's log (header, reset and step lines) to `recorder` from now on (None: stop);
        returns the recorder it replaces."""
        previous, self._recorder = self._recorder, recorder
        return previous

    @contextmanager
    def recording(self, recorder: EpisodeRecorder | None) -> Iterator[EpisodeRecorder | None]:
        """`record_to(recorder)` inside the block only:

            with env.recording(EpisodeRecorder("ep.jsonl")) as rec:
                env.reset(seed=0); ...
        """
        previous = self.record_to(recorder)
        try:
            yield recorder
        finally:
            self.record_to(previous)

    # ------------------------------------------------------------------ helpers for paradigms
    @property
    def np_random(self) -> np.random.Generator:
        return self._rng

    def envelope(self, agent: str, *, show_valid: bool = True) -> dict[str, Any]:
        """The part of every view that every paradigm shares: who and when, what became of the
        agent's last action, this step's events, and the commands valid now (none when `show_valid`
        is false, e.g. the episode is over)."""
        events = self._events[agent]
        return {
            "agent": agent,
            "step": self.step_count,
            "last_action": self.last_action_line(agent),
            "events": tuple([e["text"] for e in events if e["text"]]) if events else (),  # most steps have none
            "valid_now": self.valid_now(agent) if show_valid else "",
        }

    def once_per_step(self, name: str, make: Callable[[], Any]) -> Any:
        """`make()`, worked out once per step of the episode under `name`: for a part that every agent's view of the
        step holds as one read-only object (`teamenvs.core.view.SharedFacts`), built by the first view and shared by
        the others. Parts of one step are never those of another, so no view of a later step holds them."""
        step, parts = self._step_parts
        if step != self.step_count:
            parts = {}
            self._step_parts = (self.step_count, parts)
        if name not in parts:
            parts[name] = make()
        return parts[name]

    def renew_step_parts(self) -> None:
        """Forget this step's `once_per_step` parts: what they show changed within the step (the next view builds them
        again)."""
        self._step_parts = (-1, {})

    def briefing(self, agent: str) -> Briefing:
        """The text a policy is given at reset: role, rules, commands and the answer format (a `str`
        whose parts stay at hand, see `teamenvs.core.text.Briefing`)."""
        self._check_agent(agent)
        return Briefing(self._role_briefing(agent), self.commands.grammar(self._briefing_situation(agent)))

    def _briefing_situation(self, agent: str) -> Situation:
        return Situation(names={"agent": tuple(a for a in self.possible_agents if a != agent)})

    def reject(self, agent: str, why: str) -> None:
        """Mark `agent`'s well-formed action of this step as refused by the rules."""
        previous = self._last_action.get(agent) or {}
        self._last_action[agent] = self._decided[agent] = ActionError(why, "rejected", previous.get("command")).to_json()

    def tell_agent(self, agent: str, ev: dict[str, Any]) -> None:
        """Add an event to `agent`'s events of this step (shown in its next observation)."""
        self._events[agent].append(ev)

    def valid_now(self, agent: str) -> str:
        """The command forms `agent` may use now, as one line for its observation."""
        offered = self._offered.get(agent)
        return offered[2] if offered is not None else "nothing (you are busy)"

    def _situation_for(self, agent: str) -> tuple[Situation, tuple[ActionForm, ...], str, dict[str, Any]]:
        talks = "say" in self.commands.commands
        blocked = self.messenger.blocked(agent, self.step_count) if talks else None
        key = (self._situation_key(agent), blocked)
        cached = self._situations.get(key)
        if cached is None:
            situation = self._situation(agent)
            words = word_limits(self.messenger.conditions) if talks else None  # (the same for every situation of the env)
            if blocked is not None or words:
                denied = dict(situation.denied)
                for name in ("say", "tell"):
                    if blocked is not None and name in self.commands.commands and name not in denied:
                        denied[name] = blocked
                situation = Situation(denied, {**situation.limits, **words} if words else situation.limits, situation.names,
                                      situation.limit_reasons, situation.choices)
            forms = self.commands.forms(situation)
            # the last item memoizes, in this situation, parses of catalogue commands and action masks (core.rl)
            cached = (situation, forms, " | ".join(f.usage for f in forms) or "nothing (wait for your turn)", {})
            self._situations.add(key, cached)
        return cached

    def _observe(self, final: bool = False) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        observations: dict[str, Any] = {}
        infos: dict[str, dict[str, Any]] = {}
        agents = self.agents
        needs_action, situation_for = self._needs_action, self._situation_for
        # What each agent is offered now; its next action is parsed against exactly this. Nothing at the episode's end:
        # no agent has a decision left (its text says none, and so do its info and its mask)
        self._offered = offered_now = {a: (situation_for(a) if not final and needs_action(a) else None) for a in agents}
        # the text is rendered unless nothing reads it (a learner's numeric observation, no log)
        logged = self._recorder is not None
        interface = self.interface
        needs_text, deferred, observe = interface.needs_text, interface.deferred, interface.observe
        view_of, observation_text = self._view, self._observation_text
        extra_info = self._extra_info if type(self)._extra_info is not TeamEnv._extra_info else None
        last_action, events = self._last_action, self._events
        self._texts = texts = {}
        for agent in agents:
            offered = offered_now[agent]
            if offered is None and agent in deferred and not (logged or final):
                # a deferred agent with nothing to decide (a learner between its decisions, a baseline teammate that is
                # busy) mid-episode: nobody reads this step's view, so it is built only if `observe_now` asks for it,
                # before the next step (at the end of an episode `step` changes `agents` after this: every view is built)
                view = text = None
            else:
                view = view_of(agent)
                text = observation_text(view) if logged or (needs_text(agent) and agent not in deferred) else None
            info = {
                "view": view,
                "valid_actions": offered[1] if offered is not None else (),
                "needs_action": offered is not None,
                "last_action": last_action[agent],
                "events": events[agent],
            }
            if extra_info is not None:
                extra = extra_info(agent)
                if extra:
                    info.update(extra)
            texts[agent] = text
            observations[agent] = None if agent in deferred else observe(self, agent, text, view, info)
            infos[agent] = info
        self._infos = infos
        return observations, infos

    def observe_now(self, agent: str) -> Any:
        """`agent`'s observation of the last reset or step, built now; for a learner whose observation was deferred
        (`interface.deferred`), this also adds its action mask to its info of that step. The same observation the
        step would have given: it is made from the view that step built (or, where the step left it out, from the
        view built now, before any other step, of the state that step left), in the situation it left."""
        self._check_reset("observe_now")
        self._check_agent(agent)
        info = self._infos[agent]
        if info["view"] is None:  # left out of the step (see `_observe`): the state is still the one that step left
            info["view"] = self._view(agent)
        if self._texts[agent] is None and self.interface.needs_text(agent):
            self._texts[agent] = self._observation_text(info["view"])
        return self.interface.observe(self, agent, self._texts[agent], info["view"], info)

    def _observation_text(self, view: Mapping[str, Any]) -> Observation:
        """The text observation of a view, cut at `OBSERVATION_MAX_CHARS`."""
        text = self._render_view(view)
        if len(text) > OBSERVATION_MAX_CHARS:
            text = text[: OBSERVATION_MAX_CHARS - 20] + "\n[observation cut]"
        return Observation(text)

    def last_action_line(self, agent: str) -> str:
        """One line telling the agent what became of its last action: after a step in which it had nothing to decide,
        the idle line while it still has nothing to decide, and at its next decision what became of its last one (a
        policy asked only at its decisions, an LLM's or a learner's, would else never read that its action was
        refused when its turn passed, or it was busy, right after it). An action sent while the agent had nothing to
        decide is ignored, and changes no line: only decisions are reported (`info["last_action"]` marks the step)."""
        last = self._last_action.get(agent)
        if last is None:
            return NO_LAST_ACTION
        if last.get("ignored"):
            if not self._needs_action(agent):  # (not `_offered`, which offers nothing at the episode's end)
                return self.idle_line
            last = self._decided.get(agent)
            if last is None:  # no decision yet
                return self.idle_line
        if last["ok"]:
            return f"{LAST_ACTION}{last['text']} (accepted)."
        return f"{LAST_ACTION_REJECTED}: {last['error']}"
