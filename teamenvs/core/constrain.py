"""Constrained decoding generated from the command language: what a model may write, as a grammar.

An agent's valid action forms (`info[agent]["valid_actions"]`: the commands its situation
allows, with live integer bounds and live names) become, per call, one `Constraint` with
three spellings of the same language, each the form a server family takes:

- `json_schema`: an object `{"reasoning": <free text>, "action": {"command": ..., "args": {...}}}`
  whose `action` is one of the allowed commands with typed arguments (integers with their
  live minimum and maximum, names and choices as enums). OpenAI structured outputs, vLLM,
  SGLang, llama.cpp and Ollama accept it as `response_format` `json_schema`; the reply is
  read by the same parser as any other (`CommandSet.parse` reads the JSON).
- `gbnf`: a llama.cpp grammar for "an optional line of reasoning, then `ACTION: <command>`".
- `regex`: the same language as a regular expression (vLLM's `guided_regex`).

Every string the grammar or the regex admits after `ACTION: ` parses in the situation the
forms were offered in, and every valid command of those forms (in its canonical spelling) is
admitted: `tests/core/test_constrain.py` checks both ways. Given the env's rules for the agent
(`accepts`), a form with few concrete commands admits only those the rules accept now; the rules
may still refuse a command of a form with free text or many values (an offer's terms, a map path),
or one that a teammate's action in the same step makes impossible (a victim taken first).

Arguments describe themselves with `Arg.grammar(situation)`, a small expression tree (`Lit`,
`Chars`, `Seq`, `Alt`) rendered here to regex and GBNF. An argument type without one
(`exact = False`) is constrained to one line of free text, and the constraint says so.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

__all__ = ["CONSTRAIN_MODES", "Alt", "Chars", "Constraint", "Lit", "Node", "Repeat", "Seq", "constraint_for", "free_text",
           "int_range", "json_pattern", "one_of"]

# how a constraint is sent (agents.llm.policy.constrained_request): json_schema, json_object with a schema, GBNF, regex
CONSTRAIN_MODES = ("off", "json", "json_object", "grammar", "regex")
JSON_MODES = ("json", "json_object")  # the modes whose replies are JSON objects

REASONING_MAX_CHARS = 2_000
ACTION_RESERVE_TOKENS = 48  # of a reply's output limit, kept for "ACTION: " and the command
ENUMERABLE_COMMANDS = 256  # a form with at most this many concrete commands is checked command by command against the rules


@dataclass(frozen=True)
class Lit:
    """Literal text."""

    text: str


@dataclass(frozen=True)
class Chars:
    """`low` to `high` characters from a character class written as in a regex, e.g. `0-9` or `^\\n`
    (high None: no upper bound)."""

    cls: str
    low: int = 1
    high: int | None = 1


@dataclass(frozen=True)
class Seq:
    items: tuple["Node", ...]


@dataclass(frozen=True)
class Alt:
    options: tuple["Node", ...]


@dataclass(frozen=True)
class Repeat:
    """`low` to `high` repetitions of a node (high None: no upper bound)."""

    node: "Node"
    low: int = 0
    high: int | None = None


Node = Lit | Chars | Seq | Alt | Repeat


def one_of(texts: Iterable[str]) -> Node:
    """Exactly one of these literal texts (longest first, so a regex never stops at a prefix)."""
    options = tuple(Lit(t) for t in sorted(set(texts), key=lambda t: (-len(t), t)))
    return options[0] if len(options) == 1 else Alt(options)


def free_text(max_chars: int) -> Node:
    """Free text on one line that the parser keeps whatever its cleaning drops: a letter or digit
    first, then up to `max_chars - 1` characters other than a newline or `<` (which could make a
    usage placeholder such as `<message>`, refused by the parser)."""
    return Seq((Chars("A-Za-z0-9"), Chars("^\\n<", 0, max_chars - 1)))


def _digits_range(low: str, high: str) -> list[Node]:
    """Patterns for the numbers from `low` to `high`, written with the same number of digits."""
    if low == high:
        return [Lit(low)]
    if len(low) == 1:
        return [Chars(f"{low}-{high}" if low != high else low)]
    # split on the first digit: [low .. first0 999], the middle first digits, [first1 000 .. high]
    if low[0] == high[0]:
        return [Seq((Lit(low[0]), rest)) for rest in _digits_range(low[1:], high[1:])]
    out: list[Node] = []
    tail = len(low) - 1
    if low[1:] == "0" * tail:
        first = int(low[0])
    else:
        out += [Seq((Lit(low[0]), rest)) for rest in _digits_range(low[1:], "9" * tail)]
        first = int(low[0]) + 1
    last = int(high[0]) if high[1:] == "9" * tail else int(high[0]) - 1
    if first <= last:
        head = Lit(str(first)) if first == last else Chars(f"{first}-{last}")
        out.append(Seq((head, Chars("0-9", tail, tail))))
    if high[1:] != "9" * tail:
        out += [Seq((Lit(high[0]), rest)) for rest in _digits_range("0" * tail, high[1:])]
    return out


def _natural_range(low: int, high: int) -> list[Node]:
    """Patterns for the whole numbers from `low` to `high` (0 <= low <= high), no leading zeros."""
    out: list[Node] = []
    for width in range(len(str(low)), len(str(high)) + 1):
        lo = max(low, 10 ** (width - 1) if width > 1 else 0)
        hi = min(high, 10**width - 1)
        if lo <= hi:
            out += _digits_range(str(lo), str(hi))
    return out


def int_range(low: int, high: int) -> Node:
    """The decimal whole numbers from `low` to `high`, as written canonically (no sign on 0, no leading zeros)."""
    if low > high:
        raise ValueError(f"empty integer range {low}..{high}")
    options: list[Node] = []
    if low < 0:
        options += [Seq((Lit("-"), n)) for n in _natural_range(max(1, -high), -low)]
    if high >= 0:
        options += _natural_range(max(0, low), high)
    return options[0] if len(options) == 1 else Alt(tuple(options))


# ---------------------------------------------------------------------- rendering
_SPECIAL = frozenset(".^$*+?()[]{}|\\/")  # escaped with a backslash: valid in Python and in ECMAScript's u mode

def to_regex(node: Node, portable: bool = False) -> str:
    """The node as a regex (Python and ECMAScript syntax alike: only groups, classes and counts). `portable` writes
    it as llama.cpp's JSON-schema converters (llama-server's, llama-cpp-python's) read patterns (`json_pattern`):
    plain groups (they refuse `(?:`), special characters as one-character classes (`[$]`: they copy `\\$` into a
    grammar literal, where it is an unknown escape), and a count above JSON_MAX_COUNT unbounded (they unroll a
    count into nested rules, and llama.cpp refuses a grammar of 2,000)."""
    group = "(" if portable else "(?:"
    if isinstance(node, Lit):
        if portable:
            return "".join(("[\\" + c + "]" if c in "\\^]" else f"[{c}]") if c in _SPECIAL else c for c in node.text)
        return "".join("\\" + c if c in _SPECIAL else c for c in node.text)
    if isinstance(node, Chars):
        return f"[{node.cls}]" + _count(node.low, node.high, portable)
    if isinstance(node, Seq):
        return "".join(to_regex(i, portable) if not isinstance(i, Alt) else f"{group}{to_regex(i, portable)})" for i in node.items)
    if isinstance(node, Repeat):
        return f"{group}{to_regex(node.node, portable)})" + _count(node.low, node.high, portable)
    return "|".join(to_regex(o, portable) for o in node.options)


JSON_MAX_COUNT = 100  # a longer count is left unbounded in JSON schema patterns (see `to_regex`)
JSON_MAX_REASONING = 500  # the most characters of reasoning a JSON schema bounds with maxLength (unrolled the same way)


def json_pattern(node: Node) -> str:
    """The node as a JSON schema `pattern`, anchored, portable (`to_regex`). Free text left unbounded still parses
    (the parser cuts a text argument at its limit)."""
    return f"^({to_regex(node, portable=True)})$"


def _count(low: int, high: int | None, portable: bool = False) -> str:
    if portable and high is not None and high > JSON_MAX_COUNT:
        high = None
    if (low, high) == (1, 1):
        return ""
    if high is None:
        return "*" if low == 0 else "+" if low == 1 else f"{{{low},}}"
    return "?" if (low, high) == (0, 1) else f"{{{low}}}" if low == high else f"{{{low},{high}}}"


def _gbnf_literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # GBNF string literals take JSON's escapes


def to_gbnf(node: Node) -> str:
    """The node as a GBNF expression (llama.cpp grammars)."""
    if isinstance(node, Lit):
        return _gbnf_literal(node.text)
    if isinstance(node, Chars):
        return f"[{node.cls}]" + _count(node.low, node.high)
    if isinstance(node, Seq):
        return " ".join(to_gbnf(i) if not isinstance(i, Alt) else f"({to_gbnf(i)})" for i in node.items)
    if isinstance(node, Repeat):
        return f"({to_gbnf(node.node)})" + _count(node.low, node.high)
    return " | ".join(to_gbnf(o) for o in node.options)


# ---------------------------------------------------------------------- the constraint
@dataclass(frozen=True)
class Constraint:
    """The commands an agent may write now, in the three spellings servers take."""

    json_schema: dict[str, Any]
    gbnf: str
    regex: str
    exact: bool  # False when an argument type has no grammar and is constrained to a line of free text

    def response_format(self, name: str = "action") -> dict[str, Any]:
        """The OpenAI `response_format` of the JSON schema (structured outputs)."""
        return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": self.json_schema}}


def _command_node(form: Any) -> Node | None:
    """The command of a form with its arguments (None when an argument has no possible value now)."""
    parts: list[Node] = [Lit(form.command)]
    for arg in form._command.args:
        node = arg.grammar(form.situation)
        if node is None:
            return None
        if node != Lit(""):  # an optional argument written as nothing takes no space either
            parts += [Lit(" "), node]
    return parts[0] if len(parts) == 1 else Seq(tuple(parts))


def _args_schema(form: Any) -> dict[str, Any]:
    properties = {arg.name: arg.json_schema(form.situation) for arg in form._command.args}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def reasoning_chars_for(max_output_tokens: int | None) -> int:
    """The longest reasoning a constraint admits so that the action still fits a reply of
    `max_output_tokens` tokens: a token holds at least one character, so reasoning of
    `max_output_tokens - ACTION_RESERVE_TOKENS` characters leaves the action its tokens (an unbounded
    reasoning lets a small model ramble to the output limit and never write its action)."""
    if max_output_tokens is None:
        return REASONING_MAX_CHARS
    return max(0, min(REASONING_MAX_CHARS, max_output_tokens - ACTION_RESERVE_TOKENS))


def narrowed_command(form: Any, accepts: Callable[[str], bool]) -> tuple[list[Node], list[dict[str, Any]]] | None:
    """For a form whose last argument has too many values to try one by one but can narrow itself against the
    rules (`Arg.accepted_grammar`, e.g. an offer's terms by what the agent can give): per combination of
    the other arguments (tried as `accepted_commands` does), the command's grammar node and JSON schema.
    None when the form cannot be narrowed so."""
    *others, last = form._command.args or (None,)
    if last is None or last.values(form.situation) is not None:
        return None
    domains = [arg.values(form.situation) for arg in others]
    if any(d is None for d in domains) or math.prod(len(d) for d in domains) > ENUMERABLE_COMMANDS:
        return None
    nodes: list[Node] = []
    branches: list[dict[str, Any]] = []
    for combo in itertools.product(*domains):
        head = command_text(form.command, combo)
        node = last.accepted_grammar(form.situation, lambda value, head=head: accepts(f"{head} {value}"))
        if node is NotImplemented:
            return None
        if node is None:
            continue
        nodes.append(Seq((Lit(head + " "), node)))
        branch = _enumerated_branch(form, combo)
        branch["properties"]["args"]["properties"][last.name] = {"type": "string", "pattern": json_pattern(node)}
        branch["properties"]["args"]["required"].append(last.name)
        branches.append(branch)
    return nodes, branches


def command_text(command: str, values: Sequence[str]) -> str:
    """A command with its argument values as written; an optional argument written as nothing takes no space."""
    return " ".join([command, *(v for v in values if v)])


def accepted_commands(form: Any, accepts: Callable[[str], bool]) -> list[tuple[str, ...]] | None:
    """The argument values (as written) of this form's commands that the rules accept now, tried one by one
    with `accepts`; None when the form's arguments have too many values (or free text) to try."""
    domains = [arg.values(form.situation) for arg in form._command.args]
    if any(d is None for d in domains) or math.prod(len(d) for d in domains) > ENUMERABLE_COMMANDS:
        return None
    return [combo for combo in itertools.product(*domains) if accepts(command_text(form.command, combo))]


def _enumerated_branch(form: Any, combo: tuple[str, ...]) -> dict[str, Any]:
    """The JSON schema of one concrete command of `form` (its arguments as constants)."""
    args: dict[str, Any] = {}
    for arg, value in zip(form._command.args, combo):  # the first len(combo) arguments
        integer = arg.json_schema(form.situation).get("type") == "integer"
        args[arg.name] = {"type": "integer", "enum": [int(value)]} if integer else {"type": "string", "enum": [value]}
    return {"type": "object", "properties": {"command": {"type": "string", "enum": [form.command]},
                                             "args": {"type": "object", "properties": args, "required": list(args),
                                                      "additionalProperties": False}},
            "required": ["command", "args"], "additionalProperties": False}


def constraint_for(forms: Sequence[Any], reasoning_chars: int = REASONING_MAX_CHARS,
                   accepts: Callable[[str], bool] | None = None) -> Constraint:
    """The constraint admitting exactly the commands of these action forms (one agent's `valid_actions`),
    after at most `reasoning_chars` characters of reasoning (one line in the grammar and the regex).

    With `accepts` (the env's rules for this agent now: `TeamEnv.accepts`), a form whose arguments take few
    values (`Arg.values`; at most ENUMERABLE_COMMANDS commands) admits only the commands the rules accept:
    no `pick up victim 17` for a victim the agent has not found; a form whose last argument narrows itself
    (`Arg.accepted_grammar`: an offer's terms by what the agent can give, a map-task guide's messages without
    coordinates) admits only accepted values of it. Forms with other free text or many-valued arguments (messages,
    map paths) keep the command language's grammar."""
    nodes: list[Node] = []
    branches: list[dict[str, Any]] = []
    kept: list[Any] = []
    for form in forms:
        node = _command_node(form)
        if node is None:
            continue
        accepted = accepted_commands(form, accepts) if accepts is not None else None
        narrowed = narrowed_command(form, accepts) if accepts is not None and accepted is None else None
        if narrowed is not None:
            nodes += narrowed[0]
            branches += narrowed[1]
        elif accepted is None:
            nodes.append(node)
            branches.append({"type": "object", "properties": {"command": {"type": "string", "enum": [form.command]},
                                                              "args": _args_schema(form)},
                             "required": ["command", "args"], "additionalProperties": False})
            kept.append(form)
        elif accepted:
            nodes.append(one_of([command_text(form.command, combo) for combo in accepted]))
            branches += [_enumerated_branch(form, combo) for combo in accepted]
    if not nodes:
        raise ValueError("no command can be given now: the agent has nothing to decide")
    exact = all(arg.exact_for(f.situation) for f in kept for arg in f._command.args)
    action = nodes[0] if len(nodes) == 1 else Alt(tuple(nodes))
    schema = {
        "type": "object",
        "properties": {"reasoning": {"type": "string", "maxLength": min(reasoning_chars, JSON_MAX_REASONING)},
                       "action": branches[0] if len(branches) == 1 else {"anyOf": branches}},
        "required": ["reasoning", "action"],
        "additionalProperties": False,
    }
    gbnf = "\n".join([
        "root ::= reasoning \"ACTION: \" action",
        f"reasoning ::= ([^\\n]{{0,{reasoning_chars}}} \"\\n\")?" if reasoning_chars else "reasoning ::= \"\"",
        f"action ::= {to_gbnf(action)}",
    ])
    regex = (f"(?:[^\\n]{{0,{reasoning_chars}}}\\n)?" if reasoning_chars else "") + f"ACTION: (?:{to_regex(action)})"
    return Constraint(schema, gbnf, regex, exact)


def action_of(text: str, constraint: Constraint) -> str | None:
    """The command after `ACTION: ` in a reply the regex admits (None when it does not)."""
    match = re.fullmatch(constraint.regex, text)
    return text.rsplit("ACTION: ", 1)[1] if match else None


def sample_text(node: Node, rng: Any, max_free: int = 12) -> str:
    """A string of the node's language drawn with `rng` (a numpy Generator); unbounded and long
    character runs are cut to `max_free` characters (printable ASCII drawn from the class)."""
    if isinstance(node, Lit):
        return node.text
    if isinstance(node, Seq):
        return "".join(sample_text(i, rng, max_free) for i in node.items)
    if isinstance(node, Alt):
        return sample_text(node.options[int(rng.integers(len(node.options)))], rng, max_free)
    if isinstance(node, Repeat):
        high = node.high if node.high is not None else node.low + 3
        return "".join(sample_text(node.node, rng, max_free) for _ in range(int(rng.integers(node.low, high + 1))))
    allowed = [c for c in map(chr, range(32, 127)) if re.fullmatch(f"[{node.cls}]", c)]
    high = node.low if node.high is not None and node.high == node.low else min(node.high if node.high is not None else node.low + max_free,
                                                                                   node.low + max_free)
    n = int(rng.integers(node.low, high + 1))
    return "".join(allowed[int(i)] for i in rng.integers(len(allowed), size=n))
