"""Text embedders for the memory stream: one small protocol, an offline hashing embedder, an API embedder.

    from agents.embedders import HashingEmbedder, OpenAIEmbedder
    emb = HashingEmbedder()                       # offline, deterministic, no downloads
    vectors = emb.embed(["victim in room 3", "the guide drew a route"])   # (2, 256) float32
    api = OpenAIEmbedder("text-embedding-3-small", base_url="http://localhost:8000/v1")

Every embedder returns a float32 array of shape `(n, dim)` whose rows are L2-normalised, so an
inner product of two rows is their cosine similarity (what `agents.memory.MemoryStream` relies on).
A text with nothing to embed (no word characters) gives a row of zeros: cosine 0 with everything.

`HashingEmbedder` hashes lower-cased word unigrams, word bigrams and character trigrams into
signed buckets ("feature hashing") with `hashlib.blake2b`, which, unlike Python's built-in `hash`,
is not salted per process: the same text gives the same vector in every process and on every
machine. Texts that share words get a high cosine, unrelated texts a cosine near 0. It knows no
synonyms; use `OpenAIEmbedder` (any OpenAI-compatible `/v1/embeddings` endpoint: OpenAI, vLLM,
Ollama, llama.cpp server) for semantic similarity.

Nothing here touches the network at import time; `openai` is imported only when an
`OpenAIEmbedder` first needs a client.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import inspect
import itertools
import math
import os
import re
import threading
import unicodedata
from collections.abc import Awaitable, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from teamenvs.core.text import valid_unicode

from agents.llm.http import redact_url

__all__ = [
    "DEFAULT_STOP_WORDS",
    "Embedder",
    "HashingEmbedder",
    "OpenAIEmbedder",
    "l2_normalize",
    "run_sync",
    "tokenize",
]

T = TypeVar("T")

#: Function words left out of unigrams, bigrams and character n-grams (kept when a text has nothing else).
DEFAULT_STOP_WORDS: frozenset[str] = frozenset(
    [
        "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "do", "does", "did", "for", "from",
        "had", "has", "have", "he", "her", "his", "i", "if", "in", "into", "is", "it", "its", "me", "my",
        "of", "on", "or", "our", "she", "so", "than", "that", "the", "their", "them", "then", "there",
        "these", "they", "this", "those", "to", "was", "we", "were", "what", "when", "which", "who", "will",
        "with", "would", "you", "your"
    ]
)

_WORD = re.compile(r"\w+")


@runtime_checkable
class Embedder(Protocol):
    """What the memory stream needs from an embedder.

    `embed(texts)` returns a float32 array of shape `(len(texts), dim)` with L2-normalised rows
    (all-zero rows allowed for texts with nothing to embed); `aembed` is the same for async code.
    """

    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    async def aembed(self, texts: Sequence[str]) -> np.ndarray: ...


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    """`matrix` as a C-contiguous float32 2-D array with each non-zero row scaled to unit L2 norm."""
    # scaled in float64, each row by its largest entry first: a float32 norm overflows to inf past about 1.8e19 (a finite
    # row became zeros) and loses digits on tiny rows (a "unit" row of norm 1.0097 broke the cosine <= 1 that exact
    # retrieval relies on)
    m = np.array(matrix, dtype=np.float64, copy=True, order="C")
    if m.ndim != 2 or m.shape[1] == 0:
        raise ValueError(f"expected a 2-D array of embeddings of at least one dimension, got shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError("embeddings contain NaN or infinite values")
    if not np.all(np.isfinite(np.asarray(matrix, dtype=np.float32))):
        raise ValueError("embeddings hold values beyond float32's range")
    largest = np.max(np.abs(m), axis=1, keepdims=True)
    np.divide(m, largest, out=m, where=largest > 0)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    np.divide(m, norms, out=m, where=norms > 0)
    return np.ascontiguousarray(m, dtype=np.float32)


def run_sync(awaitable: Awaitable[T]) -> T:
    """Run `awaitable` to completion from synchronous code.

    Uses `asyncio.run` when no event loop is running in this thread, and a helper thread with its
    own loop when one is (e.g. inside a notebook), so sync wrappers work in both places.
    """

    async def wrap() -> T:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrap())
    box: dict[str, Any] = {}

    def runner() -> None:
        try:
            box["value"] = asyncio.run(wrap())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=runner, name="run_sync")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not a single string: wrap it in a list")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"text {i} is {type(t).__name__}, expected str")
    return out


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (Unicode word characters, NFKC-normalised)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


class HashingEmbedder:
    """Deterministic offline embedder: signed feature hashing of words, word pairs and character n-grams.

    Features of a text (after lower-casing and dropping `stop_words`, unless nothing else is left):
    each word (weight `word_weight`), each pair of consecutive words (`bigram_weight`) and each
    character n-gram of a word padded with `#` (`char_weight`, n = `char_ngram`; 0 turns them off).
    Each feature goes to bucket `h mod dim` with sign `±1` from a keyed `blake2b` hash `h` (key =
    `seed`), counts add up, and the row is L2-normalised. Same `(dim, seed, options)` ⇒ same vectors
    in every process.
    """

    def __init__(
        self,
        dim: int = 256,
        seed: int = 0,
        *,
        char_ngram: int = 3,
        word_weight: float = 1.0,
        bigram_weight: float = 0.7,
        char_weight: float = 0.3,
        stop_words: frozenset[str] | None = DEFAULT_STOP_WORDS,
    ) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 2:
            raise ValueError(f"dim must be an int >= 2, got {dim!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ValueError(f"seed must be an int in [0, 2**64), got {seed!r}")
        if isinstance(char_ngram, bool) or not isinstance(char_ngram, int) or char_ngram < 0:
            raise ValueError(f"char_ngram must be an int >= 0 (0 = no character n-grams), got {char_ngram!r}")
        for name, w in (("word_weight", word_weight), ("bigram_weight", bigram_weight), ("char_weight", char_weight)):
            if not (isinstance(w, (int, float)) and math.isfinite(w) and w >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {w!r}")
        self.dim = dim
        self.seed = seed
        self.char_ngram = char_ngram
        self.word_weight = float(word_weight)
        self.bigram_weight = float(bigram_weight)
        self.char_weight = float(char_weight)
        self.stop_words = frozenset(stop_words or ())
        self._key = seed.to_bytes(8, "little")
        self._cache: dict[str, tuple[int, float]] = {}
        self._word_cache: dict[str, tuple[list[int], list[float]]] = {}

    @property
    def signature(self) -> str:
        """Identifies the vector space: two embedders with the same signature give the same vectors."""
        return (
            f"hashing:dim={self.dim},seed={self.seed},char={self.char_ngram},"
            f"w={self.word_weight},{self.bigram_weight},{self.char_weight},stop={len(self.stop_words)}"
        )

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim}, seed={self.seed}, char_ngram={self.char_ngram})"

    def _bucket(self, feature: str) -> tuple[int, float]:
        """(bucket, ±1) of a feature string; cached, the cache is dropped when it gets large."""
        hit = self._cache.get(feature)
        if hit is None:
            h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8, key=self._key).digest(), "little")
            hit = (h % self.dim, 1.0 if h >> 63 else -1.0)
            if len(self._cache) >= 1 << 20:
                self._cache.clear()
            self._cache[feature] = hit
        return hit

    def features(self, text: str) -> list[tuple[str, float]]:
        """The weighted features of `text` before hashing (prefixed: `w:` word, `b:` bigram, `c:` char n-gram)."""
        words = tokenize(text)
        content = [w for w in words if w not in self.stop_words] or words
        out: list[tuple[str, float]] = []
        if self.word_weight:
            out += [("w:" + w, self.word_weight) for w in content]
        if self.bigram_weight:
            out += [("b:" + a + " " + b, self.bigram_weight) for a, b in itertools.pairwise(content)]
        n = self.char_ngram
        if n and self.char_weight:
            for w in content:
                padded = f"#{w}#"
                if len(padded) > n:
                    out += [("c:" + padded[i : i + n], self.char_weight) for i in range(len(padded) - n + 1)]
        return out

    def _ngrams(self, word: str) -> tuple[list[int], list[float]]:
        """(buckets, signed weights) of `word`'s character n-grams, in `features`' order; cached per word (a long
        text's words repeat, and hashing every n-gram of every word was most of embedding it)."""
        hit = self._word_cache.get(word)
        if hit is None:
            n, weight, padded = self.char_ngram, self.char_weight, f"#{word}#"
            pairs = [self._bucket("c:" + padded[i : i + n]) for i in range(len(padded) - n + 1)] if len(padded) > n else []
            hit = ([b for b, _ in pairs], [sign * weight for _, sign in pairs])
            if len(self._word_cache) >= 1 << 18:
                self._word_cache.clear()
            self._word_cache[word] = hit
        return hit

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Float32 `(len(texts), dim)` array, rows L2-normalised (zeros for a text without words).

        The features of `features`, hashed and added up in the same order (so the same sums, to the bit)."""
        texts = _check_texts(texts)
        flat: list[int] = []
        values: list[float] = []
        bucket = self._bucket
        dim = self.dim
        n = self.char_ngram if self.char_weight else 0
        for row, text in enumerate(texts):
            base = row * dim
            words = tokenize(text)
            content = [w for w in words if w not in self.stop_words] or words
            for prefix, weight, feats in (("w:", self.word_weight, content),
                                          ("b:", self.bigram_weight, [a + " " + b for a, b in itertools.pairwise(content)])):
                if weight:
                    for feature in feats:
                        b, sign = bucket(prefix + feature)
                        flat.append(base + b)
                        values.append(sign * weight)
            if n:
                for w in content:
                    buckets, signed = self._ngrams(w)
                    flat.extend([base + b for b in buckets])
                    values.extend(signed)
        counts = np.bincount(np.asarray(flat, dtype=np.int64), weights=np.asarray(values, dtype=np.float64), minlength=len(texts) * dim)
        return l2_normalize(counts.reshape(len(texts), dim))

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        """Same as `embed` (it is CPU-only and fast)."""
        return self.embed(texts)


#: Output sizes of common OpenAI embedding models (other models: learned from the first response).
KNOWN_DIMS: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible `/v1/embeddings` endpoint, through the `openai` package.

    `client` may be an `openai.OpenAI`, an `openai.AsyncOpenAI`, or any object with
    `embeddings.create(model=..., input=[...])` (sync or async) returning `.data[i].embedding`;
    without one, `embed` builds an `OpenAI` and `aembed` an `AsyncOpenAI` client on first use from
    `base_url` and `api_key` (default: `OPENAI_API_KEY`; with a `base_url` and no key, the
    placeholder `"EMPTY"` that local servers accept). Texts go out in batches of `batch_size`;
    `dimensions` (text-embedding-3 models) is passed through and fixes `dim`. Returned vectors are
    L2-normalised. `tokens_used` adds up the `usage.prompt_tokens` the server reports. The API key is
    never printed: `repr` shows `'***'`.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        client: Any = None,
        *,
        dimensions: int | None = None,
        batch_size: int = 256,
        timeout: float | None = 60.0,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-empty string, got {model!r}")
        if dimensions is not None and (isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1):
            raise ValueError(f"dimensions must be a positive int or None, got {dimensions!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        self.model = model
        self.base_url = base_url
        self._api_key = api_key
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.timeout = timeout
        self._client = client
        self._async_client: Any = None
        self._dim: int | None = dimensions or KNOWN_DIMS.get(model)
        self.tokens_used = 0

    @property
    def dim(self) -> int:
        """Vector size; known up front for `dimensions=` or a known model, else after the first call."""
        if self._dim is None:
            raise RuntimeError(
                f"the output size of {self.model!r} is unknown until the first embed call; pass dimensions= to fix it"
            )
        return self._dim

    @property
    def signature(self) -> str:
        """Identifies the vector space (model and requested size)."""
        return f"openai:{self.model}:{self.dimensions}"

    def __repr__(self) -> str:
        key = "'***'" if (self._api_key or self._client is None and os.environ.get("OPENAI_API_KEY")) else "None"
        base_url = None if self.base_url is None else redact_url(self.base_url)
        return f"OpenAIEmbedder(model={self.model!r}, base_url={base_url!r}, api_key={key})"

    def _key(self) -> str | None:
        return self._api_key or os.environ.get("OPENAI_API_KEY") or ("EMPTY" if self.base_url else None)

    @staticmethod
    def _openai() -> Any:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - openai is a dependency of the project
            raise ImportError("OpenAIEmbedder needs the openai package: pip install openai") from exc
        return openai

    def _sync_client(self) -> Any:
        if self._client is None:
            self._client = self._openai().OpenAI(base_url=self.base_url, api_key=self._key(), timeout=self.timeout)
        return self._client

    def _aclient(self) -> Any:
        if self._client is not None:
            return self._client
        if self._async_client is None:
            self._async_client = self._openai().AsyncOpenAI(base_url=self.base_url, api_key=self._key(), timeout=self.timeout)
        return self._async_client

    def _request(self, batch: list[str]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "input": batch}
        if self.dimensions is not None:
            kwargs["dimensions"] = self.dimensions
        return kwargs

    def _batches(self, texts: Sequence[str]) -> list[list[str]]:
        texts = _check_texts(texts)
        for i, t in enumerate(texts):
            if not t.strip():
                raise ValueError(f"text {i} is empty: embedding endpoints reject empty input")
        texts = [valid_unicode(t) for t in texts]  # a lone surrogate (untrusted text) has no UTF-8 form: sent as U+FFFD
        return [texts[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]

    def _parse(self, response: Any, expected: int) -> np.ndarray:
        data = response["data"] if isinstance(response, dict) else response.data
        items = [(_get(d, "index", i), _get(d, "embedding", None)) for i, d in enumerate(data)]
        items.sort(key=lambda pair: pair[0])
        if len(items) != expected:
            raise RuntimeError(f"embedding endpoint returned {len(items)} vectors for {expected} inputs")
        rows = [_decode_vector(e) for _, e in items]
        if len({len(r) for r in rows}) > 1:
            raise RuntimeError("embedding endpoint returned vectors of different lengths")
        usage = response.get("usage") if isinstance(response, dict) else getattr(response, "usage", None)
        tokens = _get(usage, "prompt_tokens", None) if usage is not None else None
        if isinstance(tokens, int):
            self.tokens_used += tokens
        out = l2_normalize(np.asarray(rows, dtype=np.float32).reshape(expected, -1))
        if self._dim is None:
            self._dim = out.shape[1]
        elif out.shape[1] != self._dim:
            raise RuntimeError(f"embedding endpoint returned vectors of size {out.shape[1]}, expected {self._dim}")
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Float32 `(len(texts), dim)` array of L2-normalised embeddings (one request per batch)."""
        batches = self._batches(texts)
        if not batches:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        create = self._sync_client().embeddings.create
        parts = []
        for batch in batches:
            response = create(**self._request(batch))
            if inspect.isawaitable(response):
                response = run_sync(response)
            parts.append(self._parse(response, len(batch)))
        return np.concatenate(parts)

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        """Like `embed`; batches are sent concurrently (a sync client runs in worker threads)."""
        batches = self._batches(texts)
        if not batches:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        create = self._aclient().embeddings.create

        async def one(batch: list[str]) -> np.ndarray:
            if inspect.iscoroutinefunction(create):
                response = await create(**self._request(batch))
            else:
                response = await asyncio.to_thread(create, **self._request(batch))
                if inspect.isawaitable(response):
                    response = await response
            return self._parse(response, len(batch))

        return np.concatenate(await asyncio.gather(*(one(b) for b in batches)))


def _get(obj: Any, name: str, default: Any) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _decode_vector(embedding: Any) -> np.ndarray:
    """A list of floats, or a base64 string of little-endian float32 (`encoding_format="base64"`)."""
    if isinstance(embedding, str):
        return np.frombuffer(base64.b64decode(embedding), dtype="<f4")
    if embedding is None:
        raise RuntimeError("embedding endpoint returned an item without an 'embedding'")
    return np.asarray(embedding, dtype=np.float32)
