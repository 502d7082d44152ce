"""`hidden_profile_v0`: CollabSim's Hidden Profile task as a text ParallelEnv.

Glue only: the env picks the episode's profile (`materials`), deals each member its document (shared
facts and its unique ones, shuffled by the seeded generator so their order does not tell which are
which), walks the schedule of initial vote, discussion and final vote (`rules`), keeps votes private
until the end, and builds and renders each member's view with `view`.
"""

from __future__ import annotations

import re
from typing import Any, Hashable, Mapping

from teamenvs.core.commands import Action, Situation
from teamenvs.core.rl import Feature
from teamenvs.core.rounds import ScheduledGame
from teamenvs.hidden_profile.commands import (
    COMMANDS,
    briefing_situation,
    candidates,
    catalogue,
    command_for,
    letter_of,
    mask_key,
    situation,
)
from teamenvs.hidden_profile.config import PRESETS, HiddenProfileConfig
from teamenvs.hidden_profile.materials import Profile, any_of, episode_profile, support
from teamenvs.hidden_profile.metrics import METRIC_BOUNDS, METRIC_GOALS, hidden_profile_metrics
from teamenvs.hidden_profile.rules import DECIDE, FINAL_VOTE, INITIAL_VOTE, VOTES, majority, schedule, vote_refusal, vote_rewards
from teamenvs.hidden_profile.view import (
    Item,
    briefing,
    encode,
    features,
    frame,
    item_of,
    member_view,
    render,
    results_view,
    vote_event,
    votes_event,
)


class HiddenProfileEnv(ScheduledGame):
    """Hidden Profile: members vote, pool their partial candidate documents in a discussion, and vote again."""

    env_id = "hidden_profile_v0"
    commands = COMMANDS
    config_class = HiddenProfileConfig
    presets = PRESETS
    agent_prefix = "member"
    episode_metrics = staticmethod(hidden_profile_metrics)
    metric_goals = METRIC_GOALS
    metric_bounds = METRIC_BOUNDS
    # a situation is a function of the config and _situation_key, and so is the rules' one refusal (`vote_refusal`)
    situations_outlast_episodes = True
    config: HiddenProfileConfig

    # ------------------------------------------------------------------ episode state
    def _setup(self) -> None:
        cfg = self.config
        self.schedule = schedule(cfg)
        self.profile: Profile = episode_profile(cfg.profile, self._rng, cfg.n_agents, cfg.candidates)
        self.documents: dict[str, tuple[Item, ...]] = {a: self._deal(k) for k, a in enumerate(self.agents, start=1)}
        self.votes: dict[str, dict[str, str | None]] = {"initial": {}, "final": {}}
        self.surfaced: frozenset[str] = frozenset()  # unique facts a message has stated or paraphrased (replay only)
        self._spotters = {f.id: (f.text.lower(), re.compile(f.pattern, re.IGNORECASE) if f.pattern else None)
                          for f in self.profile.facts if f.unique}
        self._any_pattern = any_of(pattern for _, pattern in self._spotters.values() if pattern is not None)

    def _deal(self, holder: int) -> tuple[Item, ...]:
        """Member `holder`'s document: per candidate its strengths then its weaknesses, each in a seeded order."""
        facts = self.profile.document(holder)
        order = self._rng.permutation(len(facts))
        shuffled = sorted((facts[int(i)] for i in order), key=lambda f: (f.candidate, -f.valence))
        return tuple(item_of(f) for f in shuffled)

    @property
    def over(self) -> bool:
        return self.step_count >= len(self.schedule)

    def _is_over(self) -> tuple[bool, bool]:
        return self.over, False

    def _reset_record(self) -> dict[str, Any]:
        return {"profile": self.profile.to_json(), "documents": {a: [list(i) for i in d] for a, d in self.documents.items()}}

    # ------------------------------------------------------------------ what a member may do
    def _situation_key(self, agent: str) -> Hashable:
        return agent, self.phase.kind, self.profile.candidates

    def _situation(self, agent: str) -> Situation:
        others = tuple(a for a in self.possible_agents if a != agent)
        return situation(self.config, self.phase.kind, others, self.profile.candidates)

    def _briefing_situation(self, agent: str) -> Situation:
        others = tuple(a for a in self.possible_agents if a != agent)
        return briefing_situation(self.config, others, self.profile.candidates)

    # ------------------------------------------------------------------ rules
    def _apply(self, actions: Mapping[str, Action | None]) -> dict[str, float]:
        kind = self.phase.kind
        if kind not in VOTES:
            return {}
        which = "initial" if kind == INITIAL_VOTE else "final"
        cast: dict[str, str | None] = {}
        for agent in self.agents:
            action = actions.get(agent)
            vote = letter_of(action.args["candidate"]) if action is not None and action.command == DECIDE else None
            if vote is not None:
                refusal = vote_refusal(vote, self.profile.candidates, kind)
                if refusal is not None:  # never with parsed actions: the situation's names are the same rule
                    self.reject(agent, refusal)
                    vote = None
            cast[agent] = vote
            self.tell_agent(agent, vote_event(which, agent, vote))
        self.votes[which] = cast
        best = self.profile.best
        self.global_events.append(votes_event(which, cast, best, majority(cast)))
        return vote_rewards(cast, best) if kind == FINAL_VOTE else {}

    def _refusal(self, agent: str, action: Action) -> str | None:
        if action.command != DECIDE:  # wait and messages: no rule beyond parsing
            return None
        return vote_refusal(letter_of(action.args["candidate"]), self.profile.candidates, self.phase.kind)

    def _on_delivered(self, delivery: tuple[tuple[Any, tuple[str, ...]], ...]) -> None:
        found = set(self.surfaced)
        for message, _ in delivery:
            text = message.text.lower()
            # most messages match no mention pattern: one search for any of them spares trying each alone
            patterned = self._any_pattern is None or self._any_pattern.search(message.text) is not None
            for fact_id, (words, pattern) in self._spotters.items():
                if fact_id not in found and (words in text or (patterned and pattern is not None and pattern.search(message.text))):
                    found.add(fact_id)
        self.surfaced = frozenset(found)

    # ------------------------------------------------------------------ numeric observations and discrete actions
    def _features(self) -> tuple[Feature, ...]:
        return features(self.config)

    def _encode(self, view: Mapping[str, Any]) -> Any:
        return encode(view, self.config)

    def _catalogue(self) -> tuple[str, ...]:
        return catalogue(self.config)

    def _command_for(self, view: Mapping[str, Any], label: str) -> str | None:
        return command_for(view, label)

    def _mask_key(self, view: Mapping[str, Any]) -> tuple:
        return mask_key(view)

    def _mask_candidates(self, view: Mapping[str, Any]) -> list[tuple[int, str]]:
        return candidates(view)

    # ------------------------------------------------------------------ views and text
    def _results(self) -> dict[str, Any] | None:
        if not self.over:
            return None
        final = self.votes["final"]
        return results_view(self.votes["initial"], final, self.profile.best, majority(final))

    def _view(self, agent: str) -> dict[str, Any]:
        return member_view(
            self.envelope(agent, show_valid=not self.over),
            self.config,
            self.phase,
            self.over,
            len(self.schedule),
            self.profile,
            tuple(self.possible_agents),
            self.documents[agent],
            (self.votes["initial"].get(agent), self.votes["final"].get(agent)),
            self._results(),
            self.messages_view(agent),
        )

    def _render_view(self, view: Mapping[str, Any]) -> str:
        return render(view)

    def _role_briefing(self, agent: str) -> str:
        return briefing(agent, self.config, self.profile, len(self.possible_agents), len(self.schedule))

    # ------------------------------------------------------------------ global views
    def _phase_name(self) -> str:
        return "over" if self.over else self.phase.kind

    def _state(self) -> dict[str, Any]:
        profile = self.profile
        return {
            "step": self.step_count,
            "phase": self._phase_name(),
            "profile": profile.id,
            "best": profile.best,
            "support_full": support(profile.facts, profile.candidates),
            "support_own": {a: support(profile.document(k), profile.candidates) for k, a in enumerate(self.possible_agents, start=1)},
            "votes": {w: dict(v) for w, v in self.votes.items()},
            "surfaced": sorted(self.surfaced),
        }

    def frame(self) -> dict[str, Any]:
        """JSON-ready drawing data of the whole task now (for replay viewers): each member's facts, votes,
        and which unique facts have surfaced in the discussion."""
        profile = self.profile
        members = {}
        for k, a in enumerate(self.possible_agents, start=1):
            facts = [{"id": f.id, "candidate": f.candidate, "valence": f.valence, "unique": f.unique, "surfaced": f.id in self.surfaced,
                      "text": f.text} for f in profile.document(k)]
            members[a] = {"facts": facts, "initial": self.votes["initial"].get(a), "final": self.votes["final"].get(a)}
        return {"kind": "hidden_profile", **self._state(), "max_steps": len(self.schedule), "title": profile.title,
                "candidates": list(profile.candidates), "members": members}

    def _render_frame(self) -> str:
        return frame(self.step_count, len(self.schedule), self._phase_name(), self.profile, self.documents, self.votes, self.surfaced)
