"""What each agent knows of the building, and how knowledge spreads: by seeing and by being told.

An agent knows a room's layout and doorways (the room is *mapped*) once it has been inside
it, been told about it, or under `full_map`; through a mapped room's doorways it can read
the names of the rooms beyond. It knows a victim once it has seen it (entering a room
shows everything in it) or been told about it, and the rubble on the doorways of rooms it
has seen. What it knows may be stale: a victim carried off elsewhere stays in its notes
until it sees the room again. Every note carries the step it was seen at, and a newer
note always wins, so a teammate's older news never overwrites what an agent saw since.

Being told follows what a message names. When a message naming a room reaches an agent,
the agent learns what the sender knows of that room's layout and rubble; naming victims by
number ("victim 7", "victims 3, 5 and 9", "v12") passes on what the sender knows of them
and of the rooms they lie in. Nothing else in a message changes what the env lets the
recipient know.

Rescues are known the same way: the agent that delivers a victim knows it, everyone standing
in the Hospital sees every victim rescued so far (they lie there), a message naming a victim
passes on that it was rescued, and under `communication="global"` the radio reports every
rescue to the whole team (`rules`). Views leave out the notes of victims known to be rescued.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, NamedTuple

from teamenvs.search_rescue.world import _PLACES, _QUALIFIERS, _ROOM_NAMES, HOSPITAL, FloorPlan

# Each optional part carries its own trailing whitespace, so no two optional runs meet
# (they backtracked in polynomial time on long whitespace runs).
_VICTIM_LIST = re.compile(
    r"\b(?:victims?|v)\s*(?:(?:no\.?|number|#)\s*)?(?::\s*)?(\d{1,5})\b"
    r"((?:\s*(?:\([^()]{0,40}\)\s*)?(?:,|&|/|\band\b|\bor\b)\s*(?:and\s+)?(?:#\s*)?\d{1,5}\b)*)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(\d{1,5})\b")
_ASIDE = re.compile(r"\([^()]*\)")


class VictimNote(NamedTuple):
    """What an agent believes about a victim: its type, whether stabilized, where it lies, when seen."""

    kind: str
    stabilized: bool
    room: int
    cell: tuple[int, int]
    step: int


@dataclass
class Knowledge:
    """One agent's notes. `names_version` changes whenever the set of rooms it can name does."""

    visited: set[int] = field(default_factory=set)
    mapped: set[int] = field(default_factory=set)
    victims: dict[int, VictimNote] = field(default_factory=dict)
    gone: dict[int, int] = field(default_factory=dict)  # victim -> step it was seen to be no longer where noted
    rubble: set[int] = field(default_factory=set)  # doorways believed blocked
    rubble_seen: dict[int, int] = field(default_factory=dict)  # doorway -> step its state was seen
    room_versions: dict[int, int] = field(default_factory=dict)
    looked: dict[int, int] = field(default_factory=dict)  # room -> last step the agent saw inside it
    names_version: int = 0
    rubble_version: int = 0  # changes whenever the set of doorways believed blocked does
    victims_version: int = 0  # changes whenever `victims` does (views cache what they show of the notes by it)
    rescued: set[int] = field(default_factory=set)  # victims it knows were rescued

    def known_rooms(self, plan: FloorPlan) -> set[int]:
        """Rooms it can name: mapped rooms and the rooms their doorways lead to."""
        known = set(self.mapped)
        for r in self.mapped:
            for _, _, beyond in plan.exits[r]:
                known.add(beyond)
        return known

    def map_room(self, room: int) -> bool:
        if room in self.mapped:
            return False
        self.mapped.add(room)
        self.names_version += 1
        return True

    def note_victim(self, vid: int, note: VictimNote) -> bool:
        """Record a sighting unless something newer is known; True if the notes changed."""
        old = self.victims.get(vid)
        if old == note or (old is not None and old.step > note.step) or self.gone.get(vid, -1) >= note.step:
            return False
        if self.looked.get(note.room, -1) > note.step:
            return False  # it has looked at that room since: had the victim been there, it would know
        self.victims[vid] = note
        self.victims_version += 1
        return True

    def forget_victim(self, vid: int, step: int) -> None:
        """The victim is no longer where it was noted (seen gone at `step`)."""
        self.victims.pop(vid, None)
        self.victims_version += 1
        self.gone[vid] = step

    def note_rescued(self, vid: int) -> bool:
        """The victim was rescued (a fact that never goes stale); True if this is news."""
        if vid in self.rescued:
            return False
        self.rescued.add(vid)
        return True

    def note_rubble(self, door: int, blocked: bool, step: int) -> bool:
        """Record a doorway's state as of `step` unless a newer sighting is known; True if it changed."""
        if self.rubble_seen.get(door, -1) > step:
            return False
        flipped = (door in self.rubble) != blocked
        changed = flipped or door not in self.rubble_seen
        self.rubble_seen[door] = step
        if flipped:
            (self.rubble.add if blocked else self.rubble.discard)(door)
            self.rubble_version += 1
        return changed


def mentioned_victims(text: str) -> set[int]:
    """Victim numbers a message names ("victim 7", "victims 3 (critical), 5 and 9", "v12")."""
    found: set[int] = set()
    for match in _VICTIM_LIST.finditer(text):
        found.add(int(match.group(1)))
        found.update(int(n) for n in _NUMBER.findall(_ASIDE.sub(" ", match.group(2))))
    return found


def _names_pattern(names: Iterable[str]) -> re.Pattern[str]:
    """A regex finding any of these names (case-insensitive, whole words, any run of spaces between words)."""
    names = sorted(names, key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(n).replace(r"\ ", r"\s+") for n in names) + r")\b", re.IGNORECASE)


# Every name a generated map can give a room. Compiled once: compiling a pattern of one map's names cost
# 30 ms per reset on a 100x100 map (168 rooms). Finding any generated name and keeping those of the map
# finds exactly the map's names, since no generated name starts inside another (qualifiers and places are
# disjoint word sets, and no place's first word is a place of its own).
_GENERATED_NAMES = frozenset([HOSPITAL, *_ROOM_NAMES])


def _words(names: Iterable[str]) -> str:
    return "|".join(re.escape(n).replace(r"\ ", r"\s+") for n in sorted(set(names), key=len, reverse=True))


# Factored as qualifier + place (not one branch per name), so that a long message is scanned in linear time.
_ANY_GENERATED_NAME = re.compile(
    rf"\b((?:{_words([HOSPITAL])})|(?:{_words(_QUALIFIERS)})\s+(?:{_words(_PLACES)}))\b", re.IGNORECASE)


def room_pattern(plan: FloorPlan) -> re.Pattern[str]:
    """A regex finding room names in a message; it may find names of other maps, which `mentioned_rooms` drops."""
    names = plan.room_names
    return _ANY_GENERATED_NAME if _GENERATED_NAMES.issuperset(names) else _names_pattern(names)


def mentioned_rooms(text: str, pattern: re.Pattern[str], ids: dict[str, int]) -> set[int]:
    """Room ids a message names."""
    keys = (" ".join(m.group(1).lower().split()) for m in pattern.finditer(text))
    return {ids[key] for key in keys if key in ids}


def share(plan: FloorPlan, sender: Knowledge, recipient: Knowledge, rooms: Iterable[int], victims: Iterable[int]) -> bool:
    """Pass on the sender's notes about the named rooms and victims; True if the recipient learned anything."""
    learned = False
    rooms = set(rooms)
    for v in victims:
        if v in sender.rescued:
            learned |= recipient.note_rescued(v)
        note = sender.victims.get(v)
        if note is not None:
            rooms.add(note.room)
            learned |= recipient.note_victim(v, note)
        elif v in sender.gone and recipient.gone.get(v, -1) < sender.gone[v] and v in recipient.victims:
            if recipient.victims[v].step <= sender.gone[v]:
                recipient.forget_victim(v, sender.gone[v])
                learned = True
    for r in rooms:
        if r in sender.mapped:
            learned |= recipient.map_room(r)
        for d in plan.room_doors[r]:
            if d in sender.rubble_seen:
                learned |= recipient.note_rubble(d, d in sender.rubble, sender.rubble_seen[d])
    return learned
