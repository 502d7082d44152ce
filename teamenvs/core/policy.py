"""Policies at the env layer: the `Policy` protocol, scripted baselines' base class, the random
policy, and `make_policies`, which finds each paradigm's baselines through its declaration.

A policy is reset with its agent id and the env's briefing for that agent, then asked for
one action string per step it needs to act: `act(observation, info)` or, in the step loop,
`await aact(observation, info)`. Policies that want something logged beside their action
(a rationale, model usage) put it in `last_extras` after acting.

Fairness rule: a scripted policy decides from `info["view"]` and `info["valid_actions"]`
only, exactly what an LLM agent reads as text; it never touches the env.

These live in `teamenvs` (not `agents`) because every paradigm ships its baselines in its
own folder; `agents` re-exports them beside the LLM policies and the step loop.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from teamenvs.core.config import check_seed
from teamenvs.core.text import close_match, quote


@runtime_checkable
class Policy(Protocol):
    """What the step loop needs from an agent."""

    def reset(self, agent_id: str, briefing: str) -> None: ...

    def act(self, observation: str, info: Mapping[str, Any]) -> str: ...

    async def aact(self, observation: str, info: Mapping[str, Any]) -> str: ...


class SyncPolicy(ABC):
    """Base for policies that decide synchronously; `aact` simply calls `act`."""

    agent_id: str = ""
    briefing: str = ""

    def __init__(self) -> None:
        self.last_extras: dict[str, Any] = {}

    def reset(self, agent_id: str, briefing: str) -> None:
        self.agent_id = agent_id
        self.briefing = briefing

    @abstractmethod
    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        """The action string for this observation."""

    async def aact(self, observation: str, info: Mapping[str, Any]) -> str:
        return self.act(observation, info)


class ScriptedPolicy(SyncPolicy):
    """A baseline that maps the agent's view to a command string."""

    name = "scripted"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__()
        self.rng = np.random.default_rng(seed)

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        return self.decide(info["view"], info)

    @property
    def reads_observation(self) -> bool:
        """Whether `act` reads the text observation: not for a baseline that decides in `decide` (from the view and
        the valid forms), so an env may leave its text unrendered (the single-agent view does); a subclass that
        overrides `act` is taken to read it."""
        return type(self).act is not ScriptedPolicy.act

    @abstractmethod
    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        """The command to send, from the view and the forms valid now."""

    @staticmethod
    def allowed(info: Mapping[str, Any], command: str) -> bool:
        """Whether `command` is among the forms valid now."""
        return any(form.command == command for form in info["valid_actions"])


class RandomPolicy(ScriptedPolicy):
    """Picks a valid command form uniformly, then its arguments uniformly, with its own seeded generator."""

    name = "random"

    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        forms = info["valid_actions"]
        if not forms:
            return "wait"
        return forms[int(self.rng.integers(len(forms)))].sample(self.rng)


def _paradigm(env_id: str):
    from teamenvs.registry import paradigms

    return next((p for p in paradigms() if p.env_id == env_id), None)


def baselines(env_id: str) -> dict[str, type[ScriptedPolicy]]:
    """Baseline policy classes for `env_id` by name (always including `random`)."""
    paradigm = _paradigm(env_id)
    found: dict[str, type[ScriptedPolicy]] = dict(paradigm.load_baselines().BASELINES) if paradigm else {}
    found["random"] = RandomPolicy
    return found


def default_baseline(env_id: str) -> str:
    """The name `kind="scripted"` stands for in `env_id`."""
    paradigm = _paradigm(env_id)
    return paradigm.load_baselines().DEFAULT if paradigm else "random"


def agent_seed(seed: int | None, index: int) -> int | None:
    """An independent seed for agent number `index`, derived from the episode seed."""
    if seed is None:
        return None
    return int(np.random.SeedSequence([int(seed), index]).generate_state(1)[0])


def check_own_policies(policies: Mapping[str, Any], agents: Sequence[str], env: Any = None) -> None:
    """A ValueError unless each of `agents` has a policy object of its own, and a memory of its own where its policy has
    one (an LLM policy's `memory`): a policy keeps its agent's id, briefing and history (`reset(agent, briefing)`), so
    one object for two agents plays both with the last one's; and a memory shared by two agents' policies lets each
    retrieve what the other saw, private messages included. Given the `env`, also unless each policy was made for
    it (`check_policies_fit`)."""
    first_agent: dict[int, str] = {}
    for agent in agents:
        first = first_agent.setdefault(id(policies[agent]), agent)
        if first != agent:
            raise ValueError(f"the policy of {quote(agent)} is the same object as the policy of {quote(first)}: each "
                             f"agent needs its own, as it keeps its agent's briefing and history (make one per agent)")
    first_memory: dict[int, str] = {}
    for agent in agents:
        memory = getattr(policies[agent], "memory", None)
        first = agent if memory is None else first_memory.setdefault(id(memory), agent)
        if first != agent:
            raise ValueError(f"the policies of {quote(first)} and {quote(agent)} share one memory object: each would "
                             f"retrieve what the other saw, private messages included; give each agent a memory of its own "
                             f"(make_llm_policies(memory=True) does)")
    if env is not None:
        check_policies_fit(policies, agents, env.unwrapped)


def check_policies_fit(policies: Mapping[str, Any], agents: Sequence[str], env: Any) -> None:
    """A ValueError unless each policy of `agents` can play in `env`:

    - a paradigm's baseline plays in its own paradigm only: DayTrader's `tit_for_tat` in the commons died of a bare
      KeyError ('can_invest') at its first decision;
    - a policy that reads actions in a command language of its own (an LLM policy's `commands`, with which it checks
      its replies) must read this env's: one made for another paradigm refused every action its language lacked
      ("unknown command 'harvest 10'. Valid now: invest individual ...", sent back to the model as a repair), and one
      made for another config (other amounts, another team) checks against the wrong bounds and names."""
    from teamenvs.registry import paradigms

    available = baselines(env.env_id)
    own = set(available.values())
    for agent in agents:
        kind = type(policies[agent])
        if issubclass(kind, ScriptedPolicy) and kind not in own:
            home = next((p.env_id for p in paradigms() if kind in p.load_baselines().BASELINES.values()), None)
            if home is not None:
                raise ValueError(f"the policy of {quote(agent)} is {home}'s {quote(kind.name)} baseline, which decides from "
                                 f"{home}'s views; this env is {env.env_id} (its baselines: scripted, {', '.join(available)})")
    language = env.commands.language()
    for agent in agents:
        theirs = getattr(policies[agent], "commands", None)
        if theirs is None or theirs is env.commands or not hasattr(theirs, "language") or theirs.language() == language:
            continue
        their_names, our_names = [name for name, _ in theirs.language()], [name for name, _ in language]
        how = (f"({', '.join(their_names)}) where this env's is ({', '.join(our_names)})" if their_names != our_names
               else "(the same commands with other arguments: another config's amounts, agents or names)")
        raise ValueError(f"the policy of {quote(agent)} reads actions in another command language {how}: it would check "
                         f"its replies against the wrong commands (refusing valid actions, or taking some the env refuses); "
                         f"make the policies for this env (make_llm_policies(env, ...))")


def make_policies(env: Any, kind: str | Mapping[str, str] = "scripted", seed: int | None = None) -> dict[str, ScriptedPolicy]:
    """One scripted policy per agent of `env`.

    `kind` is "scripted" (the env's default baseline), "random", a baseline name, a
    comma-separated list of names (one per agent, in `env.possible_agents` order), or a
    mapping agent -> name (unnamed agents get the default baseline).
    """
    check_seed(seed, "make_policies(seed=...)")
    env_id = getattr(env.unwrapped, "env_id", "")
    available = baselines(env_id)
    agents = list(env.possible_agents)
    if isinstance(kind, Mapping):
        unknown = set(kind) - set(agents)
        if unknown:
            raise ValueError(f"unknown agents {sorted(unknown)} in policy mapping; agents are {agents}")
        names = [kind.get(a, "scripted") for a in agents]
    elif isinstance(kind, str) and "," in kind:
        names = [k.strip() for k in kind.split(",")]
        if len(names) != len(agents):
            raise ValueError(f"{len(names)} policy names given for {len(agents)} agents ({', '.join(agents)})")
    elif isinstance(kind, str):
        names = [kind] * len(agents)
    else:
        raise TypeError(f"kind must be a string or a mapping agent -> name, got {type(kind).__name__}")
    policies: dict[str, ScriptedPolicy] = {}
    for i, (agent, name) in enumerate(zip(agents, names)):
        resolved = default_baseline(env_id) if name == "scripted" else name
        if resolved == "llm":  # a kind of the command line's --policy, which needs a model, not a baseline
            raise ValueError("'llm' policies need a model and an endpoint: build them with "
                             "agents.llm.make_llm_policies(env, model, base_url=...) and pass them as a dict agent -> policy")
        if resolved not in available:
            close = close_match(str(resolved), ["scripted", *available])
            hint = f" Did you mean '{close}'?" if close else ""
            raise ValueError(f"unknown baseline {quote(str(name))} for {env_id}.{hint} Available: scripted, {', '.join(available)}")
        policies[agent] = available[resolved](seed=agent_seed(seed, i))
    return policies
