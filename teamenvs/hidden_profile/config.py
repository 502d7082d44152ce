"""Hidden Profile's configuration: which profile is played, the discussion's length, the
communication conditions, and CollabSim's two conditions as presets.

Choices the paper leaves open (CollabSim App. B.3 gives 3 agents, a 300 s discussion between two
votes, and 15 words per message under `communication_bandwidth`):

- **Discussion length.** 30 steps, the 300 s at CollabSim's 10 s per agent turn (the Shape Factory
  setup of App. B.1), so 32 steps in all with the two votes.
- **Private messages.** The paper's agents share one group chat (Table 10: "Communication Level: group
  chat"), so `tell` is refused in the presets (`private_messages=False`), as DayTrader's paper presets
  refuse it; the `private_messages` condition allows it (the hidden-profile issue's list of commands).
- **The whole discussion stays in view** (`message_history=100`): a member reads the group chat from its
  start, as in a chat window, not only the last few lines.
"""

from __future__ import annotations

from dataclasses import dataclass

from teamenvs.core.config import ConfigError, setting
from teamenvs.core.messaging import MessagingConditions
from teamenvs.core.text import excerpt
from teamenvs.hidden_profile.materials import GENERATED, PROFILE_IDS, profile_members

MAX_CANDIDATES = 5  # the letters A-E; the numeric observation and the catalogue have a slot per letter


@dataclass(frozen=True)
class HiddenProfileConfig(MessagingConditions):
    """Hidden Profile parameters and conditions (defaults: CollabSim's BASELINE with the airline profile)."""

    n_agents: int = setting(3, low=2, high=4, doc="number of members (the shipped profiles are for 3; 'generated' profiles for 2-4)")
    profile: str = setting(
        "airline_captain", choices=(*PROFILE_IDS, GENERATED),
        doc="the hidden profile played: a shipped one, or 'generated' (a new one from the episode's seed each reset)",
    )
    candidates: int = setting(3, low=3, high=4, doc="candidates of a generated profile (shipped profiles have 3)")
    discussion_turns: int = setting(30, low=1, high=200, doc="discussion steps between the two votes (300 s at 10 s a turn)")
    private_messages: bool = setting(False, doc="whether members may `tell` one member privately (else every message is broadcast, "
                                                "the paper's group chat)")
    message_history: int = setting(100, low=0, high=1_000_000, doc="messages kept in view: the whole discussion by default")

    def _check(self) -> None:
        members = profile_members(self.profile)
        if members is not None and self.n_agents != members:
            raise ConfigError(f"profile {excerpt(self.profile)} is written for {members} members, got n_agents={self.n_agents} "
                              f"(use profile='{GENERATED}' for other group sizes)")


PRESETS: dict[str, dict[str, object]] = {
    # CollabSim Table 1 / App. B.3
    "baseline": {},
    "communication_bandwidth": {"max_words": 15},
    # the other shipped profiles and fresh generated ones (combine: "generated+communication_bandwidth")
    "school_principal": {"profile": "school_principal"},
    "software_team_lead": {"profile": "software_team_lead"},
    "generated": {"profile": GENERATED},
    # a reading kept as a condition: private messages beside the group chat
    "private_messages": {"private_messages": True},
}
