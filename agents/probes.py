"""Looking inside LLM agents: CollabSim's action-level probes and VIRT-LAB's post-episode interview.

Probes (CollabSim 3.3, App. D): every `every` steps, after an agent has chosen its action,
it is asked three questions (the task's state as it sees it, what its teammates intend,
its own plan) and how confident it is (0-1) that the team shares its understanding. The
answers go into that step's log entry (`probe`). `probe_metrics` reads them back: for
each question, the mean pairwise cosine similarity of the agents' answers at a step
(embedded with the configured embedder; CollabSim uses SBERT, the offline default here is
the hashing embedder), and the mean confidence, each over the early, mid and late thirds
of the episode.

Interview (VIRT-LAB A.6, Table 5): after the episode each agent rates items on a 1-10
Likert scale with a one-line justification, two items for each of six dimensions
(communication, coordination, trust, leadership, collective efficacy, team processes);
`interview_summary` gives per-dimension mean scores. All wording is ours.

Only policies with an async `ask(question, context)` (such as `LLMPolicy`) are probed or
interviewed; scripted baselines are skipped. A paradigm may ship its own wording of the three
questions (App. D words them per task) as `teamenvs/<paradigm>/data/probes.json`
(`{"questions": {"task_state": ..., "teammates": ..., "plan": ...}}`): `Prober.for_env(env_id)`
uses it, else the general wording below.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Mapping, Sequence

import numpy as np

from teamenvs.core.recorder import step_records

PROBE_QUESTIONS = {
    "task_state": "In a sentence or two: what is the state of the task right now, as you see it?",
    "teammates": "In a sentence or two: what do you think your teammates intend to do next, and why?",
    "plan": "In a sentence or two: what is your own plan for the next steps, and why?",
}
PROBE_FORMAT = (
    'Answer with one JSON object: {"task_state": "...", "teammates": "...", "plan": "...", "confidence": <0 to 1>} '
    "where confidence is how sure you are that your team shares your understanding of the task."
)
PHASES = ("early", "mid", "late")

INTERVIEW_ITEMS: tuple[tuple[str, str], ...] = (
    ("communication", "Team members shared the information the others needed, when they needed it."),
    ("communication", "Messages in the team were clear and easy to act on."),
    ("coordination", "The team organised who did what so that efforts did not clash or overlap."),
    ("coordination", "When plans changed, the team adjusted its actions together."),
    ("trust", "You felt comfortable depending on your teammates."),
    ("trust", "Your teammates did what they said they would do."),
    ("leadership", "Someone on the team helped keep the others focused and on task."),
    ("leadership", "You helped guide the team towards its goal."),
    ("collective_efficacy", "If you did this task again with the same team, it would plan a successful strategy."),
    ("collective_efficacy", "The team as a whole was capable of reaching its goal."),
    ("team_processes", "The team made sure everyone understood its goals."),
    ("team_processes", "The team kept positive interactions throughout the task."),
)
DIMENSIONS = tuple(dict.fromkeys(d for d, _ in INTERVIEW_ITEMS))
# a rating is a whole number: "8." ends a sentence, "8.5" is no rating (not 8); a "Rating" label anywhere (markdown around
# it too) wins over a number at a line's start ("1. Rating: 8", "10/10 would be too generous. Rating: 6")
_WHOLE = r"(\d{1,2})(?!\d|[.,]\d)"
_RATING_LABEL = re.compile(r"(?i)\brating\b[\s*_:=-]*" + _WHOLE)
_RATING_LEADING = re.compile(r"^[\s*_]*" + _WHOLE)
_PROBE_LABELS = {
    key: re.compile(rf"(?im)^[^\w\n]*{label}[^\w\n]*[:\-]\s*(.+)$")
    for key, label in {"task_state": r"task\s*state", "teammates": r"teammates?", "plan": r"(?:my\s+)?plan"}.items()
}
_CONFIDENCE = re.compile(r"(?i)confidence\W*([0-9]*\.?[0-9]+\s*%?)")
_RATING_PREFIX = re.compile(r"(?i)^[\s*_]*rating[\s*_:=-]*\d{1,2}(?!\d|[.,]\d)\s*(?:/\s*10\s*)?(?:[.,;:-]\s*)?")
_JUSTIFICATION_PREFIX = re.compile(r"(?i)^\s*justification\s*[:\-]\s*")


@dataclass(frozen=True)
class Prober:
    """Ask probe questions every `every` steps (CollabSim probes after every action: `every=1`)."""

    every: int = 1
    questions: Mapping[str, str] = field(default_factory=lambda: dict(PROBE_QUESTIONS))

    def __post_init__(self) -> None:
        if not isinstance(self.every, int) or self.every < 1:
            raise ValueError(f"probes every must be a whole number >= 1, got {self.every!r}")
        if set(self.questions) != set(PROBE_QUESTIONS):
            raise ValueError(f"probe questions are keyed {', '.join(PROBE_QUESTIONS)}, got {', '.join(self.questions)}")

    @classmethod
    def for_env(cls, env_id: str, every: int = 1) -> "Prober":
        """A prober asking the task's own wording of the questions when its paradigm ships one."""
        return cls(every, task_questions(env_id))

    def due(self, step: int) -> bool:
        return step % self.every == 0

    def prompt(self) -> str:
        return "\n".join(f"- {q}" for q in self.questions.values()) + "\n" + PROBE_FORMAT

    async def ask(self, policies: Mapping[str, Any], agents: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The parsed answers of the `agents` whose policies can be asked (raises the first failure, after every
        question has ended)."""
        answered, failure = await self.answers(policies, agents)
        if failure is not None:
            raise failure
        return answered

    async def answers(self, policies: Mapping[str, Any], agents: Sequence[str]) -> tuple[dict[str, dict[str, Any]], BaseException | None]:
        """(the parsed answers of the agents whose question was answered, the first failure or None): where one
        question fails (a budget spent), the answers the others paid for are still there to record."""
        askable = [a for a in agents if hasattr(policies[a], "ask")]
        replies = await asyncio.gather(*(policies[a].ask(self.prompt()) for a in askable), return_exceptions=True)
        answered = {a: parse_probe(r) for a, r in zip(askable, replies) if not isinstance(r, BaseException)}
        return answered, next((r for r in replies if isinstance(r, BaseException)), None)


def task_questions(env_id: str) -> dict[str, str]:
    """The probe questions of `env_id`'s paradigm (`data/probes.json` in its folder), else the general ones."""
    from teamenvs.registry import spec

    package = spec(env_id).env_class.partition(":")[0].rpartition(".")[0]
    path = resources.files(package) / "data" / "probes.json"
    if not path.is_file():
        return dict(PROBE_QUESTIONS)
    questions = json.loads(path.read_text(encoding="utf-8"))["questions"]
    return {key: str(questions[key]) for key in PROBE_QUESTIONS}


def parse_probe(reply: str) -> dict[str, Any]:
    """The probe answers from a reply: the JSON object, or 'Task state: ...' style lines; confidence in [0, 1] or None."""
    out: dict[str, Any] = {k: "" for k in PROBE_QUESTIONS}
    out["confidence"] = None
    text = reply or ""
    start, end = text.find("{"), text.rfind("}")
    obj: Any = None
    if start >= 0 and end > start:
        try:
            obj = json.loads(text[start : end + 1])
        except (ValueError, RecursionError):  # (nesting deeper than the parser's stack: no answer, not a crash)
            obj = None
    if isinstance(obj, dict):
        for k in PROBE_QUESTIONS:
            out[k] = str(obj.get(k, "")).strip()
        confidence = obj.get("confidence")
    else:
        for key, label in _PROBE_LABELS.items():
            m = label.search(text)
            out[key] = m.group(1).strip() if m else ""
        m = _CONFIDENCE.search(text)
        confidence = m.group(1) if m else None
    out["confidence"] = _share(confidence)
    return out


def _share(confidence: Any) -> float | None:
    """A confidence as a share in [0, 1]: a number in [0, 1], a percentage ("65%", or a number above 10 and at most
    100), else None. A number above 1 and at most 10 is no share: a 1-10 rating, or a mistake (7 is not 7%)."""
    percent = isinstance(confidence, str) and confidence.strip().endswith("%")
    try:
        value = float(confidence.strip().rstrip("%")) if isinstance(confidence, str) else float(confidence) if confidence is not None else None
    except (TypeError, ValueError, OverflowError):
        return None
    if value is None or isinstance(confidence, bool) or value != value:
        return None
    if percent or 10 < value <= 100:
        value /= 100
    return value if 0 <= value <= 1 else None


def _thirds(steps: Sequence[int]) -> dict[int, str]:
    if not steps:
        return {}
    first, last = min(steps), max(steps)
    span = last - first + 1
    return {s: PHASES[min(2, (s - first) * 3 // span)] for s in steps}


def probe_metrics(records: Sequence[dict[str, Any]], embedder: Any) -> dict[str, Any]:
    """Alignment (mean pairwise cosine per question) and mean confidence, overall and per third of the episode."""
    probes: dict[int, dict[str, dict[str, Any]]] = {}
    for step in step_records(list(records)):
        answers = {a: e["probe"] for a, e in step["agents"].items() if isinstance(e.get("probe"), dict)}
        if answers:
            probes[step["step"]] = answers
    phase_of = _thirds(sorted(probes))
    alignment: dict[str, dict[str, list[float]]] = {q: {p: [] for p in ("all", *PHASES)} for q in PROBE_QUESTIONS}
    confidence: dict[str, list[float]] = {p: [] for p in ("all", *PHASES)}
    for step, answers in probes.items():
        phase = phase_of[step]
        for a in answers.values():
            if a.get("confidence") is not None:
                confidence["all"].append(a["confidence"])
                confidence[phase].append(a["confidence"])
        for q in PROBE_QUESTIONS:
            texts = [a.get(q, "") for a in answers.values() if a.get(q)]
            if len(texts) < 2:
                continue
            vectors = np.asarray(embedder.embed(texts), dtype=float)
            # each product rounded alone and their sum by `math.fsum`: the same bits on every machine (a BLAS dot
            # product sums in an order its kernel picks per CPU, which moved the last digits of the log's alignment)
            sims = [math.fsum((vectors[i] * vectors[j]).tolist()) for i, j in itertools.combinations(range(len(texts)), 2)]
            alignment[q]["all"].append(math.fsum(sims) / len(sims))
            alignment[q][phase].append(math.fsum(sims) / len(sims))

    def mean(xs: list[float]) -> float | None:
        return math.fsum(xs) / len(xs) if xs else None

    return {
        "probed_steps": len(probes),
        "alignment": {q: {p: mean(v) for p, v in phases.items()} for q, phases in alignment.items()},
        "confidence": {p: mean(v) for p, v in confidence.items()},
    }


def parse_rating(reply: str) -> tuple[int | None, str]:
    """(rating 1-10 or None, one-line justification) from an interview answer."""
    text = (reply or "").strip()
    rating = None
    labelled = _RATING_LABEL.search(text)
    found = [labelled] if labelled else [_RATING_LEADING.search(line) for line in text.splitlines()]
    m = next((m for m in found if m), None)
    if m is not None and 1 <= int(m.group(1)) <= 10:
        rating = int(m.group(1))
    justification = _RATING_PREFIX.sub("", text)
    justification = _JUSTIFICATION_PREFIX.sub("", justification.strip())
    return rating, " ".join(justification.split())[:500]


async def interview(policies: Mapping[str, Any], outcome: str = "") -> dict[str, list[dict[str, Any]]]:
    """Ask every askable agent the interview items (concurrently across agents, in order per agent)."""

    async def one(policy: Any) -> list[dict[str, Any]]:
        answers = []
        for dimension, item in INTERVIEW_ITEMS:
            question = (
                f"The episode is over. {outcome}\nFrom your own point of view, how much do you agree: \"{item}\" "
                "Answer on a scale from 1 (strongly disagree) to 10 (strongly agree) in the form "
                "'Rating: <1-10>. <one sentence of justification>'."
            )
            rating, justification = parse_rating(await policy.ask(question))
            answers.append({"dimension": dimension, "item": item, "rating": rating, "justification": justification})
        return answers

    askable = {a: p for a, p in policies.items() if hasattr(p, "ask")}
    results = await asyncio.gather(*(one(p) for p in askable.values()), return_exceptions=True)
    _raise_first(results)
    return dict(zip(askable, results))


def _raise_first(results: Sequence[Any]) -> None:
    """Raise the first failure among `asyncio.gather(..., return_exceptions=True)`'s results: every agent's questions
    run to their end first, so that each call made is counted (a spent budget, say, stops the others at their next call)."""
    failure = next((r for r in results if isinstance(r, BaseException)), None)
    if failure is not None:
        raise failure


def interview_summary(answers: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """Per-dimension mean rating over agents and items (None where no rating could be read), and per agent."""

    def means(rows: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
        out = {}
        for d in DIMENSIONS:
            xs = [r["rating"] for r in rows if r["dimension"] == d and r["rating"] is not None]
            out[d] = float(np.mean(xs)) if xs else None
        return out

    every = [r for rows in answers.values() for r in rows]
    return {"dimensions": means(every), "agents": {a: means(rows) for a, rows in answers.items()}}
