"""Hidden Profile's rules as pure functions: the phases by step, votes, and their outcome.

CollabSim (App. B.3, Table 10) runs three phases by step: step 1 is the initial vote, the steps
between are the group discussion, the last step is the final vote. A member votes with
`decide <candidate>` in the two voting steps only (or abstains by waiting); the votes stay private
until the episode ends. The candidate with the strictly highest support on the pooled information
is the best one (see `materials`); a member's reward is 1 at the final vote if it voted for it.
"""

from __future__ import annotations

from typing import Mapping

from teamenvs.core.rounds import Phase
from teamenvs.hidden_profile.config import HiddenProfileConfig

INITIAL_VOTE = "initial_vote"
DISCUSSION = "discussion"
FINAL_VOTE = "final_vote"
VOTES = (INITIAL_VOTE, FINAL_VOTE)
DECIDE = "decide"
WAIT = "wait"


def schedule(config: HiddenProfileConfig) -> tuple[Phase, ...]:
    """The initial vote, `discussion_turns` discussion steps, the final vote (`Phase.turn` counts discussion turns)."""
    talk = tuple(Phase(DISCUSSION, 1, t) for t in range(1, config.discussion_turns + 1))
    return (Phase(INITIAL_VOTE, 1), *talk, Phase(FINAL_VOTE, 2))


def vote_refusal(candidate: str, candidates: tuple[str, ...], phase_kind: str) -> str | None:
    """Why a vote for `candidate` is refused now (None: it counts)."""
    if phase_kind not in VOTES:
        return "votes are cast only in the initial and the final vote; this is the discussion"
    if candidate not in candidates:
        return f"there is no candidate {candidate}; the candidates are {', '.join(candidates)}"
    return None


def majority(votes: Mapping[str, str | None]) -> str | None:
    """The candidate more than half of all members voted for (abstentions count as members), else None."""
    counts: dict[str, int] = {}
    for v in votes.values():
        if v is not None:
            counts[v] = counts.get(v, 0) + 1
    for candidate, n in counts.items():
        if 2 * n > len(votes):
            return candidate
    return None


def vote_rewards(final: Mapping[str, str | None], best: str) -> dict[str, float]:
    """1 to each member whose final vote is the best candidate, else 0."""
    return {a: float(v == best) for a, v in final.items()}
