"""Hidden Profile's commands (`decide <candidate>`, `wait`, `say`, `tell`), what a member may do in each
phase, and the discrete action catalogue (a vote per letter, sharing a fact of one's document by index)."""

from __future__ import annotations

from typing import Any, Mapping

from teamenvs.core.commands import Command, CommandSet, NameArg, Situation
from teamenvs.core.messaging import SAY, TELL
from teamenvs.core.rl import NOOP
from teamenvs.hidden_profile.config import MAX_CANDIDATES, HiddenProfileConfig
from teamenvs.hidden_profile.materials import LETTERS
from teamenvs.hidden_profile.rules import DECIDE, DISCUSSION, VOTES, WAIT
from teamenvs.hidden_profile.view import MAX_FACTS, document_key, fact_message, first_fresh

COMMANDS = CommandSet(
    [
        Command(
            DECIDE,
            (NameArg("candidate", "candidate"),),
            "vote for a candidate (only in the initial and the final vote; votes stay private until the end)",
            ("decide A",),
        ),
        Command(WAIT, (), "do nothing this turn (in a vote: abstain)", ("wait",)),
        SAY,
        TELL,
    ]
)

NO_PRIVATE_MESSAGES = "there are no private messages in this condition: every message goes to the whole group (use 'say')"


def candidate_names(candidates: tuple[str, ...]) -> tuple[str, ...]:
    """The names `decide` accepts: the letters, and 'Candidate A' ... as well."""
    return (*candidates, *(f"Candidate {c}" for c in candidates))


def letter_of(name: str) -> str:
    """The candidate's letter from a parsed `decide` argument ('C' or 'Candidate C')."""
    return name.rsplit(" ", 1)[-1]


def situation(config: HiddenProfileConfig, phase_kind: str, others: tuple[str, ...], candidates: tuple[str, ...]) -> Situation:
    """What a member may do in a phase of `phase_kind`."""
    names = {"agent": others, "candidate": candidate_names(candidates)}
    if phase_kind in VOTES:
        which = "the initial" if phase_kind == VOTES[0] else "the final"
        reason = f"this is {which} vote: messages are sent in the discussion between the votes"
        return Situation({"say": reason, "tell": reason}, {}, names)
    denied = {DECIDE: "votes are cast only in the initial and the final vote; this is the discussion"}
    if not config.private_messages:
        denied["tell"] = NO_PRIVATE_MESSAGES
    return Situation(denied, {}, names)


def briefing_situation(config: HiddenProfileConfig, others: tuple[str, ...], candidates: tuple[str, ...]) -> Situation:
    """The situation the briefing lists commands for: `tell` only when private messages are allowed."""
    denied = {} if config.private_messages else {"tell": NO_PRIVATE_MESSAGES}
    return Situation(denied, names={"agent": others, "candidate": candidate_names(candidates)})


# ---------------------------------------------------------------------- the discrete action catalogue (RL)
NEW_FACT = "share a fact not yet discussed"
_DECIDE = {f"{DECIDE} {c}": c for c in LETTERS[:MAX_CANDIDATES]}
_SHARE = {f"share fact {k}": k - 1 for k in range(1, MAX_FACTS + 1)}


def catalogue(config: HiddenProfileConfig) -> tuple[str, ...]:
    """The discrete action labels (the same for every member and every condition; index 0 the no-op):
    a vote per letter, the first fact of one's document not yet discussed, and fact k of one's document."""
    return (NOOP, *_DECIDE, NEW_FACT, *_SHARE)


_NEW_FACT_INDEX = 1 + len(_DECIDE)  # NEW_FACT's index in the catalogue; fact k's follow it


def mask_key(view: Mapping[str, Any]) -> tuple:
    """What `command_for` reads from a view: equal keys give the same commands (see `TeamEnv._mask_key`).
    In the discussion that is the document (as `document_key`) and its first line not yet discussed (the chat matters to
    `NEW_FACT` only through it), so the key stays put while the chat discusses other lines."""
    if view["phase"] != DISCUSSION:
        return view["phase"], view["candidates"]
    return view["phase"], document_key(view["document"]), first_fresh(view["document"], view["recent_messages"])


def candidates(view: Mapping[str, Any]) -> list[tuple[int, str]]:
    """(index, command) of every label of the catalogue that `command_for` gives a command in this view, in index
    order: the same pairs as asking `command_for` label by label, with the view read once for all of them."""
    found = [(0, WAIT)]
    phase = view["phase"]
    if phase in VOTES:
        found += [(i, f"{DECIDE} {letter}") for i, letter in enumerate(_DECIDE.values(), start=1) if letter in view["candidates"]]
    elif phase == DISCUSSION:
        document = view["document"]
        fresh = first_fresh(document, view["recent_messages"])
        if fresh is not None:
            found.append((_NEW_FACT_INDEX, f"say {fact_message(fresh)}"))
        found += [(_NEW_FACT_INDEX + 1 + k, f"say {fact_message(item)}") for k, item in enumerate(document[:MAX_FACTS])]
    return found


def command_for(view: Mapping[str, Any], label: str) -> str | None:
    """The command `label` stands for in this view, or None when it is impossible now."""
    if label == NOOP:
        return WAIT
    letter = _DECIDE.get(label)
    if letter is not None:
        return f"{DECIDE} {letter}" if view["phase"] in VOTES and letter in view["candidates"] else None
    if view["phase"] != DISCUSSION:
        return None
    document = view["document"]
    if label == NEW_FACT:
        fresh = first_fresh(document, view["recent_messages"])
        return None if fresh is None else f"say {fact_message(fresh)}"
    k = _SHARE.get(label)
    if k is not None and k < len(document):
        return f"say {fact_message(document[k])}"
    return None
