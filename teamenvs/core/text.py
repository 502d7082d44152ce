"""Text spaces and text hygiene shared by every environment.

Observations and actions are plain strings. The spaces are `gymnasium.spaces.Text`
instances whose membership test accepts any printable unicode (plus newlines), because
agents may write in any language; sampling draws from printable ASCII.
Every piece of agent-written text passes through `clean_text` before it can reach
another agent's observation, so no control character ever enters an observation.
Outside text quoted in an error message goes through `quote` or `excerpt` (never whole: it may be
huge), and a "Did you mean" hint through `close_match` (bounded time for any length).
"""

from __future__ import annotations

import copy
import difflib
import reprlib
import string
from typing import Any, Sequence

import numpy as np
from gymnasium.spaces import Box, Text
from gymnasium.spaces.utils import flatten, flatten_space, unflatten
from gymnasium.error import CustomSpaceError
from gymnasium.vector.utils.shared_memory import create_shared_memory

SAMPLE_CHARSET = string.ascii_letters + string.digits + string.punctuation + " "
OBSERVATION_MAX_CHARS = 65_536
ACTION_MAX_CHARS = 512


class TextSpace(Text):
    """A `gymnasium.spaces.Text` that holds any printable unicode string and newlines."""

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | None = None) -> None:
        super().__init__(max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        if not isinstance(x, str) or not self.min_length <= len(x) <= self.max_length:
            return False
        return x.replace("\n", "").isprintable()

    def __repr__(self) -> str:
        return f"TextSpace(min_length={self.min_length}, max_length={self.max_length}, printable unicode)"


# Gymnasium flattens a `Text` space to indexes into its charset (`flatten`, `FlattenObservation`), which fails on
# any character outside it ("\n", "é"). A `TextSpace` holds every printable character, so it flattens to code points
# instead: int32, padded with END (one past the last code point, as `Text` pads with its charset's length), and back
# with `unflatten`, character for character.
END = 0x110000


@flatten.register(TextSpace)
def _flatten_text(space: TextSpace, x: str) -> np.ndarray:
    codes = np.frombuffer(x.encode("utf-32-le", "surrogatepass"), dtype=np.int32)
    if len(codes) > space.max_length:
        raise ValueError(f"a text of {len(codes):,} characters does not fit a TextSpace of at most {space.max_length:,}")
    flat = np.full(space.max_length, END, dtype=np.int32)
    flat[: len(codes)] = codes
    return flat


@unflatten.register(TextSpace)
def _unflatten_text(space: TextSpace, x: np.ndarray) -> str:
    codes = np.asarray(x)
    return codes[(codes >= 0) & (codes < END)].astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")


@flatten_space.register(TextSpace)
def _flatten_space_text(space: TextSpace) -> Box:
    return Box(low=0, high=END, shape=(space.max_length,), dtype=np.int32)


@create_shared_memory.register(TextSpace)
def _no_shared_text(space: TextSpace, n: int = 1, ctx: Any = None) -> Any:
    # AsyncVectorEnv reads its shared observations once, when it is built, as views that later steps fill in; a text
    # read that way is a copy, so every later text would be lost. Said here, before a single step returns one.
    raise CustomSpaceError(
        "text observations cannot travel through AsyncVectorEnv's shared memory: pass shared_memory=False, or use "
        "teamenvs.wrappers.make_async, which does"
    )


_PROTOTYPES: dict[tuple[int, int], TextSpace] = {}


def text_space(max_length: int, min_length: int = 0) -> TextSpace:
    """A new `TextSpace` with its own generator: a copy of one built once per length bounds. Building the
    charset's tables costs about 0.1 ms a space, and an env has two spaces per agent, built with every env
    (the prototype is never sampled or seeded, so a copy shares no generator with it or with another copy)."""
    prototype = _PROTOTYPES.get((max_length, min_length))
    if prototype is None:
        prototype = _PROTOTYPES[(max_length, min_length)] = TextSpace(max_length, min_length=min_length)
    return copy.copy(prototype)


class Observation(str):
    """A text observation: a plain `str` that also carries the dtype of `gymnasium.spaces.Text`.

    PettingZoo's `api_test` compares `observation.dtype` with the space's dtype; a bare
    `str` has none. Everything else treats it as the string it is.
    """

    __slots__ = ()
    dtype = np.dtype("<U")


COMMANDS_HEADING = "Commands (one per turn; case does not matter):"
ANSWER_FORMAT = ("Answer with the command alone, or with your reasoning followed by a last line "
                 "'ACTION: <command>'. An invalid command is rejected and you will read why.")


class Briefing(str):
    """An agent's briefing: the text a policy is given at reset (the rules of its role, the command
    list, the answer format), a plain `str` whose parts stay at hand as `rules`, `commands` and
    `answer`, so that a prompt can take the rules alone and list the commands once, live."""

    def __new__(cls, rules: str, commands: str, answer: str = ANSWER_FORMAT) -> "Briefing":
        self = super().__new__(cls, f"{rules}\n\n{COMMANDS_HEADING}\n{commands}\n\n{answer}")
        self.rules, self.commands, self.answer = rules, commands, answer
        return self

    def __reduce__(self) -> tuple[Any, ...]:  # str's own would rebuild it from the joined text alone
        return Briefing, (self.rules, self.commands, self.answer)


def _collapse_whitespace(text: str, keep_newlines: bool) -> str:
    if keep_newlines:
        return "\n".join(" ".join(line.split()) for line in text.split("\n")).strip("\n")
    return " ".join(text.split())


def clean_text(text: str, max_chars: int | None = None, *, keep_newlines: bool = False) -> str:
    """Return `text` without control or format characters, with runs of whitespace collapsed.

    Newlines become spaces unless `keep_newlines`. The result is cut to `max_chars` characters.
    """
    if max_chars is not None and not keep_newlines:
        # the usual text needs no cleaning: its first `max_chars` characters are printable (so its only whitespace is
        # the ASCII space), single-spaced and neither start nor end with a space; then they are the cleaned text, and
        # a long text (a reply full of words) is read only that far
        head = text[:max_chars]
        if head.isprintable() and "  " not in head and not head.startswith(" ") and not head.endswith(" "):
            return head
    if max_chars is not None and len(text) > 4 * max_chars + 64:
        text = text[: 4 * max_chars + 64]
    text = _collapse_whitespace(text, keep_newlines)
    if not text.replace("\n", "").isprintable():
        # dropping a control character can leave two spaces side by side: collapse again
        text = _collapse_whitespace("".join(c for c in text if c.isprintable() or c == "\n"), keep_newlines)
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars]
    return text


def valid_unicode(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (the replacement character), for text that goes to another
    program: a surrogate has no UTF-8 form (sending it fails, or its JSON escape is read as invalid text), and
    untrusted text can hold one (a model's reply decoded from a JSON escape `\\ud800`). `text` itself when it has
    none, as usual (checked at C speed)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def close_match(word: str, names: Sequence[str], cutoff: float = 0.6) -> str | None:
    """The name of `names` nearest `word` (`difflib.get_close_matches`, case as given), or None below `cutoff`.

    A similarity ratio is at most 2 * min(len) / (sum of lengths), so a word longer than the longest name times
    (2 - cutoff) / cutoff cannot reach the cutoff: it is not matched, since matching costs time linear in its
    length (any untrusted text: an action, a config key, a suite file's entry)."""
    longest = max(map(len, names), default=0)
    if not longest or len(word) * cutoff > longest * (2 - cutoff):
        return None
    close = difflib.get_close_matches(word, list(names), n=1, cutoff=cutoff)
    return close[0] if close else None


_EXCERPT = reprlib.Repr()
_EXCERPT.maxlevel = 3
_EXCERPT.maxstring = _EXCERPT.maxother = _EXCERPT.maxlong = 60
_EXCERPT.maxlist = _EXCERPT.maxtuple = _EXCERPT.maxdict = _EXCERPT.maxset = _EXCERPT.maxfrozenset = 6


def excerpt(value: Any) -> str:
    """A short excerpt of any outside value (a config value, a suite file's entry) for an error message: never the
    whole value, which may be huge; a string quoted as `quote` does, anything else as a clipped repr. A string with
    spaces or a line break around it is shown as its repr, so they show: quoted, `' medic'` would read `'medic'`, the
    very name the error goes on to list as valid."""
    if isinstance(value, str):
        return quote(value) if value == value.strip() else printable(_EXCERPT.repr(value), keep_newlines=False)
    if isinstance(value, int) and value.bit_length() > 192:
        return f"a {value.bit_length()}-bit integer"
    return printable(_EXCERPT.repr(value), keep_newlines=False)


def quote(text: str, max_chars: int = 60) -> str:
    """Short, safe, quoted excerpt of agent input for use in error messages."""
    cleaned = clean_text(text, max_chars + 1)
    if len(cleaned) > max_chars:
        cleaned = cleaned[: max_chars - 3] + "..."
    return f"'{cleaned}'"


def printable(text: Any, *, keep_newlines: bool = True) -> str:
    """`text` made safe to print on a terminal: every control or format character (ESC, BEL, CR,
    bidi overrides, ...) shown as a visible escape (`\\x1b`, `\\u202e`) instead of acting on the
    terminal; newlines kept unless `keep_newlines` is false. Use it on all agent, model and file
    text that reaches stdout or stderr."""
    text = text if isinstance(text, str) else str(text)
    if text.replace("\n", "").isprintable() and (keep_newlines or "\n" not in text):
        return text  # the common case costs one scan
    out = []
    for c in text:
        if c.isprintable() or (c == "\n" and keep_newlines):
            out.append(c)
        elif ord(c) < 0x100:
            out.append(f"\\x{ord(c):02x}")
        elif ord(c) < 0x10000:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    return "".join(out)
