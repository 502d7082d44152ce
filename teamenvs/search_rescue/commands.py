"""Search-and-rescue commands: the `CommandSet` and what each agent may use now (its `Situation`)."""

from __future__ import annotations

from teamenvs.core.commands import ChoiceArg, Command, CommandSet, IntArg, NameArg, Situation
from teamenvs.core.messaging import SAY, TELL
from teamenvs.search_rescue.config import ENGINEER, MEDIC, role_of
from teamenvs.search_rescue.rules import Rescue
from teamenvs.search_rescue.world import DIRECTIONS, HOSPITAL

MAX_VICTIM_ID = 10_000
_DIRS = tuple(DIRECTIONS)

COMMANDS = CommandSet(
    [
        Command("move", (ChoiceArg("direction", _DIRS),), "step one cell (a medic or engineer carrying a victim needs 2 steps)", ("move north",)),
        Command(
            "go to",
            (NameArg("room", "room"),),
            "walk the shortest known route into a room you know of; you are busy until you arrive or are blocked",
            ("go to Hospital",),
        ),
        Command(
            "go to victim",
            (IntArg("victim", 1, MAX_VICTIM_ID, 1),),
            "walk next to a victim you know of; you are busy until you are there",
            ("go to victim 3",),
        ),
        Command(
            "pick up victim",
            (IntArg("victim", 1, MAX_VICTIM_ID, 1),),
            "pick up a victim on your cell or next to it (one at a time; a critical victim must be stabilized first)",
            ("pick up victim 3",),
        ),
        Command("drop victim", (), "put down the victim you carry; in the Hospital this rescues it", ("drop victim",)),
        Command(
            "stabilize victim",
            (IntArg("victim", 1, MAX_VICTIM_ID, 1),),
            "medic only: stabilize a critical victim on your cell or next to it (takes several steps)",
            ("stabilize victim 3",),
        ),
        Command(
            "clear rubble",
            (ChoiceArg("direction", _DIRS),),
            "engineer only: clear the rubble from the doorway next to you in that direction (takes several steps)",
            ("clear rubble east",),
        ),
        Command("say", SAY.args, SAY.help, ("say victims 3 (critical), 5 in Blue Lounge; rubble at its east door",)),
        Command("tell", TELL.args, TELL.help, ("tell medic victim 3 in Blue Lounge is critical",)),
        Command("wait", (), "do nothing this step", ("wait",)),
    ]
)


def situation(s: Rescue, agent: str, team: list[str]) -> Situation:
    """What `agent` may do now: its role's commands, pick up or drop, the rooms it can name, the victim numbers."""
    role = role_of(agent)
    denied: dict[str, str] = {}
    if role != MEDIC:
        denied["stabilize victim"] = "only the medic can stabilize victims"
    if role != ENGINEER:
        denied["clear rubble"] = "only the engineer can clear rubble"
    carried = s.carrying[agent]
    if carried is not None:
        denied["pick up victim"] = f"you are already carrying victim {carried}; drop it first (one victim at a time)"
    else:
        denied["drop victim"] = "you are not carrying a victim"
    known = sorted(s.room_names[r] for r in s.know[agent].known_rooms(s.plan))
    names = {"agent": tuple(a for a in team if a != agent), "room": tuple(known)}
    n = len(s.victims)
    return Situation(denied, {"victim": (1, n)}, names, {"victim": f"victims are numbered 1 to {n}"})


def briefing_situation(agent: str, team: list[str], n_victims: int) -> Situation:
    """The situation the briefing's command list is written for (before the agent has seen anything)."""
    return Situation(names={"agent": tuple(a for a in team if a != agent), "room": (HOSPITAL,)}, limits={"victim": (1, n_victims)})
