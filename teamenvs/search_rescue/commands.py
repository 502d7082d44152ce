"""Search-and-rescue commands: the `CommandSet`, what each agent may use now (its `Situation`), and the
discrete action catalogue (`catalogue`, `command_for`) of the RL interface (`teamenvs.core.rl`)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping

from teamenvs.core.commands import Arg, ChoiceArg, Command, CommandSet, IntArg, NameArg, ParseMemo, Situation, TextArg
from teamenvs.core.messaging import SAY, TELL
from teamenvs.core.rl import NOOP, candidates_in
from teamenvs.search_rescue.config import ENGINEER, MEDIC, SearchRescueConfig, role_of
from teamenvs.search_rescue.rules import LOCAL_RADIUS, LOCAL_SIDE, RUBBLE, WALL_MARK, Rescue
from teamenvs.search_rescue.view import VICTIM_SLOTS, nearest_victims, room_ids, room_slots
from teamenvs.search_rescue.world import CRITICAL, DIRECTIONS, HOSPITAL, victim_status

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
        Command("continue", (), "keep on with the action a message interrupted (offered only then)", ("continue",)),
    ]
)
_NOT_INTERRUPTED = "continue is offered only when a message for you interrupts an action you are busy with"
_NO_NAVIGATION = "there is no navigation assistance in this condition: walk with move, one cell at a time"


# Parses shared by situations and episodes (an agent's situation changes whenever it can name a new room, picks up or
# drops a victim): a command that starts with a command's name is read by that command alone, and when it parses, the
# parse read only whether the command is denied and its arguments' entries of the situation (`_arg_reads`), so the
# same text parses to the same action wherever those are the same. A failed parse is kept by the whole situation.
def _arg_reads(arg: Arg) -> tuple[tuple[str, str], ...]:
    """The situation entries a successful parse of `arg` reads, as (field, key)."""
    if isinstance(arg, IntArg):
        return (("limits", arg.name),)
    if isinstance(arg, NameArg):
        return (("names", arg.source),)
    if type(arg) is TextArg:
        return (("limits", arg.name),)  # its words per message
    if type(arg) is ChoiceArg:
        return ()
    raise TypeError(f"no reads declared for {type(arg).__name__}")


_PARSES = ParseMemo(COMMANDS, {c.name: tuple(r for a in c.args for r in _arg_reads(a)) for c in COMMANDS}, max_chars=400)
parse_in = _PARSES.parse  # longer commands than max_chars (none of the catalogue's) are parsed afresh


def situation(s: Rescue, cfg: SearchRescueConfig, agent: str, team: list[str]) -> Situation:
    """What `agent` may do now: its role's commands, pick up or drop, the rooms it can name, the victim numbers;
    interrupted by a message (`interrupt_to_talk`), only `continue`, `say` and `tell`."""
    role = role_of(agent)
    n = len(s.victims)
    names = {"agent": tuple(a for a in team if a != agent)}
    if agent in s.interrupted:
        why = "a message has interrupted what you are doing: answer it with say or tell, or continue"
        denied = {c: why for c in COMMANDS.commands if c not in ("continue", "say", "tell")}
        return Situation(denied, {"victim": (1, n)}, names)
    denied: dict[str, str] = {"continue": _NOT_INTERRUPTED}
    if not cfg.navigation:
        denied["go to"] = denied["go to victim"] = _NO_NAVIGATION
    if role != MEDIC:
        denied["stabilize victim"] = "only the medic can stabilize victims"
    if role != ENGINEER:
        denied["clear rubble"] = "only the engineer can clear rubble"
    carried = s.carrying[agent]
    if carried is not None:
        denied["pick up victim"] = f"you are already carrying victim {carried}; drop it first (one victim at a time)"
    else:
        denied["drop victim"] = "you are not carrying a victim"
    names["room"] = tuple(sorted(s.room_names[r] for r in s.know[agent].known_rooms(s.plan)))
    return Situation(denied, {"victim": (1, n)}, names, {"victim": f"victims are numbered 1 to {n}"})


def briefing_situation(cfg: SearchRescueConfig, agent: str, team: list[str], n_victims: int) -> Situation:
    """The situation the briefing's command list is written for (before the agent has seen anything)."""
    denied = {} if cfg.interrupt_to_talk else {"continue": _NOT_INTERRUPTED}
    if not cfg.navigation:
        denied["go to"] = denied["go to victim"] = _NO_NAVIGATION
    return Situation(denied, names={"agent": tuple(a for a in team if a != agent), "room": (HOSPITAL,)}, limits={"victim": (1, n_victims)})


# ---------------------------------------------------------------------- discrete actions
# The catalogue is the same for every agent (roles differ only through the mask). Labels name
# what to do: a step, a room by its id in the floor plan, a victim by its rank among the
# nearest known ones (the `victims` block of the observation), a direction for rubble, or a
# canned message; `command_for` turns a label into the command it stands for in a view.
CANNED = ("say known victims", "say medic needed", "say rubble", "say my room")


@lru_cache(maxsize=32)
def catalogue(config: SearchRescueConfig) -> tuple[str, ...]:
    """The action labels for this config; index 0 is the no-op (`wait`)."""
    slots = range(1, VICTIM_SLOTS + 1)
    return (
        NOOP,
        *(f"move {d}" for d in _DIRS),
        f"go to {HOSPITAL}",
        *(f"go to room {i}" for i in range(room_slots(config))),
        *(f"go to nearest victim {j}" for j in slots),
        *(f"pick up nearest victim {j}" for j in slots),
        *(f"stabilize nearest victim {j}" for j in slots),
        "drop victim",
        *(f"clear rubble {d}" for d in _DIRS),
        *CANNED,
    )


def command_for(view: Mapping[str, Any], label: str) -> str | None:
    """The command `label` stands for in this view, or None when it stands for nothing possible now."""
    return commands_now(view).get(label)


def candidates(view: Mapping[str, Any], labels: tuple[str, ...]) -> list[tuple[int, str]]:
    """(index, command) of every label of `labels` (a `catalogue`) that `command_for` gives a command in this view,
    in index order: the same pairs as asking `command_for` label by label, read off the view's table at once."""
    return candidates_in(commands_now(view), labels)


_NEIGHBOUR = {d: (LOCAL_RADIUS + dy) * LOCAL_SIDE + LOCAL_RADIUS + dx for d, (dx, dy) in DIRECTIONS.items()}
_NOW: list[tuple[Mapping[str, Any], dict[str, str]]] = []


def commands_now(view: Mapping[str, Any]) -> dict[str, str]:
    """Label -> command for every label that stands for a command in this view (the mask then asks the rules).

    Only the view decides: a label is left out when the agent can tell from what it knows that
    the rules would refuse its command (a known wall or rubble ahead, a victim out of reach by
    its notes, a room it knows no route to); the mask then asks the rules about the rest.
    """
    for seen, found in _NOW:
        if seen is view:
            return found
    if view["interrupted"]:  # the no-op carries on; the canned messages answer
        out = {NOOP: "continue", **(_canned(view) if view["communication"] != "none" else {})}
        _NOW.append((view, out))
        return out
    out: dict[str, str] = {NOOP: "wait"}
    local = view["local_map"]
    role = view["role"]
    for d in _DIRS:
        ahead = local[_NEIGHBOUR[d]]
        if ahead != WALL_MARK and ahead != RUBBLE:
            out[f"move {d}"] = f"move {d}"
        elif ahead == RUBBLE and role == ENGINEER:
            out[f"clear rubble {d}"] = f"clear rubble {d}"
    ids = room_ids(view)
    inside = view["room"] if view["doorway"] is None else None
    for name in view["rooms"]:  # rooms it knows a route to (all of them rooms it can name; none without navigation)
        if name != inside:
            out[f"go to room {ids.get(name)}"] = f"go to {name}"
            if name == HOSPITAL:
                out[f"go to {HOSPITAL}"] = f"go to {HOSPITAL}"
    carrying = view["carrying"] is not None
    x, y = view["cell"]
    for j, k in enumerate(nearest_victims(view), 1):
        vx, vy = k.cell
        if abs(vx - x) > 1 or abs(vy - y) > 1:
            if view["navigation"]:
                out[f"go to nearest victim {j}"] = f"go to victim {k.victim}"
        elif k.status == _NEEDS_MEDIC:
            if role == MEDIC:
                out[f"stabilize nearest victim {j}"] = f"stabilize victim {k.victim}"
        elif not carrying:
            out[f"pick up nearest victim {j}"] = f"pick up victim {k.victim}"
    if carrying and view["doorway"] is None:
        out["drop victim"] = "drop victim"
    if view["communication"] != "none":
        out.update(_canned(view))
    _NOW.append((view, out))  # the core asks label by label for one view, then the next
    if len(_NOW) > 4:
        del _NOW[0]
    return out


def _canned(view: Mapping[str, Any]) -> dict[str, str]:
    """The canned messages: each names victims or rooms, which passes on what the agent knows of them."""
    out = {"say my room": f"say I am in {view['room']}"}
    known = nearest_victims(view)
    if known:
        out["say known victims"] = "say I know of victims " + ", ".join(str(k.victim) for k in known)
    critical = next((k for k in known if k.status == _NEEDS_MEDIC), None)
    if critical is not None:
        out["say medic needed"] = f"say medic needed: victim {critical.victim} (critical) in {critical.room}"
    rubble = next(((view["room"], e["to"]) for e in view["exits"] if e["rubble"]), None)
    if rubble is None and view["known_rubble"]:
        rubble = view["known_rubble"][0]["rooms"]
    if rubble is not None:
        out["say rubble"] = f"say rubble between {rubble[0]} and {rubble[1]}"
    return out


_NEEDS_MEDIC = victim_status(CRITICAL, False)
