"""Memory-stream speed: build time and top-10 retrieval latency at 10,000 and 100,000 memories, on one core.

    python -m benchmarks.memory                  # sizes 10k and 100k, 200 queries each
    python -m benchmarks.memory --sizes 1000 10000 --queries 50

Streams are filled with synthetic team-task memories (seeded) embedded by the offline
`HashingEmbedder` (dim 256); the build (embedding + faiss adds) is timed on its own. Each query is a
full `MemoryStream.retrieve(query, step, k=10)`: embedding the query, Eq. 5.1 over every memory,
top-10 selection and the `last_access` update. For comparison, the same scores are computed in a
plain Python loop over the memories (one numpy dot per memory, then `heapq.nlargest`) for a few
queries, and the two top-10 lists are checked to be identical. BLAS and faiss are limited to one
thread. Targets: under 10 ms per query at 100k, at least 10x faster than the loop.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy is imported: one core

import argparse
import dataclasses
import heapq
import time
from collections.abc import Sequence

import numpy as np

from agents.embedders import HashingEmbedder
from agents.memory import MemoryStream
from benchmarks.common import mean_sd, table
from teamenvs.cli import COUNT, SEED, whole_number

AGENTS = ["medic", "engineer", "transporter", "guide", "follower", "recruiter", "seeker", "trader", "Ana", "Bo", "Chen", "Dana"]
VERBS = ["found", "moved", "asked", "promised", "saw", "rescued", "cleared", "offered", "invested", "doubted", "drew", "reported"]
THINGS = ["victim", "rubble", "door", "stairs", "route", "landmark", "coins", "offer", "role", "interview", "pool", "map", "skill", "team"]
EXTRAS = ["quickly", "again", "near the exit", "in the north wing", "before the deadline", "for the group", "twice", "after the alarm"]


def synthetic_texts(n: int, rng: np.random.Generator) -> list[str]:
    """`n` short memory-like sentences from a small team-task vocabulary (seeded)."""
    a = rng.integers(len(AGENTS), size=(n, 2))
    v = rng.integers(len(VERBS), size=n)
    t = rng.integers(len(THINGS), size=(n, 2))
    e = rng.integers(len(EXTRAS), size=n)
    room = rng.integers(1, 60, size=n)
    return [
        f"{AGENTS[a[i, 0]]} {VERBS[v[i]]} the {THINGS[t[i, 0]]} {room[i]} and told {AGENTS[a[i, 1]]} about the {THINGS[t[i, 1]]} {EXTRAS[e[i]]}"
        for i in range(n)
    ]


def build(n: int, seed: int = 0, chunk: int = 10_000) -> tuple[MemoryStream, float]:
    """A stream of `n` memories (one per step, importance uniform 0-10) and the seconds it took."""
    rng = np.random.default_rng(seed)
    texts = synthetic_texts(n, rng)
    importance = rng.uniform(0, 10, size=n).round(2).tolist()
    stream = MemoryStream(HashingEmbedder(dim=256))
    start = time.perf_counter()
    for i in range(0, n, chunk):
        stream.add_many(texts[i : i + chunk], list(range(i, min(n, i + chunk))), importance=importance[i : i + chunk])
    return stream, time.perf_counter() - start


def loop_top10(stream: MemoryStream, memories: Sequence, vectors: Sequence[np.ndarray], query: str, step: int) -> list[int]:
    """The same Eq. 5.1 top-10 as `retrieve`, as a plain Python loop over the memories."""
    cfg = stream.config
    q = stream.embedder.embed([query])[0]
    scored = []
    for m, v in zip(memories, vectors):
        recency = cfg.decay ** max(step - m.last_access, 0)
        score = cfg.w_recency * recency + cfg.w_importance * m.importance / 10 + cfg.w_relevance * float(np.dot(v, q))
        scored.append((score, m.id))
    return [i for _, i in heapq.nlargest(10, scored)]


def retrieval_latencies(stream: MemoryStream, queries: Sequence[str], step: int) -> tuple[list[float], list[float]]:
    """Milliseconds of each full top-10 `retrieve` (after one untimed warm-up) and the share of memories it scanned."""
    stream.retrieve(queries[0], step, k=10, touch=False)  # warm-up
    latencies, scanned = [], []
    for q in queries:
        t0 = time.perf_counter()
        stream.retrieve(q, step, k=10)
        latencies.append((time.perf_counter() - t0) * 1e3)
        scanned.append(stream.last_scanned / len(stream))
    return latencies, scanned


def time_queries(stream: MemoryStream, queries: Sequence[str], step: int, loop_queries: int) -> dict[str, float | bool]:
    """Latencies of full retrievals (ms), share of memories scanned, and the Python-loop comparison."""
    latencies, scanned = retrieval_latencies(stream, queries, step)
    memories, vectors = stream.memories(), list(stream.embeddings())
    loop_s, fast_s, same = [], [], True
    for q in queries[:loop_queries]:
        t0 = time.perf_counter()
        expected = loop_top10(stream, memories, vectors, q, step)
        loop_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        got = [m.id for m in stream.retrieve(q, step, k=10, touch=False)]
        fast_s.append(time.perf_counter() - t0)
        same &= got == expected
    return {
        "latencies": latencies,
        "scanned": float(np.mean(scanned)),
        "loop_ms": float(np.median(loop_s)) * 1e3,
        "speedup": float(np.median(loop_s)) / float(np.median(fast_s)),
        "same": same,
    }


def measure(n: int, queries: int, loop_queries: int, seed: int = 0) -> list[list[str]]:
    """Two table rows for a stream of `n` memories: default weights, and the full-scan worst case."""
    stream, build_s = build(n, seed)
    qs = synthetic_texts(queries, np.random.default_rng(seed + 1))
    rows = []
    for label, config in (
        ("Eq. 5.1, decay 0.995", stream.config),
        ("worst case: decay 1, no importance", dataclasses.replace(stream.config, decay=1.0, w_importance=0.0)),
    ):
        stream.config = config  # same memories, other weights
        r = time_queries(stream, qs, n, loop_queries)
        lat = np.asarray(r["latencies"])
        rows.append(
            [
                f"{n:,}",
                label,
                f"{build_s:.1f} ({n / build_s:,.0f}/s)",
                f"{np.median(lat):.2f}",
                f"{np.percentile(lat, 95):.2f}",
                mean_sd(lat, digits=2),
                f"{100 * r['scanned']:.1f}%",
                f"{r['loop_ms']:,.0f}",
                f"{r['speedup']:,.0f}x",
                "yes" if r["same"] else "NO",
            ]
        )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=COUNT, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=COUNT, default=200, help="timed retrievals per size")
    parser.add_argument("--loop-queries", type=whole_number(0), default=3, help="queries also scored by the Python loop")
    parser.add_argument("--seed", type=SEED, default=0)
    args = parser.parse_args(argv)

    import faiss

    faiss.omp_set_num_threads(1)
    start = time.perf_counter()
    print(
        f"MemoryStream top-10 retrieval, HashingEmbedder dim 256, one thread (faiss {faiss.__version__}, "
        f"numpy {np.__version__}); {args.queries} queries per size, Python loop on {args.loop_queries}.\n"
    )
    rows = [row for n in args.sizes for row in measure(n, args.queries, args.loop_queries, args.seed)]
    table(
        ["memories", "weights", "build s (rate)", "top-10 median (ms)", "p95 (ms)", "mean ± sd (ms)", "relevance computed for", "Python loop (ms)", "speed-up", "same top-10"],
        rows,
        align=["---:", "---"] + ["---:"] * 8,
    )
    print(f"\ntotal {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
