"""The job fair's command language: name lists, free-text workflows, assignments and the JSON decision form.

Commands by phase (`situation` denies the others, with the reason):
apply (seekers) `apply <company>[, <company>...]`; recruiters `think <text>` or `wait`;
interviews `say <text>`, `end interview` (only the side whose turn it is); decisions
(recruiters) `hire <name>, ...`, `workflow <step> -> <step> -> ...`, `assign <name> to
<step>[, <name> to <step>...]`, `submit`; offers (seekers) `accept <company>`, `decline
<company>`.

The decision may also come as one JSON object, MetaAgents' List/Workflow/Rationale format
plus the assignment: `{"list": [names], "workflow": [steps], "assign": {name: step or
[steps]}, "rationale": "..."}` (bare, after `ACTION:`, or after `submit`); it sets all
three parts and submits.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from math import comb
from typing import TYPE_CHECKING, Any, Mapping

from teamenvs.core.commands import Arg, ArgError, Command, CommandSet, NameArg, ParseMemo, Situation, TextArg, placeholder_in
from teamenvs.core.messaging import SAY
from teamenvs.core.rl import NOOP, candidates_in
from teamenvs.core.text import clean_text, close_match, quote
from teamenvs.job_fair.config import JobFairConfig
from teamenvs.job_fair.fair import team_areas
from teamenvs.job_fair.layout import layout

if TYPE_CHECKING:
    from teamenvs.job_fair.rules import FairState

MAX_STEPS, MAX_STEP_CHARS = 12, 80
# "(?<!\s)" before a leading whitespace run: a search never restarts inside a run it already
# scanned (linear time on long runs; the same matches, since the run's start is tried first).
_SEPARATOR = re.compile(r"(?<!\s)\s*(?:,|;|&|\band\b)\s*(?:and\s+)?", re.IGNORECASE)
_TO = re.compile(r"(?<!\s)\s*(?:\bto\b|->|→|=>|:|\bas\b|\bfor\b|\bon\b)\s*", re.IGNORECASE)
_FILLER = re.compile(r"(?<!\s)\s*(?:(?:to|with|for|at|from|the|an?|offer|job|of|interview|interviews)\b\s*)+", re.IGNORECASE)
_ARROWS = re.compile(r"(?<!\s)\s*(?:->|→|=>|⇒|>)\s*")
_NUMBERING = re.compile(r"^\s*(?:step\s*)?\(?\d{1,2}(?:\s*[.):\-])?\s+", re.IGNORECASE)
_LIST_NUMBER = re.compile(r"(?:^|\s)\d{1,2}[.)]\s+")
_STEP_NUMBER = re.compile(r"(?<!\s)\s*(?:step\s*)?#?(\d{1,2})\b", re.IGNORECASE)
DECISION_KEYS = {"list": "hire", "hire": "hire", "hires": "hire", "team": "hire", "workflow": "workflow",
                 "assign": "assign", "assignment": "assign", "assignments": "assign", "rationale": "rationale"}


def _name(source: str, rest: str, situation: Situation, command: Command, label: str) -> tuple[str, str]:
    return NameArg(label, source).parse(rest, situation, command)


@dataclass(frozen=True)
class NamesArg(Arg):
    """One or more names from a live list, separated by commas or 'and'; the situation's limit caps how many."""

    source: str = "company"

    def _bounds(self, situation: Situation | None) -> tuple[int, int]:
        """(fewest, most) names; without a limit in the situation, any number of the names available."""
        limit = situation.limits.get(self.name) if situation is not None else None
        if limit is not None:
            return limit
        names = situation.names.get(self.source, ()) if situation is not None else ()
        return 1, max(2, len(names))

    def parse(self, rest, situation, command):
        values: list[str] = []
        text = rest
        filler = _FILLER.match(rest)
        if filler is not None and filler.end() > 0:
            try:
                _name(self.source, rest, situation, command, self.source)
            except ArgError:
                text = rest[filler.end():]  # "apply to X", "accept the offer from X"
        while True:
            value, text = _name(self.source, text, situation, command, self.source)
            if value in values:
                raise ArgError(f"{value} is named twice")
            values.append(value)
            sep = _SEPARATOR.match(text)
            if sep is None or not text[sep.end():].strip():
                break
            if not text[sep.end():sep.end() + 1].isupper():  # (a capitalised word may be a name: refused as before)
                try:
                    _name(self.source, text[sep.end():], situation, command, self.source)
                except ArgError:
                    # prose after the names ("apply X, as agreed"); not when a name follows later ("X, and also Y": read
                    # as X alone, Y would be dropped) or the word is a misspelt name ("cy mo"), which stay refused
                    later = text[sep.end():].lower()
                    known = [n.lower() for n in situation.names.get(self.source, ())]
                    if not any(n in later for n in known) and close_match(later.split(None, 1)[0], known, cutoff=0.5) is None:
                        break
            text = text[sep.end():]
        high = self._bounds(situation)[1]
        if len(values) > high:
            why = situation.limit_reasons.get(self.name, "")
            raise ArgError(f"at most {high} allowed ({len(values)} given){f': {why}' if why else ''}")
        return tuple(values), text

    def format(self, value) -> str:
        return ", ".join(value)

    def usage(self, situation=None):
        return f"<{self.source}>" if self._bounds(situation)[1] == 1 else f"<{self.source}>[, <{self.source}>...]"

    def example(self, situation=None):
        names = situation.names.get(self.source, ()) if situation is not None else ()
        return ", ".join(names[:2] if self._bounds(situation)[1] > 1 else names[:1]) or self.source

    def sample(self, rng, situation):
        names = situation.names.get(self.source, ())
        if not names:
            return self.source
        low, high = self._bounds(situation)
        k = int(rng.integers(low, min(high, len(names)) + 1))
        return ", ".join(names[int(i)] for i in rng.permutation(len(names))[:k])

    def spec(self, situation=None):
        low, high = self._bounds(situation)
        return {"name": self.name, "kind": "names", "choices": list(situation.names.get(self.source, ()) if situation else ()), "low": low, "high": high}

    # constrained decoding: each allowed set of names once, in the live list's order, while the
    # sets are few enough to spell out; beyond that a looser list (a name may repeat)
    MAX_SPELLED_OUT = 2_000

    def _spelled_out(self, situation):
        names = situation.names.get(self.source, ())
        high = min(self._bounds(situation)[1], len(names))
        return sum(comb(len(names), k) for k in range(1, high + 1)) <= self.MAX_SPELLED_OUT

    def exact_for(self, situation):
        return self._spelled_out(situation)

    def grammar(self, situation):
        from teamenvs.core.constrain import Lit, Repeat, Seq, one_of

        names = tuple(situation.names.get(self.source, ()))
        high = min(self._bounds(situation)[1], len(names))
        if not names or high < 1:
            return None
        if not self._spelled_out(situation):
            return Seq((one_of(names), Repeat(Seq((Lit(", "), one_of(names))), 0, high - 1)))
        return _chains(names, 0, high)


@lru_cache(maxsize=1024)
def _chains(names: tuple[str, ...], start: int, room: int) -> Any:
    """Every list of 1 to `room` of `names[start:]` in their order, joined by ', ' (a grammar node)."""
    from teamenvs.core.constrain import Alt, Lit, Seq

    options: list[Any] = []
    for j in range(start, len(names)):
        options.append(Lit(names[j]))
        rest = _chains(names, j + 1, room - 1) if room > 1 and j + 1 < len(names) else None
        if rest is not None:
            options.append(Seq((Lit(names[j]), Lit(", "), rest)))
    return options[0] if len(options) == 1 else Alt(tuple(options)) if options else None


def split_steps(text: str) -> tuple[str, ...]:
    """Free-text workflow steps from 'A -> B -> C' (or 'A; B', 'A, B', '1. A 2. B'); ArgError when malformed."""
    text = clean_text(text, MAX_STEPS * (MAX_STEP_CHARS + 4))
    if _ARROWS.search(text):
        parts = _ARROWS.split(text)
    elif ";" in text:
        parts = text.split(";")
    elif _LIST_NUMBER.search(text):
        parts = _LIST_NUMBER.split(text)
    else:
        parts = text.split(",")
    steps = [_NUMBERING.sub("", p).strip(" .:-\"'`") for p in parts]
    steps = [s for s in steps if s]
    placeholder = next((p for p in map(placeholder_in, steps) if p is not None), None)
    if placeholder is not None:
        raise ArgError(f"a step still holds the placeholder {quote(placeholder, 34)} from the command list: name your steps")
    if not steps:
        raise ArgError("the workflow needs at least one step, e.g. 'workflow Research -> Build -> Review'")
    if len(steps) > MAX_STEPS:
        raise ArgError(f"a workflow has at most {MAX_STEPS} steps ({len(steps)} given)")
    long = next((s for s in steps if len(s) > MAX_STEP_CHARS), None)
    if long is not None:
        raise ArgError(f"a step name has at most {MAX_STEP_CHARS} characters: {quote(long, 40)}")
    seen: set[str] = set()
    for s in steps:
        if s.lower() in seen:
            raise ArgError(f"step {quote(s, 40)} appears twice; name each step once")
        seen.add(s.lower())
    return tuple(steps)


@dataclass(frozen=True)
class StepsArg(Arg):
    """A workflow: free-text steps in order, joined by '->'."""

    def parse(self, rest, situation, command):
        return split_steps(rest), ""

    def format(self, value) -> str:
        return " -> ".join(value)

    def usage(self, situation=None):
        return "<step> -> <step> [-> <step> ...]"

    def example(self, situation=None):
        return "Research -> Build -> Review"

    # constrained decoding: steps of letters and single spaces joined by ' -> ', at most MAX_STEPS;
    # not exact, as a grammar cannot say that the steps differ (the parser refuses a repeat)
    def grammar(self, situation):
        from teamenvs.core.constrain import Chars, Lit, Repeat, Seq

        word = Chars("A-Za-z", 1, 12)
        step = Seq((word, Repeat(Seq((Lit(" "), word)), 0, 5)))  # at most 77 characters
        return Seq((step, Repeat(Seq((Lit(" -> "), step)), 0, MAX_STEPS - 1)))

    def sample(self, rng, situation):
        pool = ("Planning", "Research", "Design", "Build", "Review", "Testing", "Launch", "Reporting")
        return " -> ".join(pool[int(i)] for i in rng.permutation(len(pool))[: int(rng.integers(1, 5))])


def _step(text: str, situation: Situation, command: Command) -> tuple[str, str]:
    steps = situation.names.get("step", ())
    number = _STEP_NUMBER.match(text)
    if number is not None and (text[number.end():].strip() == "" or _SEPARATOR.match(text[number.end():])):
        i = int(number.group(1))
        if not 1 <= i <= len(steps):
            raise ArgError(f"there is no step {i}; your workflow has {len(steps)} steps: {', '.join(steps)}")
        return steps[i - 1], text[number.end():]
    return _name("step", text, situation, command, "step")


@dataclass(frozen=True)
class AssignmentsArg(Arg):
    """'<name> to <step>' pairs (a step by its name or number); 'X to A and B' assigns X to two steps."""

    def parse(self, rest, situation, command):
        pairs: list[tuple[str, str]] = []
        text = rest
        hires = situation.names.get("hire", ())
        while True:
            name, text = _name("hire", text, situation, command, "hire")
            to = _TO.match(text)
            if to is None:
                raise ArgError(f"write '<name> to <step>', e.g. 'assign {name} to {(situation.names.get('step') or ('Design',))[0]}'")
            step, text = _step(text[to.end():], situation, command)
            pairs.append((name, step))
            while True:
                sep = _SEPARATOR.match(text)
                if sep is None or not text[sep.end():].strip():
                    break
                after = text[sep.end():]
                if any(after.lower().startswith(h.lower()) for h in hires):
                    break
                step, text = _step(after, situation, command)
                pairs.append((name, step))
            sep = _SEPARATOR.match(text)
            if sep is None or not text[sep.end():].strip():
                break
            text = text[sep.end():]
        return tuple(dict.fromkeys(pairs)), text

    def format(self, value) -> str:
        return ", ".join(f"{n} to {s}" for n, s in value)

    def usage(self, situation=None):
        return "<name> to <step>[, <name> to <step>...]"

    def example(self, situation=None):
        hires = situation.names.get("hire", ()) if situation is not None else ()
        steps = situation.names.get("step", ()) if situation is not None else ()
        return f"{hires[0] if hires else 'Ada Quist'} to {steps[0] if steps else 'Design'}"

    exact = True

    def grammar(self, situation):
        """'<hire> to <step>' pairs joined by ', ' (constrained decoding)."""
        from teamenvs.core.constrain import Lit, Repeat, Seq, one_of

        hires, steps = situation.names.get("hire", ()), situation.names.get("step", ())
        if not hires or not steps:
            return None
        pair = Seq((one_of(hires), Lit(" to "), one_of(steps)))
        return Seq((pair, Repeat(Seq((Lit(", "), pair)), 0, None)))

    def sample(self, rng, situation):
        hires, steps = situation.names.get("hire", ()), situation.names.get("step", ())
        if not hires or not steps:
            return self.example(situation)
        n = int(rng.integers(1, len(hires) + 1))
        return ", ".join(f"{hires[int(rng.integers(len(hires)))]} to {steps[int(rng.integers(len(steps)))]}" for _ in range(n))


def _names_in(value: Any, known: tuple[str, ...], what: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) and "," not in value else (value.split(",") if isinstance(value, str) else value)
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise ArgError(f"'{what}' must be a list of names")
    lookup = {k.lower(): k for k in known}
    out = []
    for item in items:
        name = lookup.get(" ".join(item.split()).lower())
        if name is None:
            raise ArgError(f"unknown name {quote(item, 30)} in '{what}'. Known: {', '.join(known) or '(none)'}")
        if name not in out:
            out.append(name)
    return tuple(out)


def read_decision(obj: Mapping[str, Any], situation: Situation) -> dict[str, Any]:
    """The JSON decision form as {"hire", "workflow", "assign", "rationale"}, or ArgError saying what is wrong."""
    parts: dict[str, Any] = {}
    for key, value in obj.items():
        part = DECISION_KEYS.get(str(key).strip().lower())
        if part is None:
            raise ArgError(f"unknown key {quote(str(key), 30)} in the decision; use list, workflow, assign and (optional) rationale")
        parts[part] = value
    missing = [k for k, label in (("hire", "list"), ("workflow", "workflow"), ("assign", "assign")) if k not in parts]
    if missing:
        raise ArgError(f"the decision needs the parts list, workflow and assign; missing: {', '.join(missing).replace('hire', 'list')}")
    hires = _names_in(parts["hire"], situation.names.get("candidate", ()), "list")
    workflow = parts["workflow"]
    if isinstance(workflow, list) and all(isinstance(s, str) for s in workflow):
        steps = split_steps(" -> ".join(workflow))
    elif isinstance(workflow, str):
        steps = split_steps(workflow)
    else:
        raise ArgError("'workflow' must be a list of step names or a text 'A -> B -> C'")
    rationale = parts.get("rationale", "")
    if not isinstance(rationale, str):
        raise ArgError("'rationale' must be a text")
    inner = Situation(names={"hire": hires, "step": steps})
    pairs: list[tuple[str, str]] = []
    raw = parts["assign"]
    if isinstance(raw, Mapping):
        items = list(raw.items())
    elif isinstance(raw, list) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in raw):
        items = [tuple(p) for p in raw]
    elif isinstance(raw, list) and all(isinstance(p, Mapping) for p in raw):
        items = [(p.get("name"), p.get("step")) for p in raw]
    else:
        raise ArgError("'assign' must map names to steps, e.g. {\"Ada Quist\": \"Design\"}")
    lowered_hires = {h.lower(): h for h in hires}
    for key, value in items:
        if not isinstance(key, str):
            raise ArgError("'assign' must map names to steps")
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
            raise ArgError("'assign' must map names to steps (a step name, a step number, or a list of them)")
        if key.strip().lower() in lowered_hires:  # name -> step(s)
            name = lowered_hires[key.strip().lower()]
            for v in values:
                pairs.append((name, _step(str(v), inner, SUBMIT)[0]))
        else:  # step -> name(s)
            step = _step(key, inner, SUBMIT)[0]
            for v in values:
                pairs.append((_names_in(str(v), hires, "assign")[0], step))
    return {"hire": hires, "workflow": steps, "assign": tuple(dict.fromkeys(pairs)), "rationale": clean_text(rationale, 2_000)}


@dataclass(frozen=True)
class DecisionArg(TextArg):
    """Optional: the whole decision as one JSON object (see `read_decision`); nothing means 'submit what I gave'."""

    def parse(self, rest, situation, command):
        text = rest.strip()
        if not text.startswith("{"):
            return None, rest
        try:
            obj = json.loads(text[: text.rfind("}") + 1])
        except (ValueError, RecursionError):
            raise ArgError("the decision is not valid JSON; write e.g. {\"list\": [...], \"workflow\": [...], \"assign\": {...}}") from None
        if not isinstance(obj, dict):
            raise ArgError("the decision must be a JSON object")
        return read_decision(obj, situation), ""

    def format(self, value) -> str:
        return "" if value is None else json.dumps({k: list(v) if isinstance(v, tuple) else v for k, v in value.items()}, ensure_ascii=False)

    def usage(self, situation=None):
        return "[<decision as JSON>]"

    def example(self, situation=None):
        return ""

    def sample(self, rng, situation):
        return ""

    # constrained decoding: the bare `submit` (what was given with hire/workflow/assign); the JSON
    # decision stays for unconstrained replies
    def grammar(self, situation):
        from teamenvs.core.constrain import Lit

        return Lit("")

    def json_schema(self, situation):
        return {"type": "string", "enum": [""]}

    def values(self, situation):
        # the one value offered (the bare `submit`), tried against the rules: before any workflow they refuse
        # it, so a constrained recruiter is not offered a submit that would be rejected
        return ("",)


class JobFairCommands(CommandSet):
    """The command set, reading a bare JSON decision object as `submit <json>`."""

    def _from_json(self, text: str) -> str | None:
        found = super()._from_json(text)
        if found is not None:
            return found
        start = text.find("{")
        if start < 0 or start > 8:
            return None
        body = text[start : text.rfind("}") + 1]
        try:
            obj = json.loads(body)
        except (ValueError, RecursionError):
            return None
        if isinstance(obj, dict) and any(str(k).strip().lower() in DECISION_KEYS for k in obj):
            return "submit " + body
        return None


SUBMIT = Command("submit", (DecisionArg("decision"),), "recruiter: hand in your hires, workflow and assignments (or give all three as one JSON object)",
                 ("submit", 'submit {"list": ["Ada Quist"], "workflow": ["Research", "Build"], "assign": {"Ada Quist": ["Research", "Build"]}}'))
COMMANDS = JobFairCommands(
    [
        Command("apply", (NamesArg("companies", "company"),), "seeker: ask for interviews with these companies (once; within your limit)",
                ("apply Brightloop Software",)),
        Command("think", (TextArg("thought", "I want a team that can ship a reliable product"),),
                "recruiter: note your initial thoughts before the interviews (recorded)", ("think I need strong technical skills",)),
        Command("wait", (), "do nothing now", ("wait",)),
        Command("say", SAY.args, "interview: speak to the person you are interviewing with (one turn)",
                ("say Could you tell me about your experience?",)),
        Command("end interview", (), "interview: end the interview now", ("end interview",)),
        Command("hire", (NamesArg("names", "candidate"),), "recruiter: the people you hire (replaces any earlier list)", ("hire Ada Quist, Bilal Eze",)),
        Command("workflow", (StepsArg("steps"),), "recruiter: your team's workflow, steps in order (replaces any earlier one)",
                ("workflow Research -> Build -> Review",)),
        Command("assign", (AssignmentsArg("assignments"),), "recruiter: give hires their workflow steps (by step name or number)",
                ("assign Ada Quist to Research, Bilal Eze to 2",)),
        SUBMIT,
        Command("accept", (NamesArg("company", "offer"),), "seeker: accept this job offer (you can accept only one)", ("accept Brightloop Software",)),
        Command("decline", (NamesArg("company", "offer"),), "seeker: decline this job offer", ("decline Brightloop Software",)),
    ]
)

SEEKER_COMMANDS = ("apply", "say", "end interview", "accept", "decline")
RECRUITER_COMMANDS = ("think", "wait", "say", "end interview", "hire", "workflow", "assign", "submit")
ALLOWED_IN = {
    "apply": "seekers, in the applications phase",
    "think": "recruiters, in the applications phase",
    "wait": "recruiters, in the applications phase",
    "say": "the interviews, on your turn",
    "end interview": "the interviews, on your turn",
    "hire": "recruiters, in the decisions phase",
    "workflow": "recruiters, in the decisions phase",
    "assign": "recruiters, in the decisions phase",
    "submit": "recruiters, in the decisions phase",
    "accept": "seekers with a job offer, in the offers phase",
    "decline": "seekers with a job offer, in the offers phase",
}


def _limits(game: FairState) -> dict[str, tuple[int, int]]:
    return {"companies": (1, game.fair.max_applications), "company": (1, 1)}


@lru_cache(maxsize=256)
def _denied(phase: str, allowed: tuple[str, ...], deciding: bool) -> tuple[tuple[str, str], ...]:
    """The commands not in `allowed`, each with why, in the command set's order (`deciding`: a recruiter in the decisions phase)."""
    denied = []
    for name in COMMANDS.commands:
        if name in allowed:
            continue
        if name == "hire" and deciding:
            denied.append((name, "nobody interviewed with you, so there is nobody to hire; give your workflow and submit"))
        elif name == "assign" and deciding:
            denied.append((name, "first hire someone and give your workflow"))
        else:
            denied.append((name, f"it is for {ALLOWED_IN[name]}; it is now the {phase} phase"))
    return tuple(denied)


def situation(game: FairState, agent: str) -> Situation:
    """What `agent` may do now: the commands of its role and phase, the names it may use, the application limit."""
    denied = dict(_denied(game.phase, game.allowed(agent), game.phase == "decisions" and agent in game.drafts))
    draft = game.drafts.get(agent)
    names = {
        "company": game.fair_key[0],  # the companies' names
        "candidate": game.candidates.get(agent, ()),
        "hire": draft.hire if draft else (),
        "step": draft.workflow if draft else (),
        "offer": tuple(game.offers.get(agent, ())),
    }
    limit = game.fair.max_applications
    reasons = {"companies": f"you may apply to at most {limit} compan{'y' if limit == 1 else 'ies'}"}
    return Situation(denied, _limits(game), names, reasons)


def briefing_situation(game: FairState, agent: str) -> Situation:
    """The commands of `agent`'s role, for its briefing."""
    mine = SEEKER_COMMANDS if agent in game.persona else RECRUITER_COMMANDS
    denied = {c: "another role's command" for c in COMMANDS.commands if c not in mine}
    if not game.config.communication:  # no interviews: their commands are never valid, and the briefing does not list them
        denied.update(dict.fromkeys(("say", "end interview"), "there are no interviews"))
    return Situation(denied, _limits(game), {"company": tuple(c.name for c in game.fair.companies)})


# ---------------------------------------------------------------------- discrete actions (teamenvs.core.rl)
# Labels are the same for every agent of a config (roles differ only through the mask); indices
# are 1-based in labels: company k is the k-th company of the fair (the order every seeker's view
# lists them, and recruiter_k's company), candidate j the j-th name of a recruiter's candidates
# (the order it interviewed them), step s the s-th step of its draft workflow.
RECRUITER_LINES = {
    "say ask about skills": "Welcome to {company}. Please tell me about your skills and experience.",
    "say ask about areas": "Our project needs {areas}. Which of these can you take on?",
}
SEEKER_LINES = ("say introduce", "say claim own areas", "say claim all areas")
_CANDIDATE = re.compile(r"(hire add|hire drop) candidate (\d+)$")
_ASSIGN = re.compile(r"assign candidate (\d+) to step (\d+)$")
_COMPANY = re.compile(r"(accept|decline) company (\d+)$")
_APPLY = re.compile(r"apply compan(?:y|ies) ([\d+]+)$")


def catalogue(config: JobFairConfig) -> tuple[str, ...]:
    """The discrete action labels of `config` (index 0 the no-op); `docs/rl/job_fair_v0.md` lists them."""
    lay = layout(config)
    labels = [NOOP, "think"]
    labels += [("apply company " if len(s) == 1 else "apply companies ") + "+".join(str(k + 1) for k in s) for s in lay.apply_sets]
    labels += [*RECRUITER_LINES, *SEEKER_LINES, "end interview"]
    labels += [f"hire {how} candidate {j}" for how in ("add", "drop") for j in range(1, lay.seekers + 1)]
    labels += [f"workflow of {b}" for b in lay.businesses]
    labels += [f"assign candidate {j} to step {s}" for j in range(1, lay.seekers + 1) for s in range(1, lay.steps + 1)]
    labels += ["submit"]
    labels += [f"{how} company {k}" for how in ("accept", "decline") for k in range(1, lay.companies + 1)]
    return tuple(labels)


@lru_cache(maxsize=4096)
def _spec(label: str) -> tuple[Any, ...]:
    """A label as (kind, arguments), parsed once."""
    if label in RECRUITER_LINES or label in SEEKER_LINES or label in ("think", "end interview", "submit"):
        return (label,)
    if label.startswith("workflow of "):
        return ("workflow", label[len("workflow of "):])
    found = _APPLY.match(label)
    if found:
        return ("apply", tuple(int(k) - 1 for k in found.group(1).split("+")))
    found = _CANDIDATE.match(label)
    if found:
        return (found.group(1), int(found.group(2)) - 1)
    found = _ASSIGN.match(label)
    if found:
        return ("assign", int(found.group(1)) - 1, int(found.group(2)) - 1)
    found = _COMPANY.match(label)
    if found:
        return (found.group(1), int(found.group(2)) - 1)
    return (NOOP,)


@lru_cache(maxsize=1)
def _standard_workflows() -> dict[str, str]:
    from teamenvs.job_fair.fair import catalogue as fair_catalogue

    return {name: " -> ".join(s.name for s in b.workflow) for name, b in fair_catalogue().businesses.items()}


_last: list[Any] = [None, None, None]  # (a view, its table key, (its table,) once asked): the core asks label by label about one view


def _wanted(view: Mapping[str, Any]) -> tuple[str, ...]:
    """The areas a team of the seeker's current interview company's type needs (the shipped catalogue)."""
    company = view["interview"]["company"]
    return next((team_areas(c["company_type"]) for c in view["companies"] if c["name"] == company), ())


def _table_key(view: Mapping[str, Any]) -> tuple:
    """What the view's command table reads of it (`_table`, a function of this alone), as one hashable value: the
    kind of table, then its inputs. ("apply", the companies' names) for a seeker's applications."""
    if not view["valid_now"]:
        return ("none",)
    phase, role = view["phase"], view["role"]
    if phase == "interviews":
        interview = view["interview"]
        if interview is None or not interview["your_turn"]:
            return ("none",)
        if role == "recruiter":
            return ("ask", view["company"], team_areas(view["company_type"]))
        return ("answer", view["name"], tuple(view["skills"]), _wanted(view))
    if role == "seeker":
        if phase == "applications":
            return ("apply", tuple([c["name"] for c in view["companies"]]))
        if phase == "offers":
            return ("offers", tuple([c["name"] for c in view["companies"]]), tuple(view["offers"]))
        return ("none",)
    if phase == "applications":
        return ("think", team_areas(view["company_type"]), view["goal"])
    if phase != "decisions":
        return ("none",)
    draft = view["draft"]
    return ("decide", tuple(view["candidates"]), tuple(draft["hire"]), tuple(draft["workflow"]), tuple(map(tuple, draft["assign"])))


@lru_cache(maxsize=1024)  # the same inputs recur across agents, steps and episodes (an interview's lines, a draft)
def _table(key: tuple) -> dict[str, str] | None:
    """Every label that stands for a command in a view whose table key (`_table_key`) is `key`, with its command
    (read-only: one dict serves every view with that key); None for a seeker's applications (its apply sets depend
    on the config, so those labels are read one by one)."""
    kind = key[0]
    if kind == "apply":
        return None
    table: dict[str, str] = {}
    if kind == "ask":
        _, company, areas = key
        table["end interview"] = "end interview"
        for label, line in RECRUITER_LINES.items():
            table[label] = "say " + line.format(company=company, areas=", ".join(areas))
    elif kind == "answer":
        _, name, skills, wanted = key
        table["end interview"] = "end interview"
        listed = ", ".join(skills)
        mine = {s.lower() for s in skills}
        can = [a for a in wanted if a.lower() in mine]
        table["say introduce"] = f"say I am {name}. My skills are {listed}."
        table["say claim own areas"] = (f"say I can take on {', '.join(can)}." if can else
                                        f"say None of those, I am afraid. My skills are {listed}.")
        table["say claim all areas"] = f"say All of them: {', '.join(wanted)}. I have experience in each."
    elif kind == "offers":
        _, companies, offers = key
        for k, company in enumerate(companies, start=1):
            if company in offers:
                table[f"accept company {k}"] = f"accept {company}"
                table[f"decline company {k}"] = f"decline {company}"
    elif kind == "think":
        _, areas, goal = key
        table[NOOP] = "wait"
        table["think"] = f"think I am looking for people skilled in {', '.join(areas)} to {goal}."
    elif kind == "decide":
        _, candidates, hire, workflow, assign = key
        table["submit"] = "submit"
        current = " -> ".join(workflow)
        for business, steps in _standard_workflows().items():
            if steps != current:
                table[f"workflow of {business}"] = "workflow " + steps
        hired, assigned = set(hire), set(assign)
        for j, name in enumerate(candidates, start=1):
            if name in hired:
                keep = [c for c in candidates if c in hired and c != name]
                if keep:
                    table[f"hire drop candidate {j}"] = "hire " + ", ".join(keep)
                for s, step in enumerate(workflow, start=1):
                    if (name, step) not in assigned:
                        table[f"assign candidate {j} to step {s}"] = f"assign {name} to {step}"
            else:
                table[f"hire add candidate {j}"] = "hire " + ", ".join(c for c in candidates if c in hired or c == name)
    return table


def _key_of(view: Mapping[str, Any]) -> tuple:
    """`_table_key(view)`, worked out once per view (a view is never changed after it is made)."""
    if _last[0] is not view:
        _last[:] = (view, _table_key(view), None)
    return _last[1]


def _table_of(view: Mapping[str, Any]) -> dict[str, str] | None:
    """The view's command table (`_table`), looked up once per view."""
    key = _key_of(view)
    if _last[2] is None:
        _last[2] = (_table(key),)
    return _last[2][0]


def command_for(view: Mapping[str, Any], label: str) -> str | None:
    """The command `label` stands for in this view, or None when it cannot be given now.

    Only the view is read (what the agent's observation shows). A label of the other role, of
    another phase, naming a company, candidate or step that does not exist, or that would change
    nothing (hiring someone already hired, the workflow the draft already has, an assignment it
    already holds) gives None; whether the command is valid is then the parser's and the rules'
    call (`TeamEnv.accepts`). The commands of a view are worked out once, at its first label (a
    view is never changed after it is made).
    """
    table = _table_of(view)
    if table is not None:
        return table.get(label)
    spec = _spec(label)
    if spec[0] != "apply":
        return None
    companies = view["companies"]
    if spec[1][-1] >= len(companies):
        return None
    return "apply " + ", ".join(companies[k]["name"] for k in spec[1])


def mask_key(view: Mapping[str, Any]) -> tuple:
    """What a view's action mask depends on within one situation (see `TeamEnv._mask_key`), exactly: what its
    command table reads of it (`_table_key`; the table is a function of it alone), which for a seeker's applications
    is the companies' names its apply labels read. The rules' one refusal (a plain submit before any workflow) reads
    the phase and the draft's workflow, which the situation holds."""
    return _key_of(view)


@lru_cache(maxsize=64)
def _apply_labels(labels: tuple[str, ...]) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """(index, company indices) of a catalogue's apply labels."""
    return tuple((i, _spec(label)[1]) for i, label in enumerate(labels) if _spec(label)[0] == "apply")


def candidates(view: Mapping[str, Any], labels: tuple[str, ...]) -> list[tuple[int, str]]:
    """(index, command) of every label of `labels` (a `catalogue`) that `command_for` gives a command in this view,
    in index order: the same pairs as asking `command_for` label by label, from the view's table at once."""
    table = _table_of(view)
    if table is None:  # a seeker's applications: its apply labels alone give commands
        companies = view["companies"]
        return [(i, "apply " + ", ".join(companies[k]["name"] for k in ks)) for i, ks in _apply_labels(labels) if ks[-1] < len(companies)]
    return candidates_in(table, labels)


# Parses shared by situations and episodes. A command that starts with a command's name (and a space)
# is read by that command alone, never searched for in prose; when it parses, the parse read only
# whether the command is denied and its arguments' live names and limits (`_READS`), so the same
# text parses to the same action wherever those are the same. A failed parse is kept by the whole situation.
def _arg_reads(arg: Arg) -> tuple[tuple[str, str], ...]:
    """The situation entries a successful parse of `arg` reads, as (field, key)."""
    if isinstance(arg, NamesArg):
        return (("names", arg.source), ("limits", arg.name))
    if isinstance(arg, AssignmentsArg):
        return (("names", "hire"), ("names", "step"))
    if isinstance(arg, DecisionArg):  # a JSON decision names candidates
        return (("names", "candidate"),)
    if type(arg) is TextArg:
        return (("limits", arg.name),)  # its words per message
    if type(arg) is StepsArg:
        return ()
    raise TypeError(f"no reads declared for {type(arg).__name__}")


_PARSES = ParseMemo(COMMANDS, {c.name: tuple(r for a in c.args for r in _arg_reads(a)) for c in COMMANDS}, max_chars=400)
parse_in = _PARSES.parse  # longer commands than max_chars (none of the catalogue's) are parsed afresh
