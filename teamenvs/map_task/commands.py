"""Map Task command language: `say`, the follower's `draw`/`erase`/`undo`/`reset`, `wait`; paths of grid
points (`PathArg`), and the patterns that read points, arrows, a follower's 'done' and a guide's grid
coordinates; the discrete action catalogue (`catalogue`, `command_for`, the pen's trail) and the
reading of the scripted pair's sentences that the numeric observation uses (`read_message`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

from teamenvs.core.commands import Arg, ArgError, Command, CommandSet, ParseMemo, TextArg, number_as_written, number_goes_on
from teamenvs.core.messaging import SAY
from teamenvs.core.rl import candidates_in
from teamenvs.core.text import quote
from teamenvs.map_task.scoring import Cell

# No two optional whitespace runs side by side ("\s*[,;\s]\s*" is "\s*[,;]\s*|\s+"), and no
# search restarting inside a whitespace run: linear time on any message or path.
_POINT = re.compile(r"(?<!\s)\s*(?:\(\s*)?(-?\d{1,6})(?:\s*[,;]\s*|\s+)(-?\d{1,6})(?P<after>\s*\)?)")
_NON_LETTER = re.compile(r"[^a-z]")
_ARROW = re.compile(r"(?<!\s)\s*(?:->|→|=>|-|to\b|then\b)\s*", re.IGNORECASE)
COORDINATES = re.compile(
    r"\(\s*\d+(?:\s*[,;]\s*|\s+)\d+\s*\)|\b\d+\s*[,;]\s*\d+\b|\b\d+\s+\d+\s*(?:->|→)|(?:->|→)\s*\d+\s+\d+\b"
    r"|\b[xy]\s*(?:[=:]\s*)?\d+\b"
    r"|\b(?:rows?|columns?|cols?\.?|cells?|squares?|coordinates?)\s*(?:(?:no\.?|number|#)\s*)?\d+\b"
    r"|\b\d+(?:st|nd|rd|th)\s+(?:row|column|col)\b",
    re.IGNORECASE,
)


def says_done(message: str) -> bool:
    """Whether a message is the follower's 'done' (letters only, any case or punctuation)."""
    return _NON_LETTER.sub("", message.lower()) == "done"


_DIGIT = re.compile(r"\d")  # every pattern of COORDINATES holds one, and most messages none: the quick test first


def refers_to_coordinates(message: str) -> bool:
    """Whether a message refers to grid coordinates (rows, columns, numbered cells, x/y values, point pairs)."""
    return _DIGIT.search(message) is not None and COORDINATES.search(message) is not None


@dataclass(frozen=True)
class PathArg(Arg):
    """A chain of grid points `x,y -> x,y [-> x,y ...]` (parentheses optional), inside the map."""

    def parse(self, rest, situation, command):
        xs = situation.limits.get("x", (0, 59))
        ys = situation.limits.get("y", (0, 59))
        points: list[Cell] = []
        text = rest
        while True:
            m = _POINT.match(text)
            if m is None:
                break
            # a bare '-' joins points ("2,3-6,3"), so no range is read after one; a point read as its first digits is not
            if number_goes_on(text[m.start("after"):m.start("after") + 40], ranges=False):
                written = number_as_written(text[m.start(1):m.start("after")].strip(" ("), text[m.start("after"):m.start("after") + 40])
                raise ArgError(f"a point is two whole numbers x,y in digits alone (got {quote(written, 24)})")
            x, y = int(m.group(1)), int(m.group(2))
            if not (xs[0] <= x <= xs[1] and ys[0] <= y <= ys[1]):
                raise ArgError(f"point ({x},{y}) is off the map: x runs {xs[0]}-{xs[1]} (columns), y runs {ys[0]}-{ys[1]} (rows)")
            points.append((x, y))
            text = text[m.end():]
            arrow = _ARROW.match(text)
            if arrow is None or not _POINT.match(text[arrow.end():]):
                break
            text = text[arrow.end():]
        if len(points) < 2:
            raise ArgError(f"'{command.name}' needs at least two points joined by '->', e.g. '{command.example_text(situation)}'")
        return tuple(points), text

    def format(self, value) -> str:
        return " -> ".join(f"{x},{y}" for x, y in value)

    def usage(self, situation=None):
        return "<x,y -> x,y [-> x,y ...]>"

    def example(self, situation=None):
        return "2,3 -> 6,3 -> 6,8"

    exact = True

    def grammar(self, situation):
        """Points `x,y` on the map joined by ` -> `, two or more (constrained decoding)."""
        from teamenvs.core.constrain import Lit, Repeat, Seq, int_range

        xs = situation.limits.get("x", (0, 59))
        ys = situation.limits.get("y", (0, 59))
        point = Seq((int_range(*xs), Lit(","), int_range(*ys)))
        return Seq((point, Repeat(Seq((Lit(" -> "), point)), 1, None)))

    def sample(self, rng, situation):
        xs = situation.limits.get("x", (0, 19))
        ys = situation.limits.get("y", (0, 19))
        x, y = int(rng.integers(xs[0], xs[1] + 1)), int(rng.integers(ys[0], ys[1] + 1))
        if rng.random() < 0.5:
            return f"{x},{y} -> {int(rng.integers(xs[0], xs[1] + 1))},{y}"
        return f"{x},{y} -> {x},{int(rng.integers(ys[0], ys[1] + 1))}"


@dataclass(frozen=True)
class MessageArg(TextArg):
    """A message to the partner: free text, as any message. Only constrained decoding reads it otherwise: where the
    rules refuse messages that refer to grid coordinates (the guide, unless `allow_coordinates`), a constraint admits
    messages without digits but in "<way> <n> step(s)" (the scripted guide's counts), none of which refers to
    coordinates (`accepted_grammar`)."""

    def accepted_grammar(self, situation, accepts):
        from teamenvs.core.constrain import Alt, Chars, Lit, Repeat, Seq, one_of

        if accepts(COORDINATE_PROBE):  # no rule on coordinates for this agent now: any message
            return NotImplemented
        if not accepts(STEPS_PROBE):
            return None
        # letters and ASCII punctuation, no digit (a Unicode digit is a digit to the rules too) and no '<'; digits only
        # right after a way ("east 3 steps"), where no pattern of `refers_to_coordinates` can match them
        steps = Seq((one_of(WAYS), Lit(" "), Chars("0-9", 1, 2), Lit(" step"), Chars("s", 0, 1)))
        return Seq((Alt((Chars("A-Za-z"), steps)), Repeat(Alt((Chars(" -/:;=-~"), steps)), 0, MAX_MESSAGE_PARTS)))


COORDINATE_PROBE = "3,4"  # a message the rule on coordinates refuses
STEPS_PROBE = "go east 3 steps"  # one it accepts
MAX_MESSAGE_PARTS = 1_000  # characters or "<way> <n> steps" phrases of a constrained message (the parser keeps 2,000 characters)

DRAWING = ("draw", "erase", "undo", "reset")
COMMANDS = CommandSet(
    [
        Command("say", (MessageArg("message", SAY.args[0].example_value),),
                "send a message to your partner (it arrives next step); the follower ends the task with 'say done'",
                ("say go east until you are just south of the old mill",)),
        Command("draw", (PathArg("path"),), "follower: draw straight horizontal or vertical segments through the points", ("draw 2,3 -> 6,3 -> 6,8",)),
        Command("erase", (PathArg("path"),), "follower: erase the drawn segments along the points", ("erase 6,3 -> 6,8",)),
        Command("undo", (), "follower: undo your last draw, erase or reset", ("undo",)),
        Command("reset", (), "follower: clear the whole drawing", ("reset",)),
        Command("wait", (), "do nothing this step", ("wait",)),
    ]
)


# ---------------------------------------------------------------------- discrete actions (teamenvs.core.rl)
# One catalogue for both roles (the mask tells them apart): the follower's cell steps from the pen
# (drawn with the `draw` command above), erasing the last step, undo, reset and its replies; the
# guide's small instruction vocabulary in the scripted pair's grammar (baselines.py), so that a
# learner can play with a scripted partner: "go <way> <n> steps" and "go <way> until you are just
# <opposite way> of <landmark k>" (walk that way and stop just before the landmark), landmark k
# being the k-th of the guide's own landmarks (its map key's order).
WAYS = {"north": (0, -1), "south": (0, 1), "east": (1, 0), "west": (-1, 0)}
OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}
COUNTS = (1, 2, 3, 4, 5, 6, 8, 10)
FINISH_TEXT = "that is the finish"
UNDO_TEXT = "undo that"
AGAIN_TEXT = "say again?"


def _cell_step(way: str) -> str:
    return f"draw step {way}"


def catalogue(config) -> tuple[str, ...]:
    """The action labels under `config` (index 0 the no-op): the same for both roles."""
    from teamenvs.core.rl import NOOP
    from teamenvs.map_task.config import sizes

    n = sizes(config).guide_landmarks
    return (
        NOOP,
        *(_cell_step(w) for w in WAYS), "erase last step", "undo", "reset",
        "say done", "say ok", f"say {AGAIN_TEXT}", "say I have no <the landmark just named>",
        *(f"say go {w} {k} step{'s' if k > 1 else ''}" for w in WAYS for k in COUNTS),
        *(f"say go {w} until just {OPPOSITE[w]} of landmark {k}" for w in WAYS for k in range(1, n + 1)),
        f"say {UNDO_TEXT}", f"say {FINISH_TEXT}",
    )


def _label_specs(max_landmarks: int = 64) -> dict[str, tuple[str, Any]]:
    """label -> (role, what): every label any config can have, with the data command_for needs."""
    from teamenvs.core.rl import NOOP

    specs: dict[str, tuple[str, Any]] = {NOOP: ("any", ("wait",))}
    for w in WAYS:
        specs[_cell_step(w)] = ("follower", ("step", WAYS[w]))
    specs["erase last step"] = ("follower", ("back",))
    specs["undo"] = ("follower", ("plain", "undo"))
    specs["reset"] = ("follower", ("plain", "reset"))
    for text in ("done", "ok", AGAIN_TEXT):
        specs[f"say {text}"] = ("follower", ("plain", f"say {text}"))
    specs["say I have no <the landmark just named>"] = ("follower", ("missing",))
    for w in WAYS:
        for k in COUNTS:
            specs[f"say go {w} {k} step{'s' if k > 1 else ''}"] = ("guide", ("count", w, k))
        for k in range(1, max_landmarks + 1):
            specs[f"say go {w} until just {OPPOSITE[w]} of landmark {k}"] = ("guide", ("landmark", w, k - 1))
    specs[f"say {UNDO_TEXT}"] = ("guide", ("plain", f"say {UNDO_TEXT}"))
    specs[f"say {FINISH_TEXT}"] = ("guide", ("plain", f"say {FINISH_TEXT}"))
    return specs


_SPECS = _label_specs()
NOOP_LABEL = next(iter(_SPECS))
_FOLLOWER_PLAIN = ((NOOP_LABEL, "wait"), *((label, what[1]) for label, (role, what) in _SPECS.items() if role == "follower" and what[0] == "plain"))


def instruction(way: str, side: str, name: str, max_words: int | None) -> str:
    """The guide's landmark instruction, in the short form when the long one would be cut (as the scripted guide)."""
    long = f"go {way} until you are just {side} of the {name}"
    return long if max_words is None or len(long.split()) <= max_words else f"{way} till {side} of {name}"


def count_instruction(way: str, n: int, max_words: int | None) -> str:
    unit = "step" if n == 1 else "steps"
    return f"go {way} {n} {unit}" if max_words is None or max_words >= 4 else f"{way} {n} {unit}"


def pen_trail(start: Cell, drawing: Sequence[tuple[Cell, Cell]]) -> tuple[Cell, ...]:
    """The pen's trail: from the start along the drawn unit segments while the way on is unique
    (it stops at a branch, a dead end or a cell already passed). Its last cell is where the pen
    rests, the start when nothing drawn touches it. A function of what the follower sees."""
    return _walk(start, drawing)[0]


def _walk(start: Cell, drawing: Sequence[tuple[Cell, Cell]]) -> tuple[tuple[Cell, ...], tuple[Cell, ...]]:
    """(`pen_trail`, the cells the drawing joins to the pen's cell by a unit segment)."""
    links: dict[Cell, list[Cell]] = {}
    for a, b in drawing:
        links.setdefault(a, []).append(b)
        links.setdefault(b, []).append(a)
    trail = [start]
    seen = {start}
    previous = None
    cell = start
    while True:
        ways = [c for c in links.get(cell, ()) if c != previous]
        if len(ways) != 1 or ways[0] in seen:
            return tuple(trail), tuple(links.get(cell, ()))
        previous, cell = cell, ways[0]
        trail.append(cell)
        seen.add(cell)


def _pen(view) -> tuple[tuple[int, int], ...] | None:
    """The pen's trail in a view that shows the drawing (None: it does not)."""
    drawing = view.get("drawing")
    if drawing is None:
        return None
    return trail_of(view["start"], drawing)


_last_walk: tuple = (None, None, ((), ()))  # (drawing, start, `_walk`): the env shares one drawing tuple per drawing


def walk_of(start: Cell, drawing) -> tuple[tuple[Cell, ...], tuple[Cell, ...]]:
    """`_walk`, remembered for the last drawing object seen (views share one drawing tuple per drawing)."""
    global _last_walk
    seen, at, walk = _last_walk
    if seen is not drawing or at != start:
        walk = _walk(start, drawing)
        _last_walk = (drawing, start, walk)
    return walk


def trail_of(start: Cell, drawing) -> tuple[Cell, ...]:
    """`pen_trail`, remembered for the last drawing object seen."""
    return walk_of(start, drawing)[0]


def _commands(view) -> dict[str, str]:
    """Every label's command in this view (labels impossible now left out): the role's own labels only."""
    if view["role"] == "guide":
        names = tuple(lm["name"] for lm in view["landmarks"])
        return dict(_guide_commands(names, view["max_words"]))
    table = dict(_FOLLOWER_PLAIN)
    trail = _pen(view)
    if trail is not None:
        x, y = trail[-1]
        width, height = view["width"], view["height"]
        for way, (dx, dy) in WAYS.items():
            if 0 <= x + dx < width and 0 <= y + dy < height:
                table[_cell_step(way)] = f"draw {x},{y} -> {x + dx},{y + dy}"
        if len(trail) > 1:
            u, v = trail[-2]
            table["erase last step"] = f"erase {x},{y} -> {u},{v}"
    name = named_missing(view)
    if name is not None:
        table["say I have no <the landmark just named>"] = f"say I have no {name}"
    return table


@lru_cache(maxsize=256)
def _guide_commands(names: tuple[str, ...], max_words: int | None) -> tuple[tuple[str, str], ...]:
    """The guide's labels and their messages for its landmarks (by name, in its key's order) and the word limit."""
    out = [(NOOP_LABEL, "wait")]
    for label, (role, what) in _SPECS.items():
        if role != "guide":
            continue
        if what[0] == "plain":
            out.append((label, what[1]))
        elif what[0] == "count":
            out.append((label, f"say {count_instruction(what[1], what[2], max_words)}"))
        elif what[2] < len(names):
            out.append((label, f"say {instruction(what[1], OPPOSITE[what[1]], names[what[2]], max_words)}"))
    return tuple(out)


_last_table: tuple = (None, {})  # (view, its commands): the mask asks for every label of one view in turn


def mask_key(view, obstacles: frozenset[Cell] = frozenset()) -> tuple:
    """What a view's action mask depends on within one situation (see `TeamEnv._mask_key`), exactly.

    The guide's commands are its landmark names under the word limit, and the rules refuse a
    message only by its text (config-wide `allow_coordinates`). The follower's are what its drawing
    gives (`_pen_key`) and the landmark its partner named that its map lacks; undo, reset and its
    messages depend on the situation alone.
    """
    if view["role"] == "guide":
        return ("guide", tuple(lm["name"] for lm in view["landmarks"]), view["max_words"])
    missing = named_missing(view)
    pen = _pen_key(view, obstacles)
    return ("follower", None, missing) if pen is None else ("follower", *pen, missing)


_last_pen: tuple = (None, None, None, 0, 0, None)  # (drawing, obstacles, start, width, height, `_pen_key`)


def _pen_key(view, obstacles: frozenset[Cell]) -> tuple | None:
    """The follower's mask key from its drawing (None where the view shows none): the map's size, the pen cell, the
    cell before it on the trail, whether each of the four unit segments from the pen is drawn, and whether the pen's
    cell and each of its four neighbours is one of the episode's `obstacles` (a draw step's refusal: the env passes
    them, since neither the follower's view nor its situation, which outlasts the episode, shows them; only these
    five cells, so that a key recurs across episodes). Remembered for the last drawing and obstacles objects seen:
    the views of a step, and of the steps that draw nothing, share one drawing tuple."""
    global _last_pen
    drawing = view.get("drawing")
    if drawing is None:
        return None
    start, width, height = view["start"], view["width"], view["height"]
    seen, seen_obstacles, at, w, h, key = _last_pen
    if seen is drawing and seen_obstacles is obstacles and at == start and w == width and h == height:
        return key
    trail, joined = walk_of(start, drawing)
    cell = trail[-1]
    x, y = cell
    around = ((x, y - 1), (x, y + 1), (x + 1, y), (x - 1, y))
    flags = tuple(n in joined for n in around)
    blocked = (cell in obstacles, *(n in obstacles for n in around))
    key = (width, height, cell, trail[-2] if len(trail) > 1 else None, flags, blocked)
    _last_pen = (drawing, obstacles, start, width, height, key)
    return key


# Parses shared by situations and episodes. A command that starts with a command's name (and a space)
# is read by that command alone, never searched for in prose; when it parses, the parse read only
# whether the command is denied and its arguments' limits (`_READS`), so the same text parses to the
# same action wherever those are the same. A failed parse is kept by the whole situation.
def _arg_reads(arg: Arg) -> tuple[tuple[str, str], ...]:
    """The situation entries a successful parse of `arg` reads, as (field, key)."""
    if isinstance(arg, PathArg):
        return (("limits", "x"), ("limits", "y"))
    if type(arg) in (TextArg, MessageArg):
        return (("limits", arg.name),)  # its words per message
    raise TypeError(f"no reads declared for {type(arg).__name__}")


_PARSES = ParseMemo(COMMANDS, {c.name: tuple(r for a in c.args for r in _arg_reads(a)) for c in COMMANDS}, max_chars=200)
parse_in = _PARSES.parse  # longer commands than max_chars (none of the catalogue's) are parsed afresh


def _table_of(view) -> dict[str, str]:
    """`_commands(view)`, built once per view (views are built afresh every step, and never changed)."""
    global _last_table
    seen, table = _last_table
    if seen is not view:
        table = _commands(view)
        _last_table = (view, table)
    return table


def command_for(view, label: str) -> str | None:
    """The command `label` stands for in `view` (its role's own labels only), or None when impossible now."""
    return _table_of(view).get(label)


def candidates(view, labels: tuple[str, ...]) -> list[tuple[int, str]]:
    """(index, command) of every label of `labels` (a `catalogue`) that `command_for` gives a command in this view,
    in index order: the same pairs as asking `command_for` label by label, read off the view's table at once."""
    return candidates_in(_table_of(view), labels)


# ---------------------------------------------------------------------- reading canned messages
MESSAGE_KINDS = ("landmark", "count", "finish", "undo", "ok", "again", "done", "missing", "other")
_READ_LANDMARK = re.compile(r"^(?:go )?(north|south|east|west) (?:until you are just|till) (north|south|east|west) of (?:the )?(.+?)\.?$")
_READ_COUNT = re.compile(r"^(?:go )?(north|south|east|west) (\d{1,4}) steps?\.?$")
_READ_MISSING = re.compile(r"^i have no (?:the )?(.+?)\.?$")


@lru_cache(maxsize=4096)
def read_message(text: str) -> tuple[str, str | None, str | None, str | None, int]:
    """A message read in the scripted pair's grammar: (kind, way, side, landmark name, count);
    kind is one of MESSAGE_KINDS ("other" for any other text)."""
    t = text.strip().lower()
    m = _READ_LANDMARK.match(t)
    if m:
        return "landmark", m.group(1), m.group(2), m.group(3), 0
    m = _READ_COUNT.match(t)
    if m:
        return "count", m.group(1), None, None, int(m.group(2))
    if t.startswith(FINISH_TEXT):
        return "finish", None, None, None, 0
    if t.startswith(UNDO_TEXT):
        return "undo", None, None, None, 0
    if t.startswith("say again"):
        return "again", None, None, None, 0
    if t.startswith("ok"):
        return "ok", None, None, None, 0
    if says_done(t):
        return "done", None, None, None, 0
    m = _READ_MISSING.match(t)
    if m:
        return "missing", None, None, m.group(1).strip(), 0
    return "other", None, None, None, 0


def latest_message(view, mine: bool) -> tuple[str | None, bool]:
    """(text, whether it arrived this step) of the latest message the partner sent (`mine`: the agent's own
    latest), from the view's new messages and recent conversation; (None, False) if there is none."""
    if not mine:
        for line in reversed(view["new_messages"]):
            if not line.startswith("you -> "):
                return line.split(": ", 1)[1], True
    for line in reversed(view["recent_messages"]):
        if line.startswith("you -> ") == mine:
            return line.split(": ", 1)[1], False
    return None, False


def named_missing(view) -> str | None:
    """The landmark the partner's latest message names when it is not on the agent's own map (else None)."""
    text, _ = latest_message(view, mine=False)
    if text is None:
        return None
    kind, _, _, name, _ = read_message(text)
    if kind != "landmark" or any(lm["name"] == name for lm in view["landmarks"]):
        return None
    return name
