"""Hidden Profile's metrics (CollabSim §4.2, App. C.2), pure functions of an episode log, and which way each is better.

- `final_vote_accuracy`: share of members whose final vote is the best candidate (the outcome);
  `majority_correct`: whether more than half of the members voted for it; `initial_vote_accuracy` the same
  for the initial vote.
- `vote_change_rate`: share of members whose final vote differs from their initial one (an abstention is a
  vote of its own).
- A vote that was never held (an episode cut before it, by a step cap or a budget) leaves the measures of that
  vote undefined (None), not a vote for nobody: a cut episode is no evidence of a wrong vote or a change of mind.
- `mention_rate`: share of messages that both paraphrase one of the key facts (the best candidate's unique
  strengths, matched with the pattern shipped with each) and name the best candidate by its standalone
  letter (C.2); `key_facts_surfaced`: share of the key facts some message paraphrased.
- `mean_message_words`: average words per message sent (after any cut); `total_messages`, `messages_per_agent`,
  `invalid_action_rate`.

The profile comes from the log's reset line (a generated profile exists nowhere else).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from teamenvs.core.metrics import header, invalid_action_rate, message_events, messages_per_agent, RETURN, SHARE
from teamenvs.core.recorder import step_records
from teamenvs.hidden_profile.materials import Profile
from teamenvs.hidden_profile.rules import majority

# Which way each metric is better, for benchmark reports ("max" or "min"); unlisted metrics are descriptive.
METRIC_GOALS: dict[str, str] = {
    "final_vote_accuracy": "max", "majority_correct": "max", "mention_rate": "max", "key_facts_surfaced": "max",
    "invalid_action_rate": "min",
}

# The least and most each bounded metric can be in any episode (shares, rates, yes/no), for figures.
METRIC_BOUNDS: dict[str, tuple[float, float]] = dict.fromkeys((
    "final_vote_accuracy", "majority_correct", "initial_vote_accuracy", "vote_change_rate", "mention_rate",
    "key_facts_surfaced", "invalid_action_rate",
), SHARE) | {RETURN: SHARE}  # each agent's return: 1 for a final vote for the best candidate


# After a capital "A" at a sentence's start, a lowercase word makes it the article ("A good principal ..."), unless the
# word is one a candidate's letter is followed by ("A is our pick", "A and B")
_NOT_ARTICLE = r"(?:is|was|has|had|would|will|should|could|can|seems|does|did|and|or|vs)\b"


def letter_pattern(letter: str) -> re.Pattern:
    """The candidate's letter standing alone (`C`, `C's`, `(C)`; not the C of `Cabin` or `ABC`), case-sensitive; for A,
    not the article that opens a sentence ("A strong communicator matters": found by review, where the best candidate
    is A, as in the shipped `school_principal` profile and a third of generated ones, such messages counted as
    mentions of A)."""
    alone = rf"(?<![A-Za-z0-9]){re.escape(letter)}(?![A-Za-z0-9])"
    if letter != "A":
        return re.compile(alone)
    # mid-sentence, or at a sentence's start (the text's, after . ! ? : ; and a space, a line break, a quote or a
    # bracket) when no lowercase word that makes it the article follows
    return re.compile(alone + rf"(?:(?<!^A)(?<![.!?:;]\sA)(?<!\nA)(?<![\"(]A)|(?!\s+(?!{_NOT_ARTICLE})[a-z]))")


def key_fact_patterns(profile: Profile) -> dict[str, re.Pattern]:
    """Fact id -> the compiled mention pattern of each key fact."""
    return {f.id: re.compile(f.pattern, re.IGNORECASE) for f in profile.key_facts() if f.pattern}


def mentions_key_candidate(text: str, patterns: Sequence[re.Pattern], letter: re.Pattern) -> bool:
    """Whether a message paraphrases a key fact and names the best candidate by its letter (C.2)."""
    return letter.search(text) is not None and any(p.search(text) for p in patterns)


def mention_rate(texts: Sequence[str], profile: Profile) -> float:
    """The share of `texts` that mention the key candidate (0.0 without messages)."""
    if not texts:
        return 0.0
    patterns = list(key_fact_patterns(profile).values())
    letter = letter_pattern(profile.best)
    return sum(mentions_key_candidate(t, patterns, letter) for t in texts) / len(texts)


def key_facts_surfaced(texts: Sequence[str], profile: Profile) -> float:
    """The share of key facts whose pattern matches at least one of `texts`."""
    patterns = key_fact_patterns(profile)
    if not patterns:
        return 0.0
    return sum(any(p.search(t) for t in texts) for p in patterns.values()) / len(patterns)


def _profile(records: Sequence[dict[str, Any]]) -> Profile:
    for r in records:
        if r.get("type") == "reset" and "profile" in r:
            return Profile.from_json(r["profile"])
    raise ValueError("the episode log has no reset line with the profile")


def hidden_profile_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """CollabSim's Hidden Profile measures of an episode, from its log alone."""
    agents = header(records)["agents"]
    profile = _profile(records)
    best = profile.best
    votes: dict[str, dict[str, str | None]] = {"initial": {a: None for a in agents}, "final": {a: None for a in agents}}
    held: set[str] = set()  # the votes that took place (a member who did not vote in one abstained)
    for step in step_records(records):
        for e in step.get("events", ()):
            if e.get("type") == "votes":
                votes[e["phase"]] = {a: e["votes"].get(a) for a in agents}
                held.add(e["phase"])
    initial, final = votes["initial"], votes["final"]
    n = len(agents)

    def share_of(phase: str, count: int) -> float | None:
        return count / n if phase in held else None
    messages = message_events(records)
    texts = [m["message"] for m in messages]
    return {
        "final_vote_accuracy": share_of("final", sum(final[a] == best for a in agents)),
        "majority_correct": majority(final) == best if "final" in held else None,
        "initial_vote_accuracy": share_of("initial", sum(initial[a] == best for a in agents)),
        "vote_change_rate": sum(final[a] != initial[a] for a in agents) / n if held >= {"initial", "final"} else None,
        "mention_rate": mention_rate(texts, profile),
        "key_facts_surfaced": key_facts_surfaced(texts, profile),
        "mean_message_words": sum(m["words"] for m in messages) / len(messages) if messages else 0.0,
        "total_messages": len(messages),
        "messages_per_agent": messages_per_agent(records, agents),
        "invalid_action_rate": invalid_action_rate(records),
        "best_candidate": best,
        "initial_votes": initial,
        "final_votes": final,
        "profile": profile.id,
    }
