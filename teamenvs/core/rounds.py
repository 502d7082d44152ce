"""The round structure both social dilemmas share: decision steps, then discussion phases, and
the scripted baseline that talks once per discussion phase and otherwise applies its rule.

A game of R rounds is a schedule of env steps: one decision step per round (a DayTrader
investment, a commons harvest) and, after every k-th round (the last one too where the game
says so), `discussion_turns` steps in which agents may talk. Without communication there are no
discussion steps.
"""

from __future__ import annotations

from abc import abstractmethod
from functools import lru_cache
from typing import Any, Mapping, NamedTuple

from teamenvs.core.env import TeamEnv
from teamenvs.core.messaging import MessagingConditions
from teamenvs.core.policy import ScriptedPolicy


class Phase(NamedTuple):
    """One env step of the schedule: a decision in `round`, or discussion `turn` after `round`."""

    kind: str  # the decision kind ("decision", "harvest") or "discussion"
    round: int
    turn: int = 0


@lru_cache(maxsize=256)  # a tuple of tuples, made once per game setting (it was 3% of a short commons episode)
def phase_schedule(
    rounds: int, communication: bool, discussion_every: int, discussion_turns: int, decision: str = "decision",
    after_last: bool = False,
) -> tuple[Phase, ...]:
    """One `decision` step per round, then `discussion_turns` discussion steps after every k-th round.

    There is no discussion after the last round unless `after_last`, and none at all when communication
    is off (or when `discussion_every` or `discussion_turns` is 0).
    """
    steps: list[Phase] = []
    talk = communication and discussion_every > 0 and discussion_turns > 0
    for r in range(1, rounds + 1):
        steps.append(Phase(decision, r))
        if talk and r % discussion_every == 0 and (r < rounds or after_last):
            steps.extend(Phase("discussion", r, t) for t in range(1, discussion_turns + 1))
    return tuple(steps)


class ScheduledGame(TeamEnv):
    """A team env that walks a fixed schedule of phases; `_setup` sets `self.schedule`."""

    schedule: tuple[Phase, ...]

    @property
    def phase(self) -> Phase:
        """The phase of the current step (the last one once the schedule is done)."""
        return self.schedule[min(self.step_count, len(self.schedule) - 1)]


def discussion_briefing(conditions: MessagingConditions, every: int, turns: int, round_name: str, people: str,
                        after_last: bool = False) -> str:
    """The briefing sentences on when agents may talk and under which bandwidth limits."""
    if not (conditions.communication and every and turns):
        return f"There is no communication between {people} in this condition."
    when = f"every {round_name}" if every == 1 else f"every {every} {round_name}s"
    text = (
        f"After {when} ({'the last one too' if after_last else 'not after the last'}) there is a discussion phase of {turns} turns in which you may send "
        "messages ('say' reaches everyone, 'tell' one person); a message sent in one turn is read in the next."
    )
    limits = []
    if conditions.max_words:
        limits.append(f"a message may hold at most {conditions.max_words} words (a longer one is not sent)")
    if conditions.min_steps_between_messages:
        limits.append(f"you may send at most one message every {conditions.min_steps_between_messages} steps")
    return text + (f" Bandwidth: {'; '.join(limits)}." if limits else "")


class DiscussingBaseline(ScriptedPolicy):
    """A social-dilemma baseline: states its strategy once per discussion phase, else applies its rule."""

    pitch = ""

    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        if view["phase"] == "discussion":
            if self.pitch and view["discussion_turn"] == 1 and self.allowed(info, "say"):
                return f"say {self.pitch}"
            return "wait"
        return self.decision(view, info)

    @abstractmethod
    def decision(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        """The command for a decision step (investment or harvest)."""


def message_tables(agents: tuple[str, ...], messages: tuple[str, ...]) -> tuple[
        dict[str, tuple[str, ...]], dict[str, dict[str, int]], dict[str, dict[str, tuple[int, int]]]]:
    """Lookup tables the round-based encoders share: per agent, the others in id order, each other's
    index among them, and each rendered line of a canned message -> (other's index, message index)."""
    others = {a: tuple(o for o in agents if o != a) for a in agents}
    slots = {a: {o: i for i, o in enumerate(others[a])} for a in agents}
    lines = {}
    for a in agents:
        table = {}
        for i, o in enumerate(others[a]):
            for j, text in enumerate(messages):
                table[f"{o}: {text}"] = table[f"{o} (to you): {text}"] = (i, j)
        lines[a] = table
    return others, slots, lines


def message_slots(lines: tuple[str, ...], table: Mapping[str, tuple[int, int]], slot: Mapping[str, int], k: int, size: int) -> list[float]:
    """The slots of a block of message lines (`size` = (n - 1) * (k + 1)): per other agent, its `k` canned messages,
    then any other text it sent. `table` and `slot` are one agent's entries of `message_tables`."""
    block = [0.0] * size
    for line in lines:
        hit = table.get(line)
        if hit is not None:
            block[hit[0] * (k + 1) + hit[1]] = 1.0
            continue
        sender = line.split(": ", 1)[0].removesuffix(" (to you)")
        i = slot.get(sender)
        if i is not None:  # another agent's free text (own lines read "you -> ...")
            block[i * (k + 1) + k] = 1.0
    return block
