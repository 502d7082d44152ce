"""An agent's long-term memory: a stream of text records over a faiss index, retrieved by recency, importance and relevance.

    from agents.memory import MemoryStream
    memory = MemoryStream(capacity=500)                       # HashingEmbedder: offline, deterministic
    memory.add("I am the medic; I stabilise victims.", step=0, pinned=True)
    memory.add("Critical victim in room 12", step=3, importance=9)
    for m in memory.retrieve("where are the critical victims?", step=10, k=5, token_budget=400):
        print(m.kind, m.text)

Retrieval follows Generative Agents as used by PerSimChat (its Eq. 5.1 with every weight 1):

    score = w_recency * decay ** (step - last_access)     recency, decay 0.995 per step
          + w_importance * importance / 10                importance 0-10, scaled to 0-1
          + w_relevance * cosine(query, memory)           relevance, -1..1

`last_access` is the step a memory was stored or last returned by `retrieve`, so the newest (and
the most recently recalled) memories score highest on recency. Pinned memories (a persona, the
task) are always returned first; `k` counts the others. With `token_budget` the returned texts
fit the budget, a text counting `ceil(len(text) / 4)` tokens (`estimate_tokens`, the usual rule of
thumb for English with GPT-style tokenizers); memories that would overflow it are skipped in favour
of the next-ranked ones that fit.

Speed: embeddings are L2-normalised and kept in a `faiss.IndexFlatIP` (inner product = cosine).
Recency and importance are numpy arrays kept beside the index, so a query never loops over
memories in Python. Because cosine <= 1, a memory's score is at most its query-independent part
(recency + importance) plus `w_relevance`; retrieval scores the memories with the best such part,
then computes relevance only for those that could still enter the top k (exact, not approximate).
When too many could, it takes one matrix-vector product over the index's own storage (no copy).
Then `np.argpartition`. Top-10 of 100,000 memories takes under 1 ms on one core when recency and
importance spread memories out, about 5 ms in the worst case (see `python -m benchmarks.memory`).

Also here: a `capacity` with least-recently-accessed eviction (pinned memories are never evicted;
the faiss index is compacted in step with the metadata); optional consolidation (`merge_threshold`:
a new memory nearly identical to a stored one of the same kind refreshes it instead of adding a
duplicate, as PerSimChat filters what reaches long-term memory); `reflect`, which asks an LLM for
higher-level insights about recent memories and stores them as `reflection` memories citing their
sources (a reflection tree); `summarize_conversation`, which stores a MetaAgents-style
conversation summary (overarching theme and context + important details) as a `summary` memory;
and `get_state` / `set_state`, a JSON-ready snapshot that restores the stream exactly.

LLMs and importance raters are plain callables supplied by the caller (`async def llm(prompt) ->
str`; a rater `text -> float`, sync or async), so nothing here depends on a particular client.
faiss is imported when a stream is created, not at import time.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import inspect
import math
import re
import warnings
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.embedders import Embedder, HashingEmbedder, l2_normalize, run_sync
from teamenvs.core.text import excerpt

__all__ = [
    "KINDS",
    "LLM",
    "ImportanceRater",
    "Memory",
    "MemoryConfig",
    "MemoryStream",
    "estimate_tokens",
    "importance_prompt",
    "llm_importance_rater",
    "parse_insights",
    "parse_rating",
    "reflection_prompt",
    "retrieval_scores",
    "summary_prompt",
]

#: The kinds of memory a stream holds.
KINDS: tuple[str, ...] = ("observation", "message", "action", "reflection", "plan", "summary")
_KIND_CODE = {k: i for i, k in enumerate(KINDS)}

#: Rates a memory text 0-10; may return an awaitable (e.g. an LLM call).
ImportanceRater = Callable[[str], float | Awaitable[float]]
#: Answers a prompt; async (or sync) callable supplied by the caller.
LLM = Callable[[str], str | Awaitable[str]]

_STATE_FORMAT = "agents.memory.MemoryStream"
_STATE_VERSION = 1


def estimate_tokens(text: str) -> int:
    """Token estimate used by `token_budget`: `ceil(len(text) / 4)` (about 4 characters per token in English)."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class Memory:
    """One record of the stream (a snapshot: the stream keeps the live values)."""

    id: int
    text: str
    step: int
    kind: str
    importance: float
    last_access: int
    pinned: bool = False
    sources: tuple[int, ...] = ()  # for reflections: the ids of the memories they rest on

    @property
    def tokens(self) -> int:
        """`estimate_tokens(self.text)`."""
        return estimate_tokens(self.text)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


MAX_WEIGHT = 1e30  # a retrieval weight's most: the float32 score sum stays finite


@dataclass(frozen=True)
class MemoryConfig:
    """Retrieval weights and stream limits (PerSimChat / Generative Agents defaults).

    `capacity`: at most this many memories; adding beyond it evicts the least recently accessed
    non-pinned ones. `merge_threshold`: cosine at or above which a new memory merges into the most
    similar stored memory of the same kind (refreshing its `last_access`, keeping the higher
    importance) instead of being added; None stores everything.
    """

    w_recency: float = 1.0
    w_importance: float = 1.0
    w_relevance: float = 1.0
    decay: float = 0.995
    default_importance: float = 5.0
    capacity: int | None = None
    merge_threshold: float | None = None

    def __post_init__(self) -> None:
        for name in ("w_recency", "w_importance", "w_relevance"):
            w = getattr(self, name)
            # (scores are float32: a larger weight overflows to inf, and inf - inf is NaN, which drops memories)
            if not (_is_number(w) and math.isfinite(w) and 0 <= w <= MAX_WEIGHT):
                raise ValueError(f"{name} must be a number from 0 to {MAX_WEIGHT:g}, got {w!r}")
        if not (_is_number(self.decay) and 0 < self.decay <= 1):
            raise ValueError(f"decay must be in (0, 1], got {self.decay!r}")
        if not (_is_number(self.default_importance) and 0 <= self.default_importance <= 10):
            raise ValueError(f"default_importance must be within 0-10, got {self.default_importance!r}")
        if self.capacity is not None and (not isinstance(self.capacity, (int, np.integer)) or isinstance(self.capacity, bool) or self.capacity < 1):
            raise ValueError(f"capacity must be a positive int or None, got {self.capacity!r}")
        if self.merge_threshold is not None and not (_is_number(self.merge_threshold) and 0 < self.merge_threshold <= 1):
            raise ValueError(f"merge_threshold must be in (0, 1] or None, got {self.merge_threshold!r}")
        for name in ("w_recency", "w_importance", "w_relevance", "decay", "default_importance", "merge_threshold"):
            value = getattr(self, name)
            if value is not None:  # numpy scalars (a sweep's values) as Python numbers: `get_state` is JSON
                object.__setattr__(self, name, float(value))
        if self.capacity is not None:
            object.__setattr__(self, "capacity", int(self.capacity))


def retrieval_scores(
    relevance: np.ndarray | None,
    importance: np.ndarray,
    last_access: np.ndarray,
    step: int,
    config: MemoryConfig,
) -> np.ndarray:
    """Eq. 5.1 for every memory at once, as float32 (computed in place to keep a query cheap).

    `w_recency * decay ** max(step - last_access, 0) + w_importance * importance / 10 + w_relevance * relevance`.
    A memory accessed after `step` counts as brand new (recency 1). With `relevance=None`, the
    first two terms only (the query-independent "prior" that bounds a memory's score from below).
    """
    scores = np.subtract(step, last_access).astype(np.float32)  # age, exact in int64 first
    np.maximum(scores, 0, out=scores)
    scores *= np.float32(math.log(config.decay))
    np.exp(scores, out=scores)
    if config.w_recency != 1:
        scores *= np.float32(config.w_recency)
    scores += np.multiply(importance, config.w_importance / 10.0, dtype=np.float32, casting="unsafe")
    if relevance is not None:
        scores = _with_relevance(scores, relevance, config.w_relevance)
    return scores


def _with_relevance(prior: np.ndarray, relevance: np.ndarray, weight: float) -> np.ndarray:
    """`prior + weight * relevance` in float32 (one definition, so every code path adds the same way)."""
    return prior + np.multiply(relevance, weight, dtype=np.float32, casting="unsafe")


# ----------------------------------------------------------------------------- prompts (pure)


def reflection_prompt(memories: Sequence[tuple[int, str]], max_insights: int) -> str:
    """Ask for up to `max_insights` insights about numbered memories, each citing the numbers it rests on."""
    listed = "\n".join(f"[{i}] {text}" for i, text in memories)
    return (
        "Here are things you recently noticed, heard, did or concluded, each with its number:\n"
        f"{listed}\n\n"
        f"Step back and ask what they add up to. Write at most {max_insights} short insights: "
        "conclusions about the people, the task or yourself that no single line states outright and "
        "that would help you decide what to do next. Put each insight on its own line and end it with "
        "the numbers of the lines it is based on, in this form:\n"
        "<insight> (from 3, 7)\n"
        "Write nothing else."
    )


# Optional parts carry their own whitespace, and the cited list cannot start with a space,
# so no two whitespace runs compete (linear time on any model reply).
_BULLET = re.compile(r"^\s*(?:[-*\u2022]+|\(?\d+[.):]|insight\s*(?:\d+\s*)?[:.-])\s*", re.IGNORECASE)
_CITATION = re.compile(
    r"\(\s*(?:(?:from|because of|based on|sources?|evidence)\s*)?(?::\s*)?((?:[\d,;&and][\d,;\s&and]*)?\d)\s*\)\s*(?:\.\s*)?$",
    re.IGNORECASE,
)


def parse_insights(answer: str, valid_ids: Collection[int], limit: int) -> list[tuple[str, tuple[int, ...]]]:
    """(insight text, cited ids) per answer line, at most `limit`.

    Strips bullets and numbering, reads a trailing "(from 3, 7)" citation (ids not in `valid_ids`
    are dropped), and skips blank lines, headings ending in ':' and fragments under 3 characters.
    """
    valid = set(valid_ids)
    out: list[tuple[str, tuple[int, ...]]] = []
    for line in answer.splitlines():
        text = _BULLET.sub("", line.strip()).strip()
        sources: tuple[int, ...] = ()
        match = _CITATION.search(text)
        if match:
            cited = [int(x) for x in re.findall(r"\d+", match.group(1))]
            sources = tuple(dict.fromkeys(i for i in cited if i in valid))
            text = text[: match.start()].rstrip(" .;,-")
        if len(text) < 3 or text.endswith(":"):
            continue
        out.append((text, sources))
        if len(out) == limit:
            break
    return out


def summary_prompt(conversation: str) -> str:
    """Ask for a two-part conversation summary (MetaAgents): overarching theme and context, then important details."""
    return (
        "Below is a conversation you took part in. Write a note to your future self about it, in two parts.\n"
        "Theme and context: one or two sentences on what the conversation was about, who took part, "
        "and why it happened.\n"
        "Important details: a short list of the specifics worth remembering exactly as they were said "
        "(names, numbers, places, skills, offers, promises, decisions, unusual terms). Keep the original "
        "wording of key terms; do not paraphrase them and do not add anything that was not said.\n\n"
        f"Conversation:\n{conversation}"
    )


def importance_prompt(text: str) -> str:
    """Ask for a 0-10 importance rating of one memory."""
    return (
        "Rate how important the following is for you to remember, on a scale from 0 to 10. "
        "0 means routine and forgettable (small talk, waiting, an ordinary move); 10 means critical "
        "(a life at stake, a promise or betrayal, a decision that changes the plan).\n"
        f"Memory: {text}\n"
        "Answer with a single number."
    )


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def parse_rating(answer: str) -> float | None:
    """The first number in `answer`, clipped to 0-10; None if there is none."""
    match = _NUMBER.search(answer)
    if match is None:
        return None
    return float(min(10.0, max(0.0, float(match.group()))))


def llm_importance_rater(llm: LLM, default: float = 5.0) -> Callable[[str], Awaitable[float]]:
    """An async importance rater asking `llm` with `importance_prompt`; `default` when no number comes back."""
    if not (_is_number(default) and 0 <= default <= 10):
        raise ValueError(f"default must be within 0-10, got {default!r}")

    async def rate(text: str) -> float:
        rating = parse_rating(await _call(llm, importance_prompt(text)))
        return float(default) if rating is None else rating

    return rate


async def _call(llm: LLM, prompt: str) -> str:
    answer = llm(prompt)
    if inspect.isawaitable(answer):
        answer = await answer
    if not isinstance(answer, str):
        raise TypeError(f"the llm callable must return a str, got {type(answer).__name__}")
    return answer


# ----------------------------------------------------------------------------- validation


def _check_restored(pending: list[tuple], vectors: np.ndarray, next_id: Any, config: MemoryConfig) -> None:
    """A ValueError where a state's memories would not make a sound stream: ids repeated or not below `next_id` (the next
    memory would take one in use), vectors that are not finite and of unit length (or zero), more memories than the
    capacity."""
    ids = [p[0] for p in pending]
    if len(set(ids)) != len(ids):
        raise ValueError("the state holds two memories of one id")
    if isinstance(next_id, bool) or not isinstance(next_id, int) or next_id < 0 or (ids and next_id <= max(ids)):
        raise ValueError(f"the state's next_id must be a whole number above every memory's id, got {excerpt(next_id)}")
    if len(vectors):
        norms = np.linalg.norm(vectors.astype(np.float64), axis=1) if np.all(np.isfinite(vectors)) else None
        if norms is None or not np.all((np.abs(norms - 1) < 1e-3) | (norms == 0)):
            raise ValueError("the state's embeddings are not finite unit vectors (an edited state)")
    if config.capacity is not None and len(pending) > config.capacity:
        raise ValueError(f"the state holds {len(pending)} memories, more than its capacity of {config.capacity}")


MAX_STEP = 2**62  # steps are stored as int64, and the policy's clock counts on from them


def _check_step(step: Any, name: str = "step") -> int:
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or not 0 <= step < MAX_STEP:
        raise ValueError(f"{name} must be an int from 0 to 2**62 - 1, got {excerpt(step)}")
    return int(step)


def _check_kind(kind: Any) -> str:
    if kind not in _KIND_CODE:
        raise ValueError(f"unknown memory kind {kind!r}; expected one of {', '.join(KINDS)}")
    return kind


def _check_importance(value: Any, source: str) -> float:
    if not (_is_number(value) and math.isfinite(value) and 0 <= value <= 10):
        raise ValueError(f"importance must be a number within 0-10, got {value!r} ({source})")
    return float(value)


def _check_text(text: Any) -> str:
    if not isinstance(text, str):
        raise TypeError(f"memory text must be a str, got {type(text).__name__}")
    if not text.strip():
        raise ValueError("memory text is empty")
    return text


def _per_item(value: Any, n: int, name: str) -> list[Any]:
    """A scalar repeated n times, or a sequence of length n."""
    if isinstance(value, (list, tuple, np.ndarray)):
        if len(value) != n:
            raise ValueError(f"{name} has {len(value)} entries for {n} texts")
        return list(value)
    return [value] * n


def _import_faiss() -> Any:
    try:
        import faiss
    except ImportError as exc:
        raise ImportError("MemoryStream needs faiss: pip install faiss-cpu") from exc
    return faiss


def _signature(embedder: Any) -> str:
    return getattr(embedder, "signature", None) or type(embedder).__name__


@dataclass(frozen=True)
class _Merges:
    """Where each memory of a batch goes under consolidation (`merge_threshold`): `rows[j]`, the stored row it merges
    into; `earlier[j]`, the position of the batch's earlier new memory it merges into; else it is stored as new."""

    rows: list[int | None]
    earlier: dict[int, int]

    def new(self, j: int) -> bool:
        return self.rows[j] is None and j not in self.earlier


@dataclass
class _Pending:
    """Validated new memories waiting for embeddings and ratings."""

    texts: list[str]
    steps: list[int]
    kind: str
    importance: list[float | None]
    pinned: bool
    sources: list[tuple[int, ...]] = field(default_factory=list)


# ----------------------------------------------------------------------------- the stream


class MemoryStream:
    """Memories of one agent with Eq. 5.1 retrieval over a faiss inner-product index.

    `MemoryStream(embedder=None, config=None, *, importance_rater=None, **config_fields)`:
    `embedder` defaults to `HashingEmbedder()`; fields of `MemoryConfig` may be given directly
    (`MemoryStream(capacity=100, decay=0.99)`). `importance_rater(text)` rates memories added
    without an importance (sync or async; see `llm_importance_rater`); without one they get
    `config.default_importance`. `last_scanned`: how many memories the last ranking pass computed
    relevance for (the pruning statistic the benchmark reports).
    """

    _GROWABLE = ("_ids", "_steps", "_last_access", "_importance", "_pinned", "_kinds")

    def __init__(
        self,
        embedder: Embedder | None = None,
        config: MemoryConfig | None = None,
        *,
        importance_rater: ImportanceRater | None = None,
        **config_fields: Any,
    ) -> None:
        known = {f.name for f in dataclasses.fields(MemoryConfig)}
        unknown = sorted(set(config_fields) - known)
        if unknown:
            raise TypeError(f"unknown MemoryStream option(s) {unknown}; MemoryConfig fields are {sorted(known)}")
        if importance_rater is not None and not callable(importance_rater):
            raise TypeError("importance_rater must be callable: text -> float (or an awaitable float)")
        self.config = dataclasses.replace(config or MemoryConfig(), **config_fields)
        self.embedder: Embedder = embedder if embedder is not None else HashingEmbedder()
        self.importance_rater = importance_rater
        self._faiss = _import_faiss()
        self.last_scanned = 0  # relevance computations in the last retrieval (see _best); for benchmarks
        self._clear()

    # ------------------------------------------------------------------ storage

    def _clear(self) -> None:
        self._index: Any = None
        self._dim: int | None = None
        self._n = 0
        self._ids = np.zeros(0, dtype=np.int64)
        self._steps = np.zeros(0, dtype=np.int64)
        self._last_access = np.zeros(0, dtype=np.int64)
        self._importance = np.zeros(0, dtype=np.float64)
        self._pinned = np.zeros(0, dtype=bool)
        self._kinds = np.zeros(0, dtype=np.int8)
        self._texts: list[str] = []
        self._sources: list[tuple[int, ...]] = []
        self._row_of: dict[int, int] = {}
        self._next_id = 0
        self._since_reflection = 0
        self._matrix_view: np.ndarray | None = None

    def _reserve(self, extra: int) -> None:
        """Grow the metadata arrays (doubling) so `extra` more rows fit."""
        need = self._n + extra
        if need <= len(self._ids):
            return
        size = max(need, 2 * len(self._ids), 64)
        for name in self._GROWABLE:
            old = getattr(self, name)
            new = np.zeros(size, dtype=old.dtype)
            new[: self._n] = old[: self._n]
            setattr(self, name, new)

    def _new_index(self, dim: int) -> Any:
        self._dim = dim
        self._index = self._faiss.IndexFlatIP(dim)
        self._matrix_view = None
        return self._index

    def _matrix(self) -> np.ndarray:
        """The index's vectors as an (n, dim) float32 array (a view of faiss's storage, no copy)."""
        if self._matrix_view is None or self._matrix_view.shape[0] != self._n:
            n, d = self._n, self._dim or 0
            if n == 0:
                return np.zeros((0, d), dtype=np.float32)
            try:
                flat = self._faiss.rev_swig_ptr(self._index.get_xb(), n * d)
            except AttributeError:  # older faiss without get_xb: copy the codes
                flat = self._faiss.vector_to_array(self._index.codes).view(np.float32)
            self._matrix_view = np.asarray(flat).reshape(n, d)
        return self._matrix_view

    def _memory(self, row: int) -> Memory:
        return Memory(
            id=int(self._ids[row]),
            text=self._texts[row],
            step=int(self._steps[row]),
            kind=KINDS[self._kinds[row]],
            importance=float(self._importance[row]),
            last_access=int(self._last_access[row]),
            pinned=bool(self._pinned[row]),
            sources=self._sources[row],
        )

    def __len__(self) -> int:
        return self._n

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._row_of

    def __repr__(self) -> str:
        return f"MemoryStream({self._n} memories, dim={self._dim}, embedder={self.embedder!r}, config={self.config})"

    def get(self, memory_id: int) -> Memory:
        """The memory with this id (KeyError if it was never stored or has been evicted)."""
        row = self._row_of.get(memory_id)
        if row is None:
            raise KeyError(f"no memory with id {memory_id!r} (never added, or evicted)")
        return self._memory(row)

    def memories(self) -> list[Memory]:
        """All memories, oldest first (the order of `embeddings()`)."""
        return [self._memory(r) for r in range(self._n)]

    def embeddings(self) -> np.ndarray:
        """A copy of the stored embeddings, one row per memory in `memories()` order."""
        return self._matrix().copy()

    # ------------------------------------------------------------------ adding

    def _pending(self, texts: Sequence[str], step: Any, kind: str, importance: Any, pinned: bool, sources: Any = None) -> _Pending:
        if isinstance(texts, str):
            raise TypeError("add_many() takes a sequence of texts; use add() for one text")
        texts = [_check_text(t) for t in texts]
        n = len(texts)
        steps = [_check_step(s) for s in _per_item(step, n, "step")]
        kind = _check_kind(kind)
        imps = [None if v is None else _check_importance(v, "given") for v in _per_item(importance, n, "importance")]
        if not isinstance(pinned, (bool, np.bool_)):
            raise TypeError(f"pinned must be a bool, got {pinned!r}")
        if sources is not None and len(sources) != n:
            raise ValueError(f"sources has {len(sources)} entries for {n} texts")
        srcs = [tuple(int(i) for i in s) for s in (sources if sources is not None else [()] * n)]
        return _Pending(texts, steps, kind, imps, bool(pinned), srcs)

    def _embed_checked(self, vectors: Any, n: int) -> np.ndarray:
        vectors = l2_normalize(np.asarray(vectors))
        if vectors.shape[0] != n:
            raise RuntimeError(f"embedder returned {vectors.shape[0]} vectors for {n} texts")
        if self._dim is not None and vectors.shape[1] != self._dim:
            raise ValueError(f"embedder returned vectors of size {vectors.shape[1]}, but this stream holds size {self._dim}")
        return vectors

    def _merge_targets(self, p: _Pending, vectors: np.ndarray) -> _Merges:
        """Where each new memory goes under consolidation, as adding them one at a time would send it: into the
        most similar same-kind memory, stored or new earlier in the batch, at `merge_threshold` or above (a stored one
        on a tie), or in as a new memory."""
        threshold = self.config.merge_threshold
        n = len(p.texts)
        if threshold is None or p.pinned:
            return _Merges([None] * n, {})
        same = np.flatnonzero(self._kinds[: self._n] == _KIND_CODE[p.kind]) if self._n else np.zeros(0, dtype=np.int64)
        stored = self._matrix()[same] @ vectors.T if len(same) else np.zeros((0, n))  # (candidates, new)
        within = vectors @ vectors.T  # the batch against itself
        rows: list[int | None] = []
        earlier: dict[int, int] = {}
        kept: list[int] = []  # positions stored as new so far: the candidates a later memory of the batch may merge into
        for j in range(n):
            sims = np.concatenate([stored[:, j], within[kept, j]])
            best = int(sims.argmax()) if len(sims) else -1
            if best < 0 or sims[best] < threshold:
                rows.append(None)
                kept.append(j)
            elif best < len(same):
                rows.append(int(same[best]))
            else:
                rows.append(None)
                earlier[j] = kept[best - len(same)]
        return _Merges(rows, earlier)

    def _check_rating(self, value: Any) -> float:
        return _check_importance(value, "returned by importance_rater")

    def _commit(self, p: _Pending, vectors: np.ndarray, targets: _Merges) -> list[Memory]:
        """Merge or insert (evicting first if at capacity); all checks happen before anything changes."""
        new = [j for j in range(len(p.texts)) if targets.new(j)]
        cap = self.config.capacity
        victims = np.zeros(0, dtype=np.int64)
        if cap is not None:
            over = self._n + len(new) - cap
            if over > 0:
                evictable = ~self._pinned[: self._n]
                evictable[[t for t in targets.rows if t is not None]] = False  # just refreshed by a merge
                candidates = np.flatnonzero(evictable)
                if len(candidates) < over:
                    raise ValueError(
                        f"cannot store {len(new)} new memories: capacity is {cap}, {self._n} are stored and "
                        f"{int(self._pinned[: self._n].sum())} of them are pinned (pinned memories are never evicted)"
                    )
                order = np.lexsort((self._ids[candidates], self._last_access[candidates]))
                victims = candidates[order[:over]]
        # merges: refresh the stored memory
        merged_rows: dict[int, int] = {}
        for j, row in enumerate(targets.rows):
            if row is not None:
                self._last_access[row] = max(int(self._last_access[row]), p.steps[j])
                if p.importance[j] is not None:
                    self._importance[row] = max(float(self._importance[row]), p.importance[j])
                merged_rows[j] = int(self._ids[row])
        if len(victims):
            self._evict(victims)
        first = self._n
        if new:
            if self._index is None:
                self._new_index(vectors.shape[1])
            m = len(new)
            self._reserve(m)
            rows = slice(first, first + m)
            self._ids[rows] = np.arange(self._next_id, self._next_id + m)
            self._steps[rows] = [p.steps[j] for j in new]
            self._last_access[rows] = [p.steps[j] for j in new]
            self._importance[rows] = [p.importance[j] for j in new]
            self._pinned[rows] = p.pinned
            self._kinds[rows] = _KIND_CODE[p.kind]
            self._texts += [p.texts[j] for j in new]
            self._sources += [p.sources[j] for j in new]
            self._index.add(np.ascontiguousarray(vectors[new]))
            for r in range(first, first + m):
                self._row_of[int(self._ids[r])] = r
            self._next_id += m
            self._n += m
            self._matrix_view = None
            if p.kind != "reflection":
                self._since_reflection += m
        row_of_new = {j: first + k for k, j in enumerate(new)}
        for j, into in targets.earlier.items():  # a repeat within the batch refreshes the memory stored for the first
            row = row_of_new[into]
            self._last_access[row] = max(int(self._last_access[row]), p.steps[j])
            if p.importance[j] is not None:
                self._importance[row] = max(float(self._importance[row]), p.importance[j])
        out: list[Memory] = []
        for j in range(len(p.texts)):
            if j in merged_rows:
                out.append(self.get(merged_rows[j]))
            else:
                out.append(self._memory(row_of_new[targets.earlier.get(j, j)]))
        return out

    def _evict(self, rows: np.ndarray) -> None:
        """Remove rows from the index and the metadata together (order of the rest is kept)."""
        keep = np.ones(self._n, dtype=bool)
        keep[rows] = False
        removed = self._index.remove_ids(np.asarray(rows, dtype=np.int64))
        if removed != len(rows):  # pragma: no cover - would mean faiss and the metadata disagree
            raise RuntimeError(f"faiss removed {removed} rows instead of {len(rows)}")
        m = int(keep.sum())
        for name in self._GROWABLE:
            arr = getattr(self, name)
            arr[:m] = arr[: self._n][keep]
        self._texts = [t for t, k in zip(self._texts, keep) if k]
        self._sources = [s for s, k in zip(self._sources, keep) if k]
        self._n = m
        self._row_of = {int(i): r for r, i in enumerate(self._ids[:m])}
        self._matrix_view = None
        if self._index.ntotal != self._n:  # pragma: no cover
            raise RuntimeError("faiss index and memory metadata are out of step")

    def _rate_sync(self, p: _Pending, targets: _Merges) -> None:
        todo = [j for j, v in enumerate(p.importance) if v is None and targets.new(j)]
        if not todo:
            return
        if self.importance_rater is None:
            for j in todo:
                p.importance[j] = float(self.config.default_importance)
            return
        results = [self.importance_rater(p.texts[j]) for j in todo]
        if any(inspect.isawaitable(r) for r in results):

            async def settle() -> list[Any]:
                return [await r if inspect.isawaitable(r) else r for r in results]

            results = run_sync(settle())
        for j, r in zip(todo, results):
            p.importance[j] = self._check_rating(r)

    async def _rate_async(self, p: _Pending, targets: _Merges) -> None:
        todo = [j for j, v in enumerate(p.importance) if v is None and targets.new(j)]
        if not todo:
            return
        if self.importance_rater is None:
            for j in todo:
                p.importance[j] = float(self.config.default_importance)
            return

        async def one(text: str) -> Any:
            r = self.importance_rater(text)  # type: ignore[misc]
            return await r if inspect.isawaitable(r) else r

        results = await asyncio.gather(*(one(p.texts[j]) for j in todo))
        for j, r in zip(todo, results):
            p.importance[j] = self._check_rating(r)

    def add(
        self,
        text: str,
        step: int,
        kind: str = "observation",
        importance: float | None = None,
        pinned: bool = False,
        *,
        sources: Sequence[int] = (),
    ) -> Memory:
        """Store one memory and return it (or, with `merge_threshold`, the stored memory it refreshed).

        `importance` None: `importance_rater(text)` if set, else `config.default_importance`.
        At `capacity`, the least recently accessed non-pinned memory is evicted first.
        """
        return self.add_many([text], step, kind, None if importance is None else [importance], pinned, sources=[sources])[0]

    def add_many(
        self,
        texts: Sequence[str],
        step: int | Sequence[int],
        kind: str = "observation",
        importance: float | Sequence[float | None] | None = None,
        pinned: bool = False,
        *,
        sources: Sequence[Sequence[int]] | None = None,
    ) -> list[Memory]:
        """Store several memories of one kind with one embedder call; `step`/`importance` per text or shared."""
        p = self._pending(texts, step, kind, importance, pinned, sources)
        if not p.texts:
            return []
        vectors = self._embed_checked(self.embedder.embed(p.texts), len(p.texts))
        targets = self._merge_targets(p, vectors)
        self._rate_sync(p, targets)
        return self._commit(p, vectors, targets)

    async def aadd(
        self,
        text: str,
        step: int,
        kind: str = "observation",
        importance: float | None = None,
        pinned: bool = False,
        *,
        sources: Sequence[int] = (),
    ) -> Memory:
        """`add` for async code: awaits `embedder.aembed` and an async `importance_rater`."""
        return (await self.aadd_many([text], step, kind, None if importance is None else [importance], pinned, sources=[sources]))[0]

    async def aadd_many(
        self,
        texts: Sequence[str],
        step: int | Sequence[int],
        kind: str = "observation",
        importance: float | Sequence[float | None] | None = None,
        pinned: bool = False,
        *,
        sources: Sequence[Sequence[int]] | None = None,
    ) -> list[Memory]:
        """`add_many` for async code (ratings run concurrently)."""
        p = self._pending(texts, step, kind, importance, pinned, sources)
        if not p.texts:
            return []
        vectors = self._embed_checked(await self.embedder.aembed(p.texts), len(p.texts))
        targets = self._merge_targets(p, vectors)
        await self._rate_async(p, targets)
        return self._commit(p, vectors, targets)

    # ------------------------------------------------------------------ retrieval

    def _query_vector(self, vectors: Any) -> np.ndarray:
        v = l2_normalize(np.asarray(vectors))
        if v.shape[0] != 1:
            raise RuntimeError(f"embedder returned {v.shape[0]} vectors for 1 query")
        if self._dim is not None and v.shape[1] != self._dim:
            raise ValueError(f"query embedding has size {v.shape[1]}, but this stream holds size {self._dim}")
        return v[0]

    @staticmethod
    def _check_retrieve(query: Any, step: Any, k: Any, token_budget: Any, kinds: Any) -> tuple[int, frozenset[int] | None]:
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        step = _check_step(step)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be an int >= 1, got {k!r}")
        if token_budget is not None and (isinstance(token_budget, bool) or not isinstance(token_budget, (int, np.integer)) or token_budget < 1):
            raise ValueError(f"token_budget must be an int >= 1 or None, got {token_budget!r}")
        codes = None
        if kinds is not None:
            if isinstance(kinds, str):
                kinds = [kinds]
            codes = frozenset(_KIND_CODE[_check_kind(x)] for x in kinds)
        return step, codes

    def scores(self, query: str, step: int) -> dict[int, float]:
        """Eq. 5.1 score of every memory for `query` at `step`, by id (for inspection; touches nothing)."""
        self._check_retrieve(query, step, 1, None, None)
        if self._n == 0:
            return {}
        s = self._scores(self._query_vector(self.embedder.embed([query])), step)
        return {int(i): float(v) for i, v in zip(self._ids[: self._n], s)}

    def _scores(self, q: np.ndarray, step: int) -> np.ndarray:
        n = self._n
        return retrieval_scores(self._matrix() @ q, self._importance[:n], self._last_access[:n], step, self.config)

    def _best(self, q: np.ndarray, prior: np.ndarray, m: int, available: int) -> np.ndarray:
        """Rows of the `m` best Eq. 5.1 scores (prior is -inf for excluded rows), best first, exactly.

        Pruning, exact because cosine <= 1: score the `max(4m, 64)` rows with the highest prior,
        take the m-th best score T among them, and compute relevance only for rows whose prior
        + w_relevance could still reach T. When recency and importance spread the memories out
        (the usual case: old memories have decayed) that is a few percent of the stream; when too
        many rows survive, one matrix-vector product over the whole index is cheaper.
        """
        n = len(prior)
        ids = self._ids[:n]
        w = self.config.w_relevance
        if w == 0:
            self.last_scanned = 0
            return _top(prior, ids, m)
        matrix = self._matrix()
        c = min(available, max(4 * m, 64))
        if c < n:
            sample = np.argpartition(prior, n - c)[n - c :]
            sample_scores = _with_relevance(prior[sample], matrix[sample] @ q, w)
            threshold = np.partition(sample_scores, c - m)[c - m]  # m-th best of the sample
            survivors = np.flatnonzero(prior >= threshold - np.float32(w * (1 + 1e-4)))
            if 3 * len(survivors) <= n:
                self.last_scanned = c + len(survivors)
                sub = _with_relevance(prior[survivors], matrix[survivors] @ q, w)
                return survivors[_top(sub, ids[survivors], m)]
        self.last_scanned = n
        return _top(_with_relevance(prior, matrix @ q, w), ids, m)

    def retrieve(
        self,
        query: str,
        step: int,
        k: int = 10,
        token_budget: int | None = None,
        *,
        kinds: Collection[str] | None = None,
        touch: bool = True,
    ) -> list[Memory]:
        """The memories to put in a prompt about `query` at `step`, best first.

        All pinned memories come first (by score), then the `k` best others by Eq. 5.1 (ties: newer
        first). With `token_budget`, memories whose text would overflow the budget (counted by
        `estimate_tokens`) are skipped in favour of lower-ranked ones that fit; pinned memories that
        alone exceed it raise ValueError. `kinds` restricts results (pinned included) to those kinds.
        Returned memories get `last_access = step` (unless `touch=False`); the returned records show it.
        """
        step, codes = self._check_retrieve(query, step, k, token_budget, kinds)
        if self._n == 0:
            return []
        return self._select(self._query_vector(self.embedder.embed([query])), step, k, token_budget, codes, touch)

    async def aretrieve(
        self,
        query: str,
        step: int,
        k: int = 10,
        token_budget: int | None = None,
        *,
        kinds: Collection[str] | None = None,
        touch: bool = True,
    ) -> list[Memory]:
        """`retrieve` for async code (awaits `embedder.aembed` for the query)."""
        step, codes = self._check_retrieve(query, step, k, token_budget, kinds)
        if self._n == 0:
            return []
        return self._select(self._query_vector(await self.embedder.aembed([query])), step, k, token_budget, codes, touch)

    def _select(self, q: np.ndarray, step: int, k: int, budget: int | None, codes: frozenset[int] | None, touch: bool) -> list[Memory]:
        n = self._n
        cfg = self.config
        prior = retrieval_scores(None, self._importance[:n], self._last_access[:n], step, cfg)
        ids = self._ids[:n]
        pinned = self._pinned[:n]
        eligible = np.isin(self._kinds[:n], list(codes)) if codes is not None else None
        pinned_rows = np.flatnonzero(pinned if eligible is None else pinned & eligible)
        if len(pinned_rows):
            pinned_scores = _with_relevance(prior[pinned_rows], self._matrix()[pinned_rows] @ q, cfg.w_relevance)
            pinned_rows = pinned_rows[_top(pinned_scores, ids[pinned_rows], len(pinned_rows))]
        chosen = [int(r) for r in pinned_rows]
        used = sum(estimate_tokens(self._texts[r]) for r in chosen)
        if budget is not None and used > budget:
            raise ValueError(f"the pinned memories alone need about {used} tokens, more than token_budget={budget}")
        excluded = pinned if eligible is None else pinned | ~eligible
        available = n - int(np.count_nonzero(excluded))
        if available > 0:
            if available < n:
                prior = np.where(excluded, np.float32(-np.inf), prior)
            taken = 0
            processed: set[int] = set()
            m = min(k, available)
            while True:
                ranked = self._best(q, prior, m, available)
                # the rows a pass before looked at are passed over by row, not by position: a wider pass works out some
                # relevances with other matrix products, whose last bits may differ, so two near-tied rows may swap
                # places (one would come back twice, the other never be looked at)
                for row in ranked.tolist():
                    if row in processed:
                        continue
                    processed.add(row)
                    if budget is not None:
                        cost = estimate_tokens(self._texts[row])
                        if used + cost > budget:
                            continue
                        used += cost
                    chosen.append(row)
                    taken += 1
                    if taken == k:
                        break
                if taken == k or m >= available or (budget is not None and used >= budget):
                    break
                m = min(available, m * 4)
        if touch and chosen:
            rows = np.asarray(chosen, dtype=np.int64)
            self._last_access[rows] = np.maximum(self._last_access[rows], step)
        return [self._memory(r) for r in chosen]

    def nearest(self, query: str, k: int = 5) -> list[tuple[Memory, float]]:
        """The `k` memories most similar to `query` by cosine alone (a faiss search; touches nothing)."""
        self._check_retrieve(query, 0, k, None, None)
        if self._n == 0:
            return []
        q = self._query_vector(self.embedder.embed([query]))
        sims, rows = self._index.search(q[None, :], min(k, self._n))
        return [(self._memory(int(r)), float(s)) for s, r in zip(sims[0], rows[0]) if r >= 0]

    # ------------------------------------------------------------------ reflection and summaries

    async def reflect(
        self,
        llm: LLM,
        step: int,
        every: int | None = None,
        *,
        window: int = 30,
        max_insights: int = 3,
        importance: float | None = None,
    ) -> list[Memory]:
        """Ask `llm` for insights about the `window` most recent memories and store them as reflections.

        With `every=N`, does nothing (returns []) until N non-reflection memories have been added
        since the last reflection, so it can be called every step. Each insight is stored with
        kind `reflection`, step `step` and `sources` = the ids it cites (a reflection tree:
        reflections may cite earlier reflections). Importance: `importance`, else the rater or default.
        """
        step = _check_step(step)
        if every is not None and (isinstance(every, bool) or not isinstance(every, int) or every < 1):
            raise ValueError(f"every must be an int >= 1 or None, got {every!r}")
        for name, v in (("window", window), ("max_insights", max_insights)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        if self._n == 0 or (every is not None and self._since_reflection < every):
            return []
        rows = range(max(0, self._n - window), self._n)
        shown = [(int(self._ids[r]), self._texts[r]) for r in rows]
        answer = await _call(llm, reflection_prompt(shown, max_insights))
        insights = parse_insights(answer, {i for i, _ in shown}, max_insights)
        self._since_reflection = 0
        if not insights:
            return []
        return await self.aadd_many(
            [text for text, _ in insights],
            step,
            "reflection",
            importance,
            sources=[src for _, src in insights],
        )

    async def summarize_conversation(
        self,
        llm: LLM,
        lines: Sequence[str] | str,
        step: int,
        *,
        importance: float | None = None,
        pinned: bool = False,
    ) -> Memory:
        """Store an LLM summary of a conversation (MetaAgents: overarching theme and context + important details).

        `lines` are the conversation's lines ("speaker: text") or one string. The LLM's answer is
        stored verbatim (stripped) as a `summary` memory at `step`.
        """
        conversation = lines if isinstance(lines, str) else "\n".join(str(x) for x in lines)
        if not conversation.strip():
            raise ValueError("the conversation to summarise is empty")
        summary = (await _call(llm, summary_prompt(conversation))).strip()
        if not summary:
            raise ValueError("the llm returned an empty summary")
        return await self.aadd(summary, step, "summary", importance, pinned)

    # ------------------------------------------------------------------ state

    def get_state(self) -> dict[str, Any]:
        """A JSON-ready snapshot: config, records, and embeddings (base64 of little-endian float32, row-major)."""
        matrix = self._matrix()
        return {
            "format": _STATE_FORMAT,
            "version": _STATE_VERSION,
            "embedder": _signature(self.embedder),
            "config": dataclasses.asdict(self.config),
            "dim": self._dim,
            "next_id": self._next_id,
            "since_reflection": self._since_reflection,
            "memories": [
                {
                    "id": m.id,
                    "text": m.text,
                    "step": m.step,
                    "kind": m.kind,
                    "importance": m.importance,
                    "last_access": m.last_access,
                    "pinned": m.pinned,
                    "sources": list(m.sources),
                }
                for m in self.memories()
            ],
            "embeddings": base64.b64encode(np.ascontiguousarray(matrix, dtype="<f4").tobytes()).decode("ascii"),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore a `get_state` snapshot (config included); retrieval then gives exactly the same results.

        Warns if the snapshot was made with a different embedder (queries would be embedded differently).
        """
        if not isinstance(state, dict) or state.get("format") != _STATE_FORMAT:
            raise ValueError(f"not a MemoryStream state (expected format {_STATE_FORMAT!r})")
        if state.get("version") != _STATE_VERSION:
            raise ValueError(f"unsupported MemoryStream state version {state.get('version')!r} (this code reads {_STATE_VERSION})")
        config = MemoryConfig(**state["config"])
        records = state["memories"]
        dim = state["dim"]
        raw = base64.b64decode(state["embeddings"])
        n = len(records)
        if n and (not isinstance(dim, int) or len(raw) != n * dim * 4):
            raise ValueError(f"state holds {len(raw)} bytes of embeddings for {n} memories of size {dim}")
        vectors = np.frombuffer(raw, dtype="<f4").astype(np.float32).reshape(n, dim or 0)
        if state.get("embedder") != _signature(self.embedder):
            warnings.warn(
                f"state was saved with embedder {state.get('embedder')!r}, this stream uses {_signature(self.embedder)!r}: "
                "new queries and memories may not be comparable with the stored embeddings",
                stacklevel=2,
            )
        pending = []
        for rec in records:
            if not isinstance(rec.get("pinned"), bool):  # (bool("false") is True)
                raise ValueError(f"a memory's pinned must be true or false in the state, got {excerpt(rec.get('pinned'))}")
            pending.append(
                (
                    int(rec["id"]),
                    _check_text(rec["text"]),
                    _check_step(rec["step"]),
                    _check_kind(rec["kind"]),
                    _check_importance(rec["importance"], "in state"),
                    _check_step(rec["last_access"], "last_access"),
                    rec["pinned"],
                    tuple(int(i) for i in rec.get("sources", ())),
                )
            )
        _check_restored(pending, vectors, state.get("next_id"), config)
        self.config = config
        self._clear()
        if dim is not None:
            self._new_index(int(dim))
        if n:
            self._reserve(n)
            cols = list(zip(*pending))
            self._ids[:n] = cols[0]
            self._texts = list(cols[1])
            self._steps[:n] = cols[2]
            self._kinds[:n] = [_KIND_CODE[k] for k in cols[3]]
            self._importance[:n] = cols[4]
            self._last_access[:n] = cols[5]
            self._pinned[:n] = cols[6]
            self._sources = list(cols[7])
            self._index.add(np.ascontiguousarray(vectors))
            self._n = n
            self._row_of = {int(i): r for r, i in enumerate(self._ids[:n])}
        self._next_id = int(state["next_id"])
        self._since_reflection = int(state.get("since_reflection", 0))

    @classmethod
    def from_state(cls, state: dict[str, Any], embedder: Embedder | None = None, *, importance_rater: ImportanceRater | None = None) -> MemoryStream:
        """A new stream restored from `get_state` output."""
        stream = cls(embedder, importance_rater=importance_rater)
        stream.set_state(state)
        return stream


def _top(scores: np.ndarray, ids: np.ndarray, m: int) -> np.ndarray:
    """Indices of the `m` highest finite scores, best first; equal scores: higher id (newer) first.

    Rows tied with the m-th score are all considered before cutting, so ties break by id exactly.
    """
    n = len(scores)
    if m < n:
        threshold = scores[np.argpartition(scores, n - m)[n - m :]].min()
        rows = np.flatnonzero(scores >= threshold)
    else:
        rows = np.flatnonzero(scores > -np.inf)
    return rows[np.lexsort((-ids[rows], -scores[rows]))][:m]
