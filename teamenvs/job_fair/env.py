"""`job_fair_v0`: the MetaAgents job fair (sections 3.2-3.5, App. C) as a text ParallelEnv.

Recruiters (`recruiter_1`...) assemble their company's team; job seekers (`seeker_1`...,
each a persona whose biography only they see, dealt to the ids anew each episode) look
for a company that fits their skills. Four phases, one after the other (see `rules`):
applications (seekers `apply`, recruiters `think` or `wait`), interviews (the side whose
turn it is says something or ends the interview; a conversation is seen by its two
participants only), decisions (recruiters `hire`, give a `workflow`, `assign`, then
`submit`, or one JSON decision), offers (seekers `accept` or `decline`).

The episode ends after the offers; rewards come then: 1 to a recruiter whose team is right
(the people who joined are a full team for its roles, its workflow is right, and its
assignment gives every step a qualified member and misplaces nobody), 1 to a seeker who
joined a company it is qualified for (a redundant seeker: who joined none). This module is the glue: the rules are in `rules`, the command language in
`commands`, the text in `view`.
"""

from __future__ import annotations

from typing import Any, Hashable, Mapping

from teamenvs.core.commands import Action, ActionError, Situation
from teamenvs.core.env import LAST_ACTION, TeamEnv
from teamenvs.core.rl import Feature
from teamenvs.job_fair.commands import COMMANDS, briefing_situation, candidates, catalogue, command_for, mask_key, parse_in, situation
from teamenvs.job_fair.config import PRESETS, JobFairConfig
from teamenvs.job_fair.metrics import METRIC_BOUNDS, METRIC_GOALS, job_fair_metrics
from teamenvs.job_fair.rules import FairState, agent_ids
from teamenvs.job_fair.view import REFUSALS, build_view, encode, features, frame, narrate, render_view, role_briefing

class JobFairEnv(TeamEnv):
    """Job fair: seekers apply and interview, recruiters hire, design a workflow and assign their hires.

    `game` is the episode's state (`rules.FairState`), set by `reset`.
    """

    env_id = "job_fair_v0"
    commands = COMMANDS
    config_class = JobFairConfig
    presets = PRESETS
    episode_metrics = staticmethod(job_fair_metrics)
    metric_goals = METRIC_GOALS
    metric_bounds = METRIC_BOUNDS
    idle_line = f"{LAST_ACTION}none needed (it was not your turn)."
    situations_outlast_episodes = True  # a situation is a function of the config and _situation_key (which holds the fair's names)
    config: JobFairConfig

    def _agent_ids(self) -> list[str]:
        recruiters, seekers = agent_ids(self.config)
        return recruiters + seekers

    def _setup(self) -> None:
        self.game = FairState(self.config, self._rng)
        self._text_memo: dict[Any, Any] = {}  # render_view's, for this episode

    def _reset_record(self) -> dict[str, Any]:
        game = self.game
        return {"fair": game.fair.to_json(), "people": {a: p.name for a, p in game.persona.items()} | {a: c.recruiter for a, c in game.company.items()}}

    def _is_over(self) -> tuple[bool, bool]:
        return self.game.phase == "done", False

    def _needs_action(self, agent: str) -> bool:
        return self.game.needs_action(agent)

    def _situation_key(self, agent: str) -> Hashable:
        return self.game.situation_key(agent)

    def _situation(self, agent: str) -> Situation:
        return situation(self.game, agent)

    def _briefing_situation(self, agent: str) -> Situation:
        return briefing_situation(self.game, agent)

    def _recipients(self, sender: str, to: str | None) -> list[str]:
        interview = self.game.current.get(sender)
        return [interview.partner(sender)] if interview is not None else []

    def _on_delivered(self, delivery) -> None:
        for message, recipients in delivery:
            self.game.record_message(message.sender, recipients, message.text)

    def _apply(self, actions: Mapping[str, Action | None]) -> dict[str, float]:
        for note in self.game.apply(actions, self.step_count):
            if note["type"] == "refused":
                self.reject(note["agent"], REFUSALS[note["why"]])  # the same check as `_refusal`
                continue
            record, told = narrate(self.game, note, self.agents)
            if record is not None:
                self.global_events.append(record)
            for agent, ev in told:
                self.tell_agent(agent, ev)
        return self.game.final_rewards() if self.game.phase == "done" else {}

    def _mask_parse(self, command: str, situation: Situation) -> Action | ActionError:
        """Parses shared by situations and episodes that read the same (`commands.parse_in`)."""
        return parse_in(command, situation)

    def _refusal(self, agent: str, action: Action) -> str | None:
        why = self.game.refusal(agent, action)
        return None if why is None else REFUSALS[why]

    # numeric observations and discrete actions (teamenvs.core.rl; docs/rl/job_fair_v0.md)
    def _features(self) -> tuple[Feature, ...]:
        return features(self.config)

    def _encode(self, view: Mapping[str, Any]) -> Any:
        return encode(view, self.config)

    def _catalogue(self) -> tuple[str, ...]:
        return catalogue(self.config)

    _command_for = staticmethod(command_for)  # (view, label) -> command; one call less per label of a mask
    _mask_key = staticmethod(mask_key)  # (view) -> the key of its mask within a situation

    def _mask_candidates(self, view: Mapping[str, Any]) -> list[tuple[int, str]]:
        return candidates(view, self.interface.labels)

    def _view(self, agent: str) -> dict[str, Any]:
        game = self.game
        companies = self.once_per_step("companies", game.public_companies) if agent in game.persona else ()
        return build_view(game, agent, self.envelope(agent, show_valid=game.needs_action(agent)), companies)

    def _render_view(self, view: Mapping[str, Any]) -> str:
        return render_view(view, self._text_memo)

    def _state(self) -> dict[str, Any]:
        return self.game.to_json(self.step_count)

    def _render_frame(self) -> str:
        return frame(self.game, self.step_count)

    def _role_briefing(self, agent: str) -> str:
        return role_briefing(self.game, agent)
