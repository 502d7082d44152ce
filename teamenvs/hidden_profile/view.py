"""What a member reads: its view (the role, its own candidate document, its own votes, the group
chat; everyone's votes only once the episode is over), the text rendered from it, the events of the
votes, the ansi frame of the whole task, the briefing, and the numeric observation.

A fact is shared in the discussion in one fixed form, `Candidate C strength: <fact>` (the form the
discrete actions and the baselines send); `discussed_facts` reads such lines back from the chat, so
baselines and the encoder know what has been said from the view alone.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import accumulate, compress
from typing import Any, Mapping, NamedTuple

import numpy as np

from teamenvs.core.env import LAST_ACTION_REJECTED, event
from teamenvs.core.rl import Feature, clipped, feature_bounds, one_hot
from teamenvs.core.rounds import Phase
from teamenvs.core.view import footer
from teamenvs.hidden_profile.config import MAX_CANDIDATES, HiddenProfileConfig
from teamenvs.hidden_profile.materials import LETTERS, Fact, Profile
from teamenvs.hidden_profile.rules import DISCUSSION, FINAL_VOTE, INITIAL_VOTE

MAX_FACTS = 24  # the most facts a document holds (17 in the shipped profiles, 23 in generated ones)
STRENGTH, WEAKNESS = "strength", "weakness"
Item = tuple[str, str, str]  # (candidate, "strength" | "weakness", text): one line of a document
_FACT_LINE = re.compile(r"Candidate ([A-E]) (strength|weakness): (.+)")


def item_of(fact: Fact) -> Item:
    return fact.candidate, STRENGTH if fact.valence > 0 else WEAKNESS, fact.text


def fact_message(item: Item) -> str:
    """The message that shares one document line: `Candidate C strength: <fact>`."""
    return f"Candidate {item[0]} {item[1]}: {item[2]}"


@lru_cache(maxsize=4096)
def _shared_fact(line: str) -> Item | None:
    """The document line one chat line shares (`sender: Candidate C strength: ...`), or None."""
    text = line.split(": ", 1)[1] if ": " in line else ""
    match = _FACT_LINE.fullmatch(text)
    return None if match is None else (match.group(1), match.group(2), match.group(3))


# the chats `discussed_facts` read last, newest last, each with the facts it shares (the entry holds the chat, so its id
# is not reused meanwhile): a chat per member of a group and more
_CHATS: list[tuple[tuple[str, ...], frozenset[Item]]] = []
RECENT_CHATS = 16


def _shared_facts(lines: tuple[str, ...]) -> frozenset[Item]:
    """The document lines shared in these chat lines, read line by line."""
    found = set(map(_shared_fact, lines))
    found.discard(None)
    return frozenset(found)


def discussed_facts(lines: tuple[str, ...]) -> frozenset[Item]:
    """The document lines shared in these chat lines (`sender: Candidate C strength: ...`, own lines too).

    Every member's view, mask and vector read its chat each step: a chat read lately is known again by its object.
    A chat grows at its end, so a new one is read from a chat read lately that it extends, adding the facts of its
    new lines; when they add none, the answer is that chat's set itself (the same object: what is kept per set of
    facts is found again at once)."""
    for chat, found in reversed(_CHATS):
        if chat is lines:
            return found
    lines = tuple(lines)
    found = _read_chat(lines)
    if len(_CHATS) >= RECENT_CHATS:
        del _CHATS[0]
    _CHATS.append((lines, found))
    return found


def _read_chat(lines: tuple[str, ...]) -> frozenset[Item]:
    """`discussed_facts` of a chat not read lately: from the latest chat read that it extends, else line by line (as
    when the history has dropped its oldest line)."""
    n = len(lines)
    for chat, facts in reversed(_CHATS):
        k = len(chat)
        # (the last line first: the lines of a grown chat are the very objects of the chat it extends, so a chat it
        # does not extend is mostly told by one comparison)
        if 0 < k <= n and lines[k - 1] == chat[-1] and lines[:k] == chat:
            added = _shared_facts(lines[k:])
            return facts if added <= facts else facts | added
    return _shared_facts(lines)


def support(items: Any, candidates: tuple[str, ...]) -> dict[str, int]:
    """Strengths minus weaknesses per candidate among document lines."""
    out = {c: 0 for c in candidates}
    for c, kind, _ in items:
        if c in out:
            out[c] += 1 if kind == STRENGTH else -1
    return out


def favourite(items: Any, candidates: tuple[str, ...]) -> str:
    """The candidate with the most support among `items` (the first letter on a tie)."""
    scores = support(items, candidates)
    return max(candidates, key=lambda c: (scores[c], -candidates.index(c)))


# ---------------------------------------------------------------------- the view
def results_view(initial: Mapping[str, str | None], final: Mapping[str, str | None], best: str, majority: str | None) -> dict[str, Any]:
    """Everyone's votes and the best candidate, shown to all once the episode is over (built afresh)."""
    return {"initial": dict(initial), "final": dict(final), "best": best, "majority": majority}


def member_view(
    envelope: Mapping[str, Any],
    config: HiddenProfileConfig,
    phase: Phase,
    over: bool,
    max_steps: int,
    profile: Profile,
    members: tuple[str, ...],
    document: tuple[Item, ...],
    own_votes: tuple[str | None, str | None],
    results: dict[str, Any] | None,
    messages: Mapping[str, tuple[str, ...]],
) -> dict[str, Any]:
    """Everything one member may know now: the position, its own document and votes, the chat,
    and (at the end only) everyone's votes and the best candidate."""
    return {
        **envelope,
        "role": "member",
        "max_steps": max_steps,
        "phase": "over" if over else phase.kind,
        "discussion_turn": phase.turn,
        "discussion_turns": config.discussion_turns,
        "title": profile.title,
        "position": profile.role,
        "candidates": profile.candidates,
        "members": members,
        "document": document,
        "your_initial_vote": own_votes[0],
        "your_final_vote": own_votes[1],
        "results": results,
        **messages,
    }


# ---------------------------------------------------------------------- the text
def document_lines(document: tuple[Item, ...], candidates: tuple[str, ...]) -> list[str]:
    """Per candidate a heading, then its strengths (`+`) and weaknesses (`-`), as the document lists them."""
    return list(_document_lines(tuple(document), tuple(candidates)))


@lru_cache(maxsize=256)
def _document_lines(document: tuple[Item, ...], candidates: tuple[str, ...]) -> tuple[str, ...]:
    """`document_lines`, kept per document (a member's document never changes within an episode)."""
    lines = []
    for c in candidates:
        lines.append(f"Candidate {c}:")
        listed = [f"  {'+' if kind == STRENGTH else '-'} {t}" for cc, kind, t in document if cc == c]
        lines.extend(listed or ["  (nothing in your document)"])
    return tuple(lines)


def _vote(v: str | None) -> str:
    return v if v is not None else "no vote"


def render(view: Mapping[str, Any]) -> str:
    """The text observation of a member's view."""
    agent, n = view["agent"], len(view["members"])
    who = f"You are {agent}, one of {n} members."
    step = f"step {view['step'] + 1} of {view['max_steps']}"
    phase = view["phase"]
    if phase == "over":
        head = f"Hidden profile ({view['title']}): the task is over. {who}"
    elif phase == INITIAL_VOTE:
        head = f"Hidden profile ({view['title']}): initial vote ({step}). {who}"
    elif phase == FINAL_VOTE:
        head = f"Hidden profile ({view['title']}): final vote ({step}). {who}"
    else:
        head = (f"Hidden profile ({view['title']}): discussion, turn {view['discussion_turn']}/{view['discussion_turns']} "
                f"({step}). {who}")
    parts = [head, f"Position: {view['position']}",
             "Your candidate document (the other members may hold information you do not have):",
             *_document_lines(tuple(map(tuple, view["document"])), tuple(view["candidates"]))]
    votes = []
    if view["your_initial_vote"] is not None or phase not in (INITIAL_VOTE,):
        votes.append(f"your initial vote: {_vote(view['your_initial_vote'])}")
    if phase == "over":
        votes.append(f"your final vote: {_vote(view['your_final_vote'])}")
    if votes and view["results"] is None:
        parts.append("Votes (private until the end): " + "; ".join(votes) + ".")
    results = view["results"]
    if results is not None:
        for which in ("initial", "final"):
            cast = "; ".join(f"{a}{' (you)' if a == agent else ''} {_vote(v)}" for a, v in results[which].items())
            parts.append(f"{which.capitalize()} votes: {cast}.")
        group = f"the group majority chose {results['majority']}" if results["majority"] else "no candidate won a majority"
        parts.append(f"On all the information pooled, the best candidate was {results['best']}; {group}.")
    before = []
    if view["new_messages"]:
        before.append("New messages: " + " | ".join(view["new_messages"]))
    if phase == DISCUSSION and view["recent_messages"]:
        before.append("Discussion so far: " + " | ".join(view["recent_messages"]))
    parts.extend(footer(view, before_last_action=before))
    return "\n".join(parts)


# ---------------------------------------------------------------------- events of the votes
def vote_event(which: str, agent: str, vote: str | None) -> dict[str, Any]:
    """A member's own record of its vote (only it reads it)."""
    text = f"Your {which} vote: {vote} (private until the end)." if vote else f"You cast no {which} vote."
    return event("your_vote", text, phase=which, vote=vote)


def votes_event(which: str, votes: Mapping[str, str | None], best: str, majority: str | None) -> dict[str, Any]:
    """The log's record of a vote (never shown to members before the end)."""
    counts = ", ".join(f"{a} {_vote(v)}" for a, v in votes.items())
    return event("votes", f"{which} vote: {counts}", phase=which, votes=dict(votes), best=best, majority=majority)


# ---------------------------------------------------------------------- for people: frame and briefing
def frame(step: int, max_steps: int, phase: str, profile: Profile, documents: Mapping[str, tuple[Item, ...]],
          votes: Mapping[str, Mapping[str, str | None]], surfaced: frozenset[str]) -> str:
    """The ansi frame of the whole task: each member's votes and unique facts (* once surfaced in the chat)."""
    rows = [f"Hidden profile step {step}/{max_steps} | {phase} | {profile.title} | best {profile.best}"]
    for k, (a, _) in enumerate(documents.items(), start=1):
        unique = [f"{f.candidate}{'+' if f.valence > 0 else '-'}{'*' if f.id in surfaced else ''}" for f in profile.facts if f.holder == k]
        rows.append(f"  {a:<10} votes {_vote(votes['initial'].get(a))} -> {_vote(votes['final'].get(a))}  unique: {' '.join(unique)}")
    return "\n".join(rows)


PRIVATE_CLAUSE = "'say' reaches the whole group, 'tell' one member"
BROADCAST_CLAUSE = "with 'say': every message reaches the whole group; there are no private messages"


def briefing(agent: str, config: HiddenProfileConfig, profile: Profile, members: int, max_steps: int) -> str:
    """The role and rules part of a member's briefing (after CollabSim Table 10, in our words)."""
    talk = PRIVATE_CLAUSE if config.private_messages else BROADCAST_CLAUSE
    limit = f" A message may hold at most {config.max_words} words (a longer one is not sent)." if config.max_words else ""
    gap = (f" You may send at most one message every {config.min_steps_between_messages} steps."
           if config.min_steps_between_messages else "")
    return (
        f"You are {agent}, one of {members} members of a selection committee (a Hidden Profile group decision task). "
        f"Position: {profile.role} The candidates are {', '.join(profile.candidates)}. Each member has received a "
        "partial candidate document with only part of the available information: the other members may hold facts "
        "you do not have. The task has three phases by step: step 1 is the initial vote, the next "
        f"{config.discussion_turns} steps are the group discussion, and step {max_steps} is the final vote. In each "
        "vote you vote independently for one candidate with 'decide <candidate>' (or abstain with 'wait'); votes "
        f"stay private until the end. In the discussion you may send messages ({talk}); a message is read in the "
        f"next step.{limit}{gap} Votes are refused during the discussion and messages during the votes. Your goal: "
        "pick the most qualified candidate on all the evidence, yours and the others'; you score 1 if your final "
        "vote is the best candidate on all the information pooled."
    )


# ---------------------------------------------------------------------- the numeric observation (RL)
_PHASES = (INITIAL_VOTE, DISCUSSION, FINAL_VOTE, "over")


def features(config: HiddenProfileConfig) -> tuple[Feature, ...]:
    """The feature table of a member's numeric observation (its view only); the same for every config."""
    k, m = MAX_CANDIDATES, MAX_FACTS
    return (
        Feature("phase", 4, doc="one-hot: initial vote, discussion, final vote, over"),
        Feature("discussion_turn", doc="discussion turn / discussion turns (0 outside the discussion; 1 after it)"),
        Feature("last_action_rejected", doc="1 if the agent's last action was rejected"),
        Feature("candidates", k, doc="1 per letter A-E that is a candidate"),
        Feature("own_initial_vote", k + 1, doc="own initial vote, one-hot: no vote, then A-E"),
        Feature("own_strengths", k, doc="per candidate, strengths in own document / 10"),
        Feature("own_weaknesses", k, doc="per candidate, weaknesses in own document / 10"),
        Feature("own_support", k, low=-1.0, doc="per candidate, (strengths - weaknesses) in own document / 10"),
        Feature("heard_strengths", k, doc="per candidate, strengths shared in the discussion that are not in own document / 10"),
        Feature("heard_weaknesses", k, doc="per candidate, weaknesses shared in the discussion that are not in own document / 10"),
        Feature("pooled_support", k, low=-1.0, doc="per candidate, support on own document and every fact shared in the discussion / 10"),
        Feature("own_facts_discussed", doc="share of own document's facts already shared in the discussion"),
        Feature("fact_present", m, doc="1 per line k of own document (the 'share fact k' actions)"),
        Feature("fact_candidate", m, doc="candidate of document line k: letter index / 4 (A = 0, E = 1)"),
        Feature("fact_strength", m, doc="1 if document line k is a strength"),
        Feature("fact_discussed", m, doc="1 if document line k has been shared in the discussion (by anyone)"),
        Feature("new_messages", doc="messages read this step / 10"),
        Feature("best_revealed", k, doc="the best candidate, one-hot, once the episode is over (0 before)"),
    )


_TABLE = features(HiddenProfileConfig())  # the same for every config
_AT = dict(zip((f.name for f in _TABLE), accumulate((f.size for f in _TABLE), initial=0)))  # where each feature begins
_LOW, _HIGH = feature_bounds(_TABLE)


def encode_values(view: Mapping[str, Any], config: HiddenProfileConfig) -> dict[str, Any]:
    """The value (or values) of each feature of `features(config)` for a member's view."""
    letters = LETTERS[:MAX_CANDIDATES]
    candidates = view["candidates"]
    document = view["document"]
    phase = view["phase"]
    discussed = discussed_facts(view["recent_messages"])
    own = set(document)
    heard = [item for item in discussed if item not in own]
    own_strong = [sum(1 for c, kind, _ in document if c == x and kind == STRENGTH) / 10 for x in letters]
    own_weak = [sum(1 for c, kind, _ in document if c == x and kind == WEAKNESS) / 10 for x in letters]
    heard_strong = [sum(1 for c, kind, _ in heard if c == x and kind == STRENGTH) / 10 for x in letters]
    heard_weak = [sum(1 for c, kind, _ in heard if c == x and kind == WEAKNESS) / 10 for x in letters]
    present, which, strong, said = ([0.0] * MAX_FACTS for _ in range(4))
    for i, item in enumerate(document[:MAX_FACTS]):
        present[i] = 1.0
        which[i] = letters.index(item[0]) / (MAX_CANDIDATES - 1)
        strong[i] = float(item[1] == STRENGTH)
        said[i] = float(item in discussed)
    vote = view["your_initial_vote"]
    results = view["results"]
    if phase == DISCUSSION:
        turn = view["discussion_turn"] / view["discussion_turns"]
    else:
        turn = 0.0 if phase == INITIAL_VOTE else 1.0
    return {
        "phase": one_hot(_PHASES.index(phase), 4),
        "discussion_turn": turn,
        "last_action_rejected": float(view["last_action"].startswith(LAST_ACTION_REJECTED)),
        "candidates": [float(x in candidates) for x in letters],
        "own_initial_vote": one_hot(0 if vote is None else 1 + letters.index(vote), MAX_CANDIDATES + 1),
        "own_strengths": own_strong,
        "own_weaknesses": own_weak,
        "own_support": [s - w for s, w in zip(own_strong, own_weak)],
        "heard_strengths": heard_strong,
        "heard_weaknesses": heard_weak,
        "pooled_support": [s - w + hs - hw for s, w, hs, hw in zip(own_strong, own_weak, heard_strong, heard_weak)],
        "own_facts_discussed": sum(said) / len(document) if document else 0.0,
        "fact_present": present,
        "fact_candidate": which,
        "fact_strength": strong,
        "fact_discussed": said,
        "new_messages": len(view["new_messages"]) / 10,
        "best_revealed": one_hot(letters.index(results["best"]), MAX_CANDIDATES) if results else [0.0] * MAX_CANDIDATES,
    }


_LETTER_INDEX = {x: i for i, x in enumerate(LETTERS[:MAX_CANDIDATES])}


def _tally_slot(item: Item) -> int | None:
    """Where `_tally` counts a document line: its letter's index among the strengths, or MAX_CANDIDATES more among the
    weaknesses (None: not counted, a letter beyond E or neither a strength nor a weakness)."""
    c, kind, _ = item
    i = _LETTER_INDEX.get(c)
    if i is None or kind not in (STRENGTH, WEAKNESS):
        return None
    return i if kind == STRENGTH else MAX_CANDIDATES + i


def _tally(items: Any) -> tuple[list[int], list[int]]:
    """How many strengths and how many weaknesses per letter A-E among document lines."""
    strong, weak = [0] * MAX_CANDIDATES, [0] * MAX_CANDIDATES
    for c, kind, _ in items:
        i = _LETTER_INDEX.get(c)
        if i is not None and kind in (STRENGTH, WEAKNESS):
            (strong if kind == STRENGTH else weak)[i] += 1
    return strong, weak


@lru_cache(maxsize=256)
def _discussed_tally(discussed: frozenset[Item]) -> tuple[int, ...]:
    """`_tally` of the facts discussed so far, strengths then weaknesses, kept per set of facts: every member of a group
    chat has heard the same."""
    strong, weak = _tally(discussed)
    return (*strong, *weak)


# the slots an encoder writes per view, and each slot's bounds as Python floats (`teamenvs.core.rl.clipped`)
_TURN, _NEW = _AT["discussion_turn"], _AT["new_messages"]
_SCALE = list(zip(_LOW.tolist(), _HIGH.tolist()))


class _Discussed(NamedTuple):
    """What a member's vector and mask take from its document and the facts discussed so far."""

    vector: np.ndarray  # the slots from own_strengths to fact_discussed, clipped, the rest 0 (read-only: each vector copies it)
    fresh: Item | None  # the document's first line not yet discussed (None: all of them are)


class _Document(NamedTuple):
    """What a member's vector takes from its own document alone (fixed for the episode)."""

    lines: tuple[Item, ...]
    key: str  # the lines as one string (equal strings, equal documents) whose hash Python keeps: for mask keys
    slots: tuple[int | None, ...]  # per line, its `_tally_slot` (None as well for a line that repeats an earlier one)
    strong: tuple[float, ...]  # its strengths per letter / 10
    weak: tuple[float, ...]  # its weaknesses per letter / 10
    fixed: np.ndarray  # its slots that stay put (own strengths, weaknesses and support; per line whether present,
    # its candidate and whether a strength), the rest 0 (read-only)
    discussed: dict[frozenset[Item], _Discussed]  # per set of facts discussed so far (`_discussed`), bounded


MAX_DISCUSSED = 64  # sets of discussed facts kept per document (a discussion adds a few facts a step)
_DOCUMENTS: dict[int, _Document] = {}  # id of a view's document (the entry holds it) -> its record
MAX_DOCUMENTS = 256


@lru_cache(maxsize=256)
def _document_record(document: tuple[Item, ...]) -> _Document:
    """The record of a document (kept per document, so equal documents of other episodes share it)."""
    letters = LETTERS[:MAX_CANDIDATES]
    own_strong, own_weak = (tuple(n / 10 for n in counts) for counts in _tally(document))
    present, which, strong = ([0.0] * MAX_FACTS for _ in range(3))
    for i, item in enumerate(document[:MAX_FACTS]):
        present[i] = 1.0
        which[i] = letters.index(item[0]) / (MAX_CANDIDATES - 1)
        strong[i] = float(item[1] == STRENGTH)
    vector = np.zeros(len(_LOW), dtype=np.float32)
    for name, values in (("own_strengths", own_strong), ("own_weaknesses", own_weak),
                         ("own_support", [s - w for s, w in zip(own_strong, own_weak)]),
                         ("fact_present", present), ("fact_candidate", which), ("fact_strength", strong)):
        vector[_AT[name]:_AT[name] + len(values)] = values
    vector.flags.writeable = False
    slots = tuple(None if item in document[:k] else _tally_slot(item) for k, item in enumerate(document))
    return _Document(document, repr(document), slots, own_strong, own_weak, vector, {})


def _document(lines: Any) -> _Document:
    """The record of a view's document, found by its object while that is a tuple of tuples (which cannot change):
    a member's document is the same object in all its views of an episode. The entry holds it, so its id is not
    reused meanwhile."""
    hit = _DOCUMENTS.get(id(lines))
    if hit is not None and hit.lines is lines:
        return hit
    document = _as_document(lines)
    record = _document_record(document)
    if document is lines:
        if record.lines is not lines:  # an equal document of another episode: its record, holding this object
            record = record._replace(lines=lines)
        if len(_DOCUMENTS) >= MAX_DOCUMENTS:
            _DOCUMENTS.clear()
        _DOCUMENTS[id(lines)] = record
    return record


def _discussed(record: _Document, discussed: frozenset[Item]) -> _Discussed:
    """The slots of a document given the facts discussed so far, and its first line not yet discussed, worked out
    once per document and set of facts (every step with the same facts reads them again)."""
    found = record.discussed.get(discussed)
    if found is not None:
        return found
    document, own_strong, own_weak = record.lines, record.strong, record.weak
    said = list(map(discussed.__contains__, document))  # per line, whether it was shared in the discussion (by anyone)
    # the facts heard from others: all those discussed less one's own (each counted once)
    heard = [*_discussed_tally(discussed)]
    for slot in compress(record.slots, said):
        if slot is not None:
            heard[slot] -= 1
    heard_strong = [n / 10 for n in heard[:MAX_CANDIDATES]]
    heard_weak = [n / 10 for n in heard[MAX_CANDIDATES:]]
    shown = said[:MAX_FACTS]
    vector = record.fixed.copy()
    vector[_AT["heard_strengths"]:_AT["fact_present"]] = [
        *heard_strong, *heard_weak, *[s - w + hs - hw for s, w, hs, hw in zip(own_strong, own_weak, heard_strong, heard_weak)],
        sum(shown) / len(document) if document else 0.0]
    vector[_AT["fact_discussed"]:_AT["fact_discussed"] + len(shown)] = shown
    np.minimum(np.maximum(vector, _LOW, out=vector), _HIGH, out=vector)
    vector.flags.writeable = False
    found = _Discussed(vector, document[said.index(False)] if False in said else None)
    if len(record.discussed) >= MAX_DISCUSSED:
        record.discussed.clear()
    record.discussed[discussed] = found
    return found


def first_fresh(document: tuple[Item, ...], lines: tuple[str, ...]) -> Item | None:
    """The first line of `document` not discussed in the chat `lines` (None: all of them are)."""
    return _discussed(_document(document), discussed_facts(lines)).fresh


def document_key(document: tuple[Item, ...]) -> str:
    """`document` as one string, equal for equal documents only, whose hash Python keeps (hashing the document
    itself hashes each of its lines every time): the document's part of a mask key."""
    return _document(document).key


def _as_document(lines: Any) -> tuple[Item, ...]:
    """A view's document as a tuple of lines, each a tuple (a copied or thawed view may hold lists)."""
    if type(lines) is tuple and set(map(type, lines)) <= {tuple}:
        return lines  # the env's own document: no new tuples to build (and for the garbage collector to count)
    return tuple(map(tuple, lines))


def encode(view: Mapping[str, Any], config: HiddenProfileConfig) -> np.ndarray:
    """A member's numeric observation: its view, slot by slot as `features(config)` says (the same
    vector as `teamenvs.core.rl.pack(features(config), encode_values(view, config))`): the slots of its
    document, worked out and clipped once per document and chat (`_discussed`), with the others written in (each
    within its scale: one or `clipped`)."""
    letters = LETTERS[:MAX_CANDIDATES]
    phase = view["phase"]
    vector = _discussed(_document(view["document"]), discussed_facts(view["recent_messages"])).vector.copy()
    vector[_AT["phase"] + _PHASES.index(phase)] = 1.0
    if phase == DISCUSSION:
        vector[_TURN] = clipped(view["discussion_turn"] / view["discussion_turns"], _SCALE[_TURN])
    elif phase != INITIAL_VOTE:
        vector[_TURN] = 1.0
    if view["last_action"].startswith(LAST_ACTION_REJECTED):
        vector[_AT["last_action_rejected"]] = 1.0
    candidates = view["candidates"]
    for i, x in enumerate(letters):
        if x in candidates:
            vector[_AT["candidates"] + i] = 1.0
    vote = view["your_initial_vote"]
    vector[_AT["own_initial_vote"] + (0 if vote is None else 1 + letters.index(vote))] = 1.0
    vector[_NEW] = clipped(len(view["new_messages"]) / 10, _SCALE[_NEW])
    results = view["results"]
    if results:
        vector[_AT["best_revealed"] + letters.index(results["best"])] = 1.0
    return vector
