"""The command language: each paradigm declares its commands once; one parser reads any string.

A `Command` is a keyword phrase (`invest group`, `pick up victim`, `wait`) followed by typed
arguments. `CommandSet.parse` turns any input (prose around a command, a last line
`ACTION: ...`, a JSON object `{"action": ..., "args": {...}}`, empty strings, megabytes of
garbage) into either an `Action` or an `ActionError` whose message says exactly what was
wrong and what the valid forms are. It never raises.

What an agent may do at a given moment is a `Situation`: commands denied now (with the
reason), live bounds for integer arguments, and the names an agent may refer to. The same
declaration produces the `valid_actions` forms in `info` and the command section of the
briefing, so prose and mechanics cannot drift apart.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import difflib
import itertools
import json
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np

from teamenvs.core.text import clean_text, close_match, quote

MAX_ACTION_CHARS = 10_000
MAX_TEXT_ARG_CHARS = 2_000
MAX_SEARCH_TRIES = 32  # command words tried in prose before giving up (see CommandSet._search)
# In prose, a command the same clause negates before it ("I will not invest group 100; I'll wait", "rather than wait")
# is what the writer chose against: the search passes over it. A clause ends at punctuation or a new line.
_NEGATION = re.compile(r"(?<![\w'’])(?:(?<!why\s)not|no|never|cannot|instead\s+of|rather\s+than)(?![\w'’])|n['’]t(?![\w])",
                       re.IGNORECASE)
_CLAUSE_END = re.compile(r"[.,;:!?()\n]")
_STRIP = " \t\r\n`'\"*_>#."
_RANDOM_WORDS = (
    "let's", "all", "invest", "in", "the", "group", "pool", "I", "will", "cooperate",
    "trust", "me", "share", "fair", "agree", "plan", "next", "round", "together", "ok",
)


class ArgError(Exception):
    """Raised inside argument parsing only; the parser turns it into an `ActionError`."""


@dataclass(frozen=True)
class Situation:
    """What one agent may do right now.

    `denied` maps a command name to the reason it is not allowed now (commands absent are
    allowed); `limits` narrows integer arguments by name to the (low, high) in force now;
    `names` gives, per name source (e.g. "agent"), the names the agent may use now;
    `limit_reasons` explains a narrowed limit to the agent (e.g. "you have $80"); `choices` gives, for an integer
    argument whose allowed values now are not a whole range (the numbers of the offers open to an agent), those
    values in order: the usage lists them and a sample draws one (`limits` still holds their range, which parsing
    reads, so a number between them is refused by the rules with their own reason).
    """

    denied: Mapping[str, str] = field(default_factory=dict)
    limits: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    limit_reasons: Mapping[str, str] = field(default_factory=dict)
    choices: Mapping[str, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Arg(ABC):
    """Base class of a command argument: parses a prefix of the remaining text."""

    name: str

    @abstractmethod
    def parse(self, rest: str, situation: Situation, command: "Command") -> tuple[Any, str]:
        """Read this argument from the start of `rest`; return (value, the text after it) or raise ArgError."""

    def usage(self, situation: Situation | None = None) -> str:
        return f"<{self.name}>"

    def format(self, value: Any) -> str:
        """The value as written in an action's canonical text."""
        return str(value)

    @abstractmethod
    def example(self, situation: Situation | None = None) -> str:
        """A valid value for examples in usage lines and briefings."""

    @abstractmethod
    def sample(self, rng: np.random.Generator, situation: Situation) -> str:
        """A uniformly drawn valid value, as text (for the random policy)."""

    def spec(self, situation: Situation | None = None) -> dict[str, Any]:
        return {"name": self.name, "kind": type(self).__name__.removesuffix("Arg").lower()}

    # constrained decoding (teamenvs.core.constrain): the values this argument admits now, as a
    # grammar and as a JSON schema. An argument type without its own is one line of free text.
    exact: ClassVar[bool] = False

    def grammar(self, situation: Situation) -> Any:
        """The values admitted now as a `teamenvs.core.constrain` node (None: no value is possible now)."""
        from teamenvs.core.constrain import free_text

        return free_text(MAX_TEXT_ARG_CHARS)

    def exact_for(self, situation: Situation) -> bool:
        """Whether `grammar(situation)` admits only values that parse (False: a looser superset)."""
        return self.exact

    def json_schema(self, situation: Situation) -> dict[str, Any]:
        """The values admitted now as a JSON schema (a value of the `args` object of a JSON action):
        by default a string matching the grammar."""
        from teamenvs.core.constrain import json_pattern

        return {"type": "string", "pattern": json_pattern(self.grammar(situation))}

    def values(self, situation: Situation) -> tuple[str, ...] | None:
        """Every value admitted now, as written, when they are few enough to try one by one against the
        rules (`teamenvs.core.constrain.constraint_for` with `accepts`); None: too many, or free text."""
        return None

    def accepted_grammar(self, situation: Situation, accepts: Callable[[str], bool]) -> Any:
        """For an argument with too many values to try one by one (`values` is None): the grammar of the values
        the rules accept now, given `accepts` (whether the rules accept the command with this value), built by
        trying the parts of a value the rules read; `NotImplemented` where the argument type cannot (its
        command keeps the command language's grammar), None when no value is accepted."""
        return NotImplemented


ENUMERABLE_INTS = 64  # an integer argument with at most this many values now can be tried value by value


# One optional whitespace run per optional separator: three runs in a row backtracked in
# cubic time on whitespace followed by a non-digit (see tests/hostile/test_actions.py). Each
# run is taken whole, never given back (`(?=(?P<ws>\s*))(?P=ws)`: an atomic group, as
# `_start` below): no separator or digit is whitespace, so giving some back could not help,
# and it cost a backtracking pass over a long run (1 ms for 10,000 spaces before a non-digit).
_INT_RE = re.compile(r"(?<!\s)(?=(?P<ws>\s*))(?P=ws)(?:[:=](?=(?P<ws2>\s*))(?P=ws2))?(?:\$(?=(?P<ws3>\s*))(?P=ws3))?"
                     r"(?P<digits>-?\d[\d,_]*)(?P<decimals>\.\d+)?")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+")  # digits grouped by commas, as numbers are written in English
# What, right after a number's digits, shows the number goes on: a letter or digit ("10k", "1e1", "0x10", a digit past
# a pattern's last), "%", "/", "_", or a decimal point, comma or Arabic separator before a digit ("1.5", "50.0.0",
# "100,000" read three digits at a time, "50٫5"); `_range` adds a range or sum ("5-10", "50 - 60", "50 + 10")
_NUMBER_GOES_ON = re.compile(r"[^\W_]|[%/_]|[.,\u066b\u066c]\d")
_RANGE = re.compile(r"(?<!\s)\s*[-+\u2013]\s*\d+")  # (after a non-space: a search never restarts inside a run)
_PUNCTUATION = _STRIP + ",;:!?"  # what may end a line after a command and leave it a command


def _range(after: str) -> re.Match | None:
    """A range or sum right after a number ("-10" in "5-10"): joined tight, or spaced ("50 - 60") where nothing but
    punctuation follows (or the second number goes on): "harvest 20 - 5 fewer than last month" is prose."""
    found = _RANGE.match(after)
    if found is None or after[:1] in "-+\u2013":  # none, or tight: "5-10", "10+5"
        return found
    rest = after[found.end():]
    return found if not rest.strip(_PUNCTUATION) or _NUMBER_GOES_ON.match(rest) else None


# What may join another value to an argument's: "fulfill order 1 2", "decide A, B or C", "accept offer 2 and 3"
_ANOTHER = re.compile(r"(?<!\s)\s*(?:,\s*)?(?:(?P<alternative>(?:or|nor)\b|/)|and\b|[&+])?", re.IGNORECASE)
MORE_VALUES = 8  # values after a command's last argument looked at: a list that runs on past them is more values


def number_goes_on(after: str, ranges: bool = True) -> bool:
    """Whether `after`, the text right after a number's digits, goes on with the number (`_NUMBER_GOES_ON`, and with
    `ranges` a range or sum, `_range`): read as its first digits, the rest would be dropped without a word to the agent."""
    return _NUMBER_GOES_ON.match(after) is not None or (ranges and _range(after) is not None)


def number_as_written(start: str, after: str) -> str:
    """The number an agent wrote, for an error: `start` (its digits as read) and what went on after them up to the
    next space, a range's second number included ("50 - 60")."""
    gone_on = _RANGE.match(after) if _NUMBER_GOES_ON.match(after) is None else None
    cut = gone_on.end() if gone_on is not None else 0
    word = after[cut:].split(None, 1) if after[cut:cut + 1].strip() else []
    return start + after[:cut] + (word[0] if word else "")


@dataclass(frozen=True)
class IntArg(Arg):
    """A whole number in [low, high]; a `Situation` may narrow the range by the argument's name."""

    low: int = 0
    high: int = 10**6
    example_value: int | None = None

    def bounds(self, situation: Situation | None) -> tuple[int, int]:
        if situation is not None and self.name in situation.limits:
            return situation.limits[self.name]
        return self.low, self.high

    def parse(self, rest, situation, command):
        match = _INT_RE.match(rest)
        low, high = self.bounds(situation)
        if match is None:
            raise ArgError(
                f"'{command.name}' needs {self.name}: a whole number from {low} to {high}, "
                f"e.g. '{command.example_text(situation)}'"
            )
        written, decimals = match.group("digits"), match.group("decimals")
        if number_goes_on(rest[match.end():]):
            # "10k", "1e1", "0x10", "10%", "3/4", "5-10", "50.0.0": not the number its first digits spell
            word = number_as_written(written + (decimals or ""), rest[match.end():match.end() + 40])
            raise ArgError(f"{self.name} must be a whole number from {low} to {high}, written in digits alone (got {quote(word, 24)})")
        grouped = written.rstrip(",")
        if "," in grouped and not _THOUSANDS.fullmatch(grouped):  # "1,5": a decimal comma or two numbers, not 15
            raise ArgError(f"{self.name} must be a whole number from {low} to {high} (got {quote(grouped, 24)}: "
                           f"commas may only group thousands, as in 1,000)")
        digits = written.replace(",", "").replace("_", "")
        if decimals and set(decimals[1:]) != {"0"}:
            raise ArgError(f"{self.name} must be a whole number from {low} to {high} (got {digits}{decimals})")
        if len(digits.lstrip("-")) > 12:
            raise ArgError(f"{self.name} must be a whole number from {low} to {high} (got a {len(digits)}-digit number)")
        value = int(digits)
        if not self.low <= value <= self.high:
            raise ArgError(f"{self.name} must be a whole number from {low} to {high} (got {value})")
        return value, rest[match.end():]

    def choices(self, situation: Situation | None) -> tuple[int, ...] | None:
        """The values allowed now where the situation lists them (`Situation.choices`), else None (the whole range)."""
        return situation.choices.get(self.name) if situation is not None and situation.choices else None

    def usage(self, situation=None):
        choices = self.choices(situation)
        if choices:
            return f"<{self.name} {'|'.join(map(str, choices))}>"
        low, high = self.bounds(situation)
        return f"<{self.name} {low}-{high}>"

    def example(self, situation=None):
        choices = self.choices(situation)
        if choices:
            return str(self.example_value if self.example_value in choices else choices[0])
        low, high = self.bounds(situation)
        value = self.example_value if self.example_value is not None else low
        return str(min(max(value, low), high))

    def sample(self, rng, situation):
        choices = self.choices(situation)
        if choices:
            return str(choices[int(rng.integers(len(choices)))])
        low, high = self.bounds(situation)
        return str(int(rng.integers(low, high + 1)))

    def spec(self, situation=None):
        low, high = self.bounds(situation)
        choices = self.choices(situation)
        return {"name": self.name, "kind": "int", "low": low, "high": high, **({"choices": list(choices)} if choices else {})}

    exact = True

    def grammar(self, situation):
        from teamenvs.core.constrain import int_range, one_of

        choices = self.choices(situation)
        if choices:
            return one_of(map(str, choices))
        low, high = self.bounds(situation)
        return int_range(low, high) if low <= high else None

    def json_schema(self, situation):
        choices = self.choices(situation)
        if choices:
            return {"type": "integer", "enum": list(choices)}
        low, high = self.bounds(situation)
        return {"type": "integer", "minimum": low, "maximum": high}

    def values(self, situation):
        choices = self.choices(situation)
        if choices:
            return tuple(map(str, choices))
        low, high = self.bounds(situation)
        return tuple(str(i) for i in range(low, high + 1)) if high - low < ENUMERABLE_INTS else None


@dataclass(frozen=True)
class ChoiceArg(Arg):
    """One word out of a fixed list (case-insensitive)."""

    choices: tuple[str, ...] = ()

    def parse(self, rest, situation, command):
        words = rest.split(None, 1)
        word = words[0].strip(_STRIP + ",;:!?").lower() if words else ""
        if word in self.choices:
            return word, (words[1] if len(words) > 1 else "")
        got = f" (got {quote(word, 30)})" if word else ""
        raise ArgError(f"{self.name} must be one of {', '.join(self.choices)}{got}")

    def usage(self, situation=None):
        return "|".join(self.choices)

    def example(self, situation=None):
        return self.choices[0]

    def sample(self, rng, situation):
        return self.choices[int(rng.integers(len(self.choices)))]

    def spec(self, situation=None):
        return {"name": self.name, "kind": "choice", "choices": list(self.choices)}

    exact = True

    def grammar(self, situation):
        from teamenvs.core.constrain import one_of

        return one_of(self.choices) if self.choices else None

    def json_schema(self, situation):
        return {"type": "string", "enum": list(self.choices)}

    def values(self, situation):
        return self.choices


@dataclass(frozen=True)
class NameArg(Arg):
    """A name from a live list (agents, rooms, companies), matched case-insensitively, longest first."""

    source: str = "agent"

    def _names(self, situation: Situation | None) -> tuple[str, ...]:
        return tuple(situation.names.get(self.source, ())) if situation is not None else ()

    def parse(self, rest, situation, command):
        names = self._names(situation)
        text = rest.lstrip(" :,\t\"'`")
        lowered = text.lower()
        for name in sorted(names, key=len, reverse=True):
            if lowered.startswith(name.lower()):
                tail = text[len(name):]
                if not tail or not (tail[0].isalnum() or tail[0] == "_"):
                    return name, tail
        word = text.split(None, 1)[0].strip(_STRIP + ",;:!?") if text.strip() else ""
        if not word:
            raise ArgError(f"'{command.name}' needs {self.name}: one of {', '.join(names) or '(none now)'}")
        lowered = [n.lower() for n in names]
        close = close_match(word.lower(), lowered, cutoff=0.5)
        hint = f" Did you mean '{names[lowered.index(close)]}'?" if close is not None else ""
        raise ArgError(f"unknown {self.name} {quote(word, 30)}.{hint} Known: {', '.join(names) or '(none now)'}")

    def example(self, situation=None):
        names = self._names(situation)
        return names[0] if names else self.name

    def sample(self, rng, situation):
        names = self._names(situation)
        return names[int(rng.integers(len(names)))] if names else self.name

    def spec(self, situation=None):
        return {"name": self.name, "kind": "name", "choices": list(self._names(situation))}

    exact = True

    def grammar(self, situation):
        from teamenvs.core.constrain import one_of

        names = self._names(situation)
        return one_of(names) if names else None

    def json_schema(self, situation):
        return {"type": "string", "enum": list(self._names(situation))}

    def values(self, situation):
        return self._names(situation)


def too_many_words(words: int, limit: int) -> str:
    """Why a message of `words` words is refused under a limit of `limit` words a message."""
    return f"it has {words} words, and a message may hold at most {limit} words: say it in fewer"


@dataclass(frozen=True)
class TextArg(Arg):
    """Free text to the end of the input (a message, a thought). A `Situation` limit by the argument's name,
    (1, n), caps its words at n (a bandwidth condition's words per message)."""

    example_value: str = "hello"

    def word_limit(self, situation: Situation | None) -> int | None:
        bounds = situation.limits.get(self.name) if situation is not None else None
        return bounds[1] if bounds is not None else None

    def parse(self, rest, situation, command):
        text = clean_text(rest, MAX_TEXT_ARG_CHARS).strip(" :-\"'`")
        if not text:
            raise ArgError(f"'{command.name}' needs {self.name}, e.g. '{command.example_text(situation)}'")
        placeholder = placeholder_in(text)
        if placeholder is not None:
            raise ArgError(f"{self.name} still holds the placeholder {quote(placeholder, 34)} from the command list: "
                           f"write your own text, e.g. '{command.example_text(situation)}'")
        limit = self.word_limit(situation)
        if limit is not None and len(text.split()) > limit:
            raise ArgError(f"{self.name} not sent: {too_many_words(len(text.split()), limit)}")
        return text, ""

    def example(self, situation=None):
        limit = self.word_limit(situation)
        return self.example_value if limit is None else " ".join(self.example_value.split()[:limit])

    def sample(self, rng, situation):
        limit = self.word_limit(situation)
        n = int(rng.integers(1, 9 if limit is None or limit >= 8 else limit + 1))
        return " ".join(_RANDOM_WORDS[int(i)] for i in rng.integers(len(_RANDOM_WORDS), size=n))

    exact = True  # the base class's free text is exactly what a text argument takes

    def exact_for(self, situation: Situation) -> bool:
        return self.word_limit(situation) is None  # (the free-text grammar does not count words)


@dataclass(frozen=True)
class Command:
    """One command: a keyword phrase, typed arguments, a one-line help and examples."""

    name: str
    args: tuple[Arg, ...] = ()
    help: str = ""
    examples: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.lower() or "  " in self.name:
            raise ValueError(f"command names are lower-case words separated by single spaces, got {self.name!r}")

    def usage(self, situation: Situation | None = None) -> str:
        return " ".join([self.name, *(a.usage(situation) for a in self.args)])

    def example_text(self, situation: Situation | None = None) -> str:
        if situation is None and self.examples:
            return self.examples[0]
        return " ".join(p for p in [self.name, *(a.example(situation) for a in self.args)] if p)


@dataclass(frozen=True)
class ActionForm:
    """A command form allowed now, as listed in `info[agent]["valid_actions"]`."""

    command: str
    usage: str
    example: str
    help: str
    args: tuple[dict[str, Any], ...]
    _command: Command = field(repr=False, compare=False)
    _situation: Situation = field(repr=False, compare=False)

    def __str__(self) -> str:
        return self.usage

    @property
    def situation(self) -> Situation:
        """The situation the form was offered in (parse against it to check an action before sending it)."""
        return self._situation

    def sample(self, rng: np.random.Generator) -> str:
        """A concrete, valid instance of this form, with arguments drawn from `rng`."""
        return " ".join([self.command, *(a.sample(rng, self._situation) for a in self._command.args)])

    def to_json(self) -> dict[str, Any]:
        return {"command": self.command, "usage": self.usage, "example": self.example, "help": self.help}


@dataclass(frozen=True)
class Action:
    """A parsed, well-formed action. `text` is its canonical spelling."""

    command: str
    args: Mapping[str, Any]
    text: str

    ok = True

    def to_json(self) -> dict[str, Any]:
        return {"ok": True, "command": self.command, "args": dict(self.args), "text": self.text}

    def __reduce__(self) -> tuple[Any, ...]:
        # the args are a read-only view (MappingProxyType), which pickle cannot copy: rebuild it from a dict, so that
        # an env holding parses (its situations' memos) pickles and deep-copies
        read_only = isinstance(self.args, MappingProxyType)
        return (_action, (self.command, dict(self.args) if read_only else self.args, self.text, read_only))


def _action(command: str, args: Mapping[str, Any], text: str, read_only: bool) -> Action:
    """An `Action` unpickled (see `Action.__reduce__`)."""
    return Action(command, MappingProxyType(dict(args)) if read_only else args, text)


@dataclass(frozen=True)
class ActionError:
    """An action that could not be carried out, with the message the agent reads next step.

    `kind` is one of: not_a_string, empty, too_long, unknown_command, bad_argument,
    not_allowed, rejected (well-formed but refused by the paradigm's rules).
    """

    error: str
    kind: str
    command: str | None = None

    ok = False

    def to_json(self) -> dict[str, Any]:
        return {"ok": False, "kind": self.kind, "command": self.command, "error": self.error}


# `ACTION:` only at the start of a line (after markdown decoration): an echoed "Your last action: ..." is not one
_ACTION_MARKER = re.compile(r"(?im)^[ \t>*_#`-]*action[ \t*_]*:[ \t*_]*([^\n]*)")
# a usage placeholder copied from the command list instead of filled in: `<message>`, `<victim 1-35>`
_PLACEHOLDER = re.compile(r"<[A-Za-z][A-Za-z_]{0,30}(?: \d{1,6}-\d{1,6})?>")


def placeholder_in(text: str) -> str | None:
    """The first usage placeholder (`<message>`) left in `text`, or None."""
    match = _PLACEHOLDER.search(text)
    return match.group(0) if match else None


RECENT_PARSES = 4096  # parses a command set keeps (see `CommandSet.parse`)
MEMO_TEXT_CHARS = 200  # texts up to this long are remembered with their parse (here and in a situation's memo)


class CommandSet:
    """A paradigm's commands, with the one parser every environment uses."""

    def __init__(self, commands: Sequence[Command]) -> None:
        names = [c.name for c in commands]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate command names in {names}")
        self.commands: dict[str, Command] = {c.name: c for c in commands}
        ordered = sorted(names, key=lambda n: (-len(n), n))
        alternation = "|".join(r"\s+".join(map(re.escape, n.split())) for n in ordered)
        # the leading run of decoration is matched atomically (a lookahead and a back-reference: no
        # backtracking into it), so a long run of '-' or '#' costs one pass, not one retry per character
        self._start = re.compile(rf"(?=(?P<lead>[\s`'\"*_>#\-]*))(?P=lead)(?P<command>{alternation})(?![\w])", re.IGNORECASE)
        self._first_words = tuple(sorted({n.split()[0] for n in names}))
        self._anywhere = re.compile(rf"(?<![\w])(?P<command>{alternation})(?![\w])", re.IGNORECASE)
        self._recent: dict[tuple[int, str], tuple[Situation, Action | ActionError]] = {}  # see `parse`

    def __iter__(self):
        return iter(self.commands.values())

    def language(self) -> tuple[tuple[str, tuple[Arg, ...]], ...]:
        """What parsing depends on beyond the situation: each command's name and arguments (not its help text). Two
        command sets with the same language read every action alike."""
        return tuple((c.name, c.args) for c in self.commands.values())

    # ------------------------------------------------------------------ forms and briefing
    def forms(self, situation: Situation) -> tuple[ActionForm, ...]:
        """The command forms allowed in `situation`, for `info["valid_actions"]`."""
        return tuple(
            ActionForm(
                command=c.name,
                usage=c.usage(situation),
                example=c.example_text(situation),
                help=c.help,
                args=tuple(a.spec(situation) for a in c.args),
                _command=c,
                _situation=situation,
            )
            for c in self.commands.values()
            if c.name not in situation.denied
        )

    def grammar(self, situation: Situation | None = None) -> str:
        """The command reference for a briefing: usage, help and examples of every command.

        `situation` (optional) supplies real names for the examples of name arguments; commands
        it denies are left out (e.g. another role's commands).
        """
        lines = []
        for c in self.commands.values():
            if situation is not None and c.name in situation.denied:
                continue
            examples = ", ".join(f"'{e}'" for e in (c.examples or (c.example_text(situation),)))
            lines.append(f"- {c.usage(situation)}: {c.help} (e.g. {examples})")
        return "\n".join(lines)

    def _valid_now(self, situation: Situation) -> str:
        usages = [c.usage(situation) for c in self.commands.values() if c.name not in situation.denied]
        return "Valid now: " + (", ".join(usages) if usages else "nothing (wait for your turn)") + "."

    # ------------------------------------------------------------------ parsing
    def parse(self, raw: Any, situation: Situation = Situation()) -> Action | ActionError:
        """Read any input as an action. Never raises.

        A text read in the same situation object a moment ago is not read again: an LLM policy checks its
        reply against the situation it was offered, then the env parses the same text in that same situation
        (the parse reads only the text and the situation). The recent parses keep their situations, so an
        object's id cannot be reused while an entry names it; at most `RECENT_PARSES` of them."""
        recent = type(raw) is str and len(raw) <= MEMO_TEXT_CHARS
        if recent:
            found = self._recent.get((id(situation), raw))
            if found is not None and found[0] is situation:
                return found[1]
        try:
            result = self._parse(raw, situation)
        except Exception as exc:  # pragma: no cover - a parser bug must not crash an episode
            return ActionError(f"could not read this action ({type(exc).__name__}). {self._valid_now(situation)}", "bad_argument")
        if recent:
            if len(self._recent) >= RECENT_PARSES:
                self._recent.clear()
            self._recent[(id(situation), raw)] = (situation, result)
        return result

    def __getstate__(self) -> dict[str, Any]:  # the recent parses are a cache: not pickled (nor deep-copied)
        return {**self.__dict__, "_recent": {}}

    def _parse(self, raw: Any, situation: Situation) -> Action | ActionError:
        if not isinstance(raw, str):
            return ActionError(f"an action must be a string, got {type(raw).__name__}. {self._valid_now(situation)}", "not_a_string")
        text = raw
        if len(text) > MAX_ACTION_CHARS:
            tail = text[-MAX_ACTION_CHARS:]
            markers = list(_ACTION_MARKER.finditer(tail))
            if not markers:
                return ActionError(
                    f"action too long ({len(text):,} characters; the limit is {MAX_ACTION_CHARS:,} unless it ends "
                    f"with a line 'ACTION: <command>'). {self._valid_now(situation)}",
                    "too_long",
                )
            text = markers[-1].group(0)
        if not text.strip():
            return ActionError(f"empty action. {self._valid_now(situation)}", "empty")

        if text.lstrip().startswith("{"):  # a JSON reply is read as JSON, whatever its reasoning says
            as_json = self._from_json(text.strip())
            if as_json is not None:
                return self._parse_strict(as_json, situation, explicit=True)
        markers = list(_ACTION_MARKER.finditer(text))
        if markers:
            candidate = markers[-1].group(1).strip(_STRIP)
            if not candidate:
                return ActionError(f"the 'ACTION:' line is empty. {self._valid_now(situation)}", "empty")
            return self._parse_strict(self._from_json(candidate) or candidate, situation, explicit=True)

        stripped = text.strip(_STRIP)
        as_json = self._from_json(stripped) or self._from_json(text.strip())
        if as_json is not None:
            return self._parse_strict(as_json, situation, explicit=True)
        return self._parse_strict(text, situation, explicit=False)

    def _from_json(self, text: str) -> str | None:
        start = text.find("{")
        if start < 0 or start > 8:
            return None
        end = text.rfind("}")
        try:
            obj = json.loads(text[start : end + 1])
        except (ValueError, RecursionError):
            return None
        if not isinstance(obj, dict):
            return None
        if isinstance(obj.get("action"), dict):  # {"reasoning": ..., "action": {"command": ..., "args": ...}}
            obj = obj["action"]
        head = obj.get("action", obj.get("command"))
        if not isinstance(head, str):
            return None
        args = obj.get("args", obj.get("arguments", {}))
        command = self.commands.get(" ".join(head.lower().split()))
        if isinstance(args, Mapping):
            order = [a.name for a in command.args] if command else []
            values = [args[k] for k in order if k in args]
            if not command or not all(k in args for k in order):  # values under other names fill the missing ones
                values += [v for k, v in args.items() if k not in order]
        elif isinstance(args, (list, tuple)):
            values = list(args)
        else:
            values = [args]
        return " ".join([head, *(str(v) for v in values if v is not None)])

    def _parse_strict(self, text: str, situation: Situation, *, explicit: bool) -> Action | ActionError:
        match = self._start.match(text)
        if match is not None:
            return self._parse_command(match, text, situation)
        if not explicit:
            found = self._search(text, situation)
            if found is not None:
                return found
        return self._unknown(text, situation)

    def _search(self, text: str, situation: Situation) -> Action | ActionError | None:
        lowered = text.lower()
        if not any(word in lowered for word in self._first_words):
            return None  # no command word anywhere: nothing to try (a fast path for long prose)
        first_error: ActionError | None = None
        bare: Action | None = None
        negated: Action | None = None
        # each try may read the rest of the text (a message runs to its end): bounding the tries keeps a
        # reply full of command words ("<think>" x 1,000) linear; prose that names more is not a command
        for match in itertools.islice(self._anywhere.finditer(text), MAX_SEARCH_TRIES):
            result = self._parse_command(match, text, situation)
            if isinstance(result, Action):
                if negated_in_clause(text, match.start()):
                    negated = negated or result
                elif self.commands[result.command].args:
                    return result
                else:
                    bare = bare or result
            elif first_error is None:
                first_error = result
        if bare is None and first_error is None and negated is not None:
            return ActionError(f"every command in your text comes after a negation (\"not\", \"n't\", \"no\", \"never\", "
                               f"\"rather than\"...), the first '{negated.text}', so none is read as your action: write the "
                               f"command alone, or end with a line 'ACTION: <command>'. "
                               f"{self._valid_now(situation)}", "unknown_command", negated.command)
        return bare or first_error

    def _parse_command(self, match: re.Match, text: str, situation: Situation) -> Action | ActionError:
        name = " ".join(match.group("command").lower().split())
        command = self.commands[name]
        if name in situation.denied:
            return ActionError(f"'{name}' is not allowed now: {situation.denied[name]}. {self._valid_now(situation)}", "not_allowed", name)
        rest = text[match.end():]
        if not any(isinstance(a, TextArg) for a in command.args):
            rest = rest.split("\n", 1)[0]
        values: dict[str, Any] = {}
        for arg in command.args:
            try:
                value, rest = arg.parse(rest, situation, command)
            except ArgError as exc:
                return ActionError(f"{exc}. Usage: {command.usage(situation)}", "bad_argument", name)
            values[arg.name] = value
        last = command.args[-1] if command.args else None
        if last is not None and not isinstance(last, TextArg) and rest.strip() and _more_values(last, rest, situation, command):
            return ActionError(f"'{name}' takes one {last.name}, and more follow {last.format(values[last.name])} "
                               f"({quote(rest.strip(_PUNCTUATION), 30)}): write the one you choose. Usage: {command.usage(situation)}",
                               "bad_argument", name)
        for arg in command.args:
            if isinstance(arg, IntArg):
                low, high = arg.bounds(situation)
                if not low <= values[arg.name] <= high:
                    why = situation.limit_reasons.get(arg.name)
                    return ActionError(
                        f"{arg.name} must be from {low} to {high} now{f' ({why})' if why else ''} "
                        f"(got {values[arg.name]}). Usage: {command.usage(situation)}",
                        "not_allowed",
                        name,
                    )
        canonical = " ".join(p for p in [name, *(a.format(values[a.name]) for a in command.args)] if p)
        return Action(name, MappingProxyType(values), canonical)

    def _unknown(self, text: str, situation: Situation) -> ActionError:
        words = [w.strip(_STRIP + ",;:!?").lower() for w in text.split(None, 3)[:3]]
        words = [w for w in words if w]
        if not words:
            return ActionError(f"no command found in {quote(text)}. {self._valid_now(situation)}", "unknown_command")
        allowed = [n for n in self.commands if n not in situation.denied] or list(self.commands)
        partial = [n for n in allowed if n.split()[0] == words[0]]
        if partial:
            options = " or ".join(f"'{self.commands[n].usage(situation)}'" for n in partial)
            return ActionError(f"incomplete command {quote(words[0], 30)}: use {options}. {self._valid_now(situation)}", "unknown_command")
        def closeness(name: str) -> float:
            head = " ".join(words[: len(name.split())])
            matcher = difflib.SequenceMatcher(None, head, name)
            # the ratio is bounded by the lengths alone: a head far longer than any command
            # cannot reach the hint's 0.6, and the full ratio is quadratic in its length
            if matcher.real_quick_ratio() < 0.6:
                return 0.0
            return matcher.ratio()

        best = max(allowed, key=closeness)
        hint = f" Did you mean '{self.commands[best].usage(situation)}'?" if closeness(best) >= 0.6 else ""
        return ActionError(f"unknown command {quote(text, 40)}.{hint} {self._valid_now(situation)}", "unknown_command")


def _more_values(last: Arg, rest: str, situation: Situation, command: Command) -> bool:
    """Whether `rest`, the text after a command's last argument `last`, gives it more values: joined by a comma, "and", "or",
    "/" or a space, as an alternative ("decide A, B or C", "invest group 40 or 14", out of range or not) or as a list with
    nothing but punctuation after it ("fulfill order 1 2 3", "accept offer 2 and 3."). Read as the first, the choice would be
    made for the agent. Prose after a command that happens to hold a value is not ("invest group 100, 90 is too low",
    "harvest 40 and 2 more months", "decide C or a tie": one lowercase letter is the article, not candidate A)."""
    text, values, alternative = rest, 0, False
    for _ in range(MORE_VALUES):
        joined = _ANOTHER.match(text)
        tail = text[joined.end():]
        try:
            value, after = last.parse(tail, situation, command)
        except ArgError:
            if joined.group("alternative") and isinstance(last, IntArg) and tail.lstrip()[:1].isdigit():
                return True  # "40 or 14": another amount, out of the range or not
            break
        written = tail[: len(tail) - len(after)].strip(_PUNCTUATION)
        if len(after) >= len(text) or (len(written) == 1 and written.islower() and not last.format(value).islower()):
            break
        values += 1
        alternative = alternative or joined.group("alternative") is not None
        text = after
    else:
        return True  # a list longer than MORE_VALUES: more values, whatever follows
    return values > 0 and (alternative or not text.strip(_PUNCTUATION))


def negated_in_clause(text: str, at: int) -> bool:
    """Whether the clause of `text` that runs up to position `at` holds a negation (`_NEGATION`): in "I will not
    invest group 100; I'll wait" the clause before "invest" does, the one before "wait" does not."""
    start = 0
    for start_match in _CLAUSE_END.finditer(text, max(0, at - 200), at):  # (a clause longer than that is prose enough)
        start = start_match.end()
    return _NEGATION.search(text, max(start, at - 200), at) is not None


class ParseMemo:
    """`commands.parse(command, situation)`, remembered across situations and episodes.

    A command text that starts with a command's name (and a space) is read by that command alone, never
    searched for in prose; when it parses, the parse read only whether the command is denied and the
    situation entries its arguments declare (`reads`: command name -> ((field, key), ...), e.g.
    (("limits", "x"),)), so the same text parses to the same action wherever those are the same. Such a
    success, when its values are immutable, is kept by those entries alone; anything else by the whole
    situation. Texts longer than `max_chars` are parsed afresh."""

    def __init__(self, commands: CommandSet, reads: Mapping[str, tuple[tuple[str, str], ...]], max_chars: int,
                 max_entries: int = 16384) -> None:
        self.commands, self.reads, self.max_chars, self.max_entries = commands, dict(reads), max_chars, max_entries
        self._longest_first = tuple(sorted(commands.commands, key=len, reverse=True))
        self._parses: dict[tuple, Action | ActionError] = {}

    def _leading_name(self, command: str) -> str | None:
        """The command name `command` starts with (followed by a space or nothing), longest first."""
        for name in self._longest_first:
            if command.startswith(name) and (len(command) == len(name) or command[len(name)] == " "):
                return name
        return None

    def parse(self, command: str, situation: Situation) -> Action | ActionError:
        name = self._leading_name(command) if len(command) <= self.max_chars else None
        if name is None:
            return self.commands.parse(command, situation)
        denied = situation.denied
        key = (command, name in denied, denied.get(name), *(getattr(situation, part).get(entry) for part, entry in self.reads[name]))
        found = self._parses.get(key)
        if found is None:
            whole = (command, tuple(denied.items()), tuple(situation.limits.items()), tuple(situation.names.items()),
                     tuple(situation.limit_reasons.items()))
            found = self._parses.get(whole)
            if found is None:
                found = self.commands.parse(command, situation)
                if len(self._parses) > self.max_entries:
                    self._parses.clear()
                shared = (isinstance(found, Action) and found.command == name
                          and all(v is None or isinstance(v, (str, tuple)) for v in found.args.values()))
                self._parses[key if shared else whole] = found  # immutable, so shared by every situation that reads the same
        return found
