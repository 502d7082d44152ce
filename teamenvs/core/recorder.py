"""Episode recorder: one JSONL line per step, flushed as it goes, replayable and diff-able.

Line 1 is the header (env id, config, preset, seed, package version, agents); line 2 the
reset (first observations); then one line per step holding, per agent, the observation it
received, its raw action, the parsed action or the error, its reward and its events, plus
the step's global events. The step loop may add per-agent extras (a policy's rationale,
model usage) with `annotate` before the step is written, and an `end` line with the
metrics. A log holds one episode of one env: an env's reset refuses a recorder that holds an episode already
(`begin`), its step one that holds another env's or none (`holder`, `check_holds`), and `read_log` a second header. The file
is flushed after every line, so a crash loses nothing already written.
Nothing time-dependent is written by the env, so the same seed and actions give a
byte-identical log. A path ending in `.gz` is written gzip-compressed (`compressor`: ISA-L's fastest
level where the `isal` package is installed, as it is with teamenvs, else zlib at `GZIP_LEVEL`), still
flushed per line with `Z_SYNC_FLUSH`, so a killed run keeps every line written before it; `read_log`
reads both, checks every line, and raises `LogError` (file, line, field, why) for a damaged or
mis-edited log.

Cost: a line is JSON-encoded by ujson with `json.dumps`'s settings (the same bytes, two to three times
faster; the json module's C encoder, built once, writes what ujson would spell otherwise), long observations
by orjson and spliced in (`_spliced`; the same spelling, ten times ujson's speed on a long string), and compressed
by ISA-L at level 0 with fixed Huffman codes: 1.5-7 us a line against zlib's 10-110 at level 3 (each
line ends a deflate block, and zlib builds its Huffman trees for every block), for files somewhat larger
(16-29x smaller than the text against 18-28x; a whole log about 13% larger); `benchmarks/perf.py` measures env steps/s with and without a
`.jsonl.gz` log (`recorder cost` rows). What stays in memory is `keep`'s choice: every record (the
default), none (`keep=False`, the records only stream to the file), or what the metric functions read
(`keep="metrics"`: no observation texts, packed; what `agents.run_episode` keeps with a log file).
"""

from __future__ import annotations

import gc
import itertools
import json
import marshal
import math
import os
import re
import stat
import zlib
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from teamenvs.core.text import excerpt, printable, quote

MAX_LOGGED_ACTION_CHARS = 20_000


def _default(obj: Any) -> Any:
    if hasattr(obj, "to_json"):
        return obj.to_json()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if hasattr(obj, "items"):
        return dict(obj)
    return str(obj)


# Characters that JSON leaves raw inside strings (with ensure_ascii=False) but that
# `str.splitlines` and many JSONL readers treat as line breaks: written escaped instead.
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def _make_encode() -> Callable[[Any], str]:
    """`json.dumps(obj, ensure_ascii=False, default=_default)`, with the C encoder built once, not per call.

    Same bytes: the same C encoder and settings `json.dumps` uses, less its check for circular
    references (about a tenth of the encoding time); a record that refers to itself runs into
    the recursion limit instead, and then `json.dumps` says why (ValueError, as before).
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    escape = getattr(json.encoder, "c_encode_basestring", None)
    if make is None or escape is None:  # a Python without the json C accelerator
        return json.JSONEncoder(ensure_ascii=False, default=_default).encode
    try:
        encoder = make(None, _default, escape, None, ": ", ", ", False, False, True)
    except TypeError:  # another signature than CPython 3.9-3.13's
        return json.JSONEncoder(ensure_ascii=False, default=_default).encode

    def encode(obj: Any) -> str:
        if isinstance(obj, str):  # as JSONEncoder.encode: the C encoder takes containers
            return escape(obj)
        try:
            return "".join(encoder(obj, 0))
        except RecursionError:  # a circular reference (ValueError) or nesting too deep for json.dumps too
            return json.dumps(obj, ensure_ascii=False, default=_default)

    return encode


try:  # UltraJSON (the `ujson` package, a dependency): the same spelling as json.dumps, at two to three times its speed
    import ujson as _ujson
except ImportError:  # a platform without its wheels: the json module's C encoder alone
    _ujson = None

# ujson writes a float below 1e-4 with a one-digit exponent where Python writes two (1e-5, 1e-05): a line holding
# anything so spelled (a number, or text that looks like one) is left to the json module. Searched for from its
# literal start, which the regex engine finds several times faster than `"e-" in text` does.
_SHORT_EXPONENT = re.compile(r"e-[0-9](?![0-9])")


class _Probe:
    def __str__(self) -> str:
        return "probe"


def _make_fast_encode(exact: Callable[[Any], str]) -> Callable[[Any], str]:
    """`exact` (json.dumps's bytes), sped up by ujson where it is installed: ujson with json.dumps's settings writes the
    same bytes (tested on random records and on floats of every exponent, tests/core/test_recorder_cost.py, and on
    every log of the smoke and paper suites), but for
    a float's short exponent (`_SHORT_EXPONENT`) and for what it cannot write (a number too large, nesting too deep,
    a circular reference), which `exact` writes (or refuses) instead, as it did alone. Two differences are left, for
    what log records never hold (their keys are field and agent names, their values the env's plain data and the
    policies' extras): a key that is not a string, number, bool or None, which json.dumps refuses (TypeError) and
    ujson writes as its `str()`; and an object with a `toDict()` or `__json__()` method, which ujson calls where
    json.dumps calls `default`. A line ujson would break in two (a `__json__` text holding a newline) goes to `exact`."""
    if _ujson is None:
        return exact
    fast = _ujson.dumps
    separators = (", ", ": ")
    # ujson 6's positional arguments, a third of a microsecond less a call than keywords (each line is one call); an
    # older ujson orders them otherwise (5.x has double_precision second), which the probe below tells
    settings = (False, False, False, False, 0, True, True, _default, separators)
    probe = {"a/é": [1.5, 0.1, -2, None, True, "x\u2028/"], "object": object.__new__(_Probe)}
    try:
        positional = fast(probe, *settings) == fast(probe, ensure_ascii=False, escape_forward_slashes=False,
                                                     separators=separators, default=_default)
    except Exception:  # noqa: BLE001 - another signature
        positional = False
    if not positional:
        settings = ()

    def encode(obj: Any) -> str:
        try:
            if settings:
                text = fast(obj, *settings)
            else:
                text = fast(obj, ensure_ascii=False, escape_forward_slashes=False, separators=separators, default=_default)
        except Exception:  # noqa: BLE001 - anything ujson cannot write is json's to write or refuse, as before
            return exact(obj)
        if _SHORT_EXPONENT.search(text) is not None or "\n" in text:  # (JSON itself escapes every newline)
            return exact(obj)
        return text

    return encode


_exact_encode = _make_encode()
_encode = _make_fast_encode(_exact_encode)


def dumps(record: dict[str, Any]) -> str:
    """The one JSON spelling used in logs: one physical line per record, whatever the text inside, and always
    UTF-8-encodable: a lone surrogate (untrusted text can hold one: an action string, a model's reply decoded from
    a JSON escape) has no UTF-8 form, so it is written as the JSON escape it reads back from (`\\ud800`). A high
    surrogate followed by a low one, two code points in the text, reads back as the one character the pair encodes:
    JSON's escapes cannot tell them apart (`as_logged` gives the text a log reads back)."""
    text = _encode(record)
    if not text.isascii():  # the line breaks and surrogates below are not ASCII
        for raw, escaped in _LINE_BREAKS.items():
            if raw in text:
                text = text.replace(raw, escaped)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # outside strings a JSON line is ASCII: every surrogate is inside one
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def as_logged(text: str) -> str:
    """`text` as a log reads it back: each high surrogate followed by a low one (two code points, as broken decoding
    leaves them) joined into the character they encode, as JSON reads their escapes; all else, lone surrogates too,
    unchanged."""
    if text.isascii():
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


try:  # orjson (a dependency): a string's JSON at about ten times ujson's speed, in json.dumps's spelling (every character)
    import orjson as _orjson
except ImportError:  # a platform without its wheels: ujson writes the observations with the rest of the line
    _orjson = None

# What stands in for each observation while the rest of a line is encoded: no text an env writes, and any record that
# does hold it (an action string equal to it, say) is counted out below and written the usual way.
_STAND_IN = "\x00teamenvs observation\x00"
_STAND_IN_JSON = _encode(_STAND_IN).encode("ascii")
_LINE_BREAK_BYTES = tuple((raw.encode("utf-8"), escaped.encode("ascii")) for raw, escaped in _LINE_BREAKS.items())


def line(record: dict[str, Any]) -> bytes:
    """`dumps(record)` and a newline, UTF-8: a log line as written, byte for byte, sped up for long observations
    (`_spliced`, with `_STAND_IN` put in each observation's place for the while). Worth it for long lines only: the
    splicing costs more than it saves on a short one (`EpisodeRecorder` picks, `SPLIT_LINE_BYTES`). The record is left
    as it was."""
    agents = record.get("agents")
    if _orjson is not None and type(agents) is dict:
        entries = [entry for entry in agents.values() if type(entry) is dict and isinstance(entry.get("observation"), str)]
        observations = [entry["observation"] for entry in entries]
        for entry in entries:
            entry["observation"] = _STAND_IN
        try:
            spliced = _spliced(record, observations)
        finally:  # the record is the caller's: as it was (assigning an existing key keeps its place), whatever happened
            for entry, observation in zip(entries, observations):
                entry["observation"] = observation
        if spliced is not None:
            return spliced[0]
    return (dumps(record) + "\n").encode("utf-8")


def _spliced(record: dict[str, Any], observations: list[str]) -> tuple[bytes, bytes] | None:
    """(the line, the rest's JSON) of `record`, whose agents' observations are `_STAND_IN`, with `observations` (the
    texts, in the record's order) in their places; None where that cannot be exact.

    The observations (most of a long line's bytes) are encoded by orjson and the rest by `dumps`'s encoder; the two
    spell a string alike (tested on every character), and the short exponent check (`_SHORT_EXPONENT`) reads only
    the rest, where numbers are. None for a lone surrogate (orjson refuses it; `dumps` escapes it) and for a record
    holding the stand-in elsewhere (as a key, or a whole string)."""
    rest = _encode(record)
    try:
        data = rest.encode("utf-8")
        # texts only: orjson spells other values otherwise (compact containers, floats)
        encoded = [_orjson.dumps(observation) for observation in observations if isinstance(observation, str)]
    except (UnicodeEncodeError, TypeError):  # a lone surrogate (orjson's error is a TypeError)
        return None
    parts = data.split(_STAND_IN_JSON)
    # exactly one stand-in per observation, so each part boundary is one: anything else adds a part
    if len(parts) != len(observations) + 1 or len(encoded) != len(observations):
        return None
    pieces = [parts[0]]
    for text, part in zip(encoded, parts[1:]):
        pieces += (text, part)
    pieces.append(b"\n")
    text = b"".join(pieces)
    if not text.isascii():  # as `dumps`: line breaks other than \n escaped (their UTF-8 bytes are unambiguous)
        for raw, escaped in _LINE_BREAK_BYTES:
            if raw in text:
                text = text.replace(raw, escaped)
    return text, data


LONG_RAW_ACTION_CHARS = 256
"""From what length `EpisodeRecorder.write_step` splices a raw action into its line as it does observations (a model's
reply is longer, a command shorter), so the view `keep="metrics"` holds has no long text in it."""

SPLIT_LINE_BYTES = 7_500
"""From what length a line is written by `line`'s splicing: measured in the full loop (`python -m benchmarks.perf`'s
recorder rows), it saved 9-20 us a line on the hidden profile, shape factory and job fair (lines of 9-25 KB) and cost
1.5-2.5 us on DayTrader, the commons and search and rescue (4-6 KB). The recorder goes by the line before, so the
choice costs nothing; a reset line, which holds every agent's observation, is always spliced (once an episode, it
costs little where it does not pay)."""


def clip_raw_action(raw: Any) -> Any:
    """A raw action as it is logged: strings longer than the log limit are cut, with a marker."""
    if isinstance(raw, str) and len(raw) > MAX_LOGGED_ACTION_CHARS:
        return raw[:MAX_LOGGED_ACTION_CHARS] + f"...[cut: {len(raw):,} characters in all]"
    if raw is None or isinstance(raw, (str, int, float, bool)):
        return raw
    return repr(raw)[:MAX_LOGGED_ACTION_CHARS]


GZIP_LEVEL = 3
"""zlib level of `.gz` logs where ISA-L is not installed (`compressor`): per line, level 3 takes a third of
level 9's time (gzip's default) or less, for files 1.5-2.5x larger; levels 1 and 2 are no faster here and
compress less."""

try:  # ISA-L (the `isal` package, a dependency): deflate at several times zlib's speed
    from isal import isal_zlib as _isal
except ImportError:  # a platform without its wheels: zlib, as fast as it goes here
    _isal = None


def compressor() -> tuple[Any, Callable[[bytes, int], int], int]:
    """(a raw-deflate compressor object, its crc32, the gzip header's extra-flags byte) for a `.gz` log: ISA-L at
    level 0 with fixed Huffman codes (its fastest; a line's block is too short to pay for codes of its own, so its
    files come out within about 13% of zlib's level 3, the job fair's most: 30%), or zlib at `GZIP_LEVEL` without ISA-L. Either is the same
    bytes for the same lines (with one library version), and any gzip reader reads both."""
    if _isal is not None:
        return _isal.compressobj(0, _isal.DEFLATED, -_isal.MAX_WBITS, _isal.DEF_MEM_LEVEL, _isal.Z_FIXED), _isal.crc32, 4
    zip_ = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS, zlib.DEF_MEM_LEVEL, 0)
    return zip_, zlib.crc32, 2 if GZIP_LEVEL == 9 else 4 if GZIP_LEVEL == 1 else 0


# Fields of an agent's entry (reset and step lines) that are there to be read and replayed, never by a
# metric function: what `keep="metrics"` leaves out of the records it keeps.
UNMEASURED_FIELDS = ("observation", "raw_action")


def metrics_view(record: dict[str, Any]) -> dict[str, Any]:
    """`record` less its agents' `UNMEASURED_FIELDS` (the observation text, most of a log's bytes):
    what `episode_metrics` and `probe_metrics` read of it. The rest is shared with `record`, not copied."""
    agents = record.get("agents")
    if not isinstance(agents, dict):
        return record
    slim = {}
    for agent, entry in agents.items():
        if isinstance(entry, dict) and ("observation" in entry or "raw_action" in entry):
            entry = entry.copy()
            for name in UNMEASURED_FIELDS:
                entry.pop(name, None)
        slim[agent] = entry
    return {**record, "agents": slim}


def _packed(record: dict[str, Any]) -> Any:
    """`record`'s metrics view as `marshal` bytes (a tenth of the objects' memory, nothing for the
    garbage collector to walk), or the view itself where it holds something marshal cannot write."""
    view = metrics_view(record)
    try:
        return marshal.dumps(view)
    except ValueError:  # e.g. an object with `to_json`, a subclass of a built-in type
        return view


# A run of 19 digits or more, as in an integer beyond 64 bits (from -9223372036854775809 down or 18446744073709551616 up),
# which orjson reads as a float; a float's repr has at most 17 digits in a row, so only such integers (and digits in
# text) are found, in one pass over the text with its digits made zeros.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19


def _unpacked(kept: Any) -> dict[str, Any]:
    """A record's metrics view from what `EpisodeRecorder` keeps with `keep="metrics"` for other than step lines
    (those are `_step_views`): marshal bytes, or the view itself where marshal could not write it."""
    return marshal.loads(kept) if type(kept) is bytes else kept


def _step_views(texts: list[bytes]) -> list[dict[str, Any]]:
    """The metrics views of step lines kept as their JSON less the observations: decoded (by orjson, all in one call,
    a third less time than one call each), less their `UNMEASURED_FIELDS`."""
    if not texts:
        return []
    joined = b"[" + b",".join(texts) + b"]"
    if _LONG_NUMBER in joined.translate(_DIGITS_AS_ZERO):  # orjson reads an integer beyond 64 bits as a float: json
        records = json.loads(joined)
    else:
        try:
            records = _orjson.loads(joined)
        except ValueError:  # NaN, infinities: JSON the json module reads (orjson's error is a ValueError)
            records = json.loads(joined)
    for record in records:
        for entry in record["agents"].values():
            if type(entry) is dict:
                for name in UNMEASURED_FIELDS:
                    entry.pop(name, None)
    return records


class EpisodeRecorder:
    """Writes an episode's records as JSONL to `path` (if given) and keeps them in memory as `keep` says.

    `keep=True` (the default): every record as written, in `records`. `keep=False`: none; the
    records only stream to the file, so a long episode costs no memory. `keep="metrics"`: each
    record's `metrics_view` (no observation texts or raw actions), enough for the metric functions,
    held packed and unpacked each time `records` is read; `agents.run_episode` keeps that when it writes a log file.
    An env's step lines (`write_step`) are held as the JSON of their line less the observations, which the line is
    made from anyway, so their views read back as the log file's do (a tuple as a list, say); other records as
    `marshal` bytes (the same values and types back). Measured on an 80-round DayTrader episode: a fifth of the memory
    of keeping every record (marshal's views of every line took a tenth, at about 4 us more a step).
    """

    def __init__(self, path: str | Path | None = None, *, keep: bool | str = True, run: dict[str, Any] | None = None) -> None:
        if isinstance(keep, str) and keep != "metrics":
            raise ValueError(f"keep must be True, False or 'metrics', got {excerpt(keep)}")
        self.path = Path(path) if path is not None else None
        self.keep: bool | str = keep if keep == "metrics" else bool(keep)
        self.run = run  # who ran the episode and why (a benchmark's suite, condition, policy): the header's "run"
        self._kept: list[Any] = []
        self._extras: dict[str, dict[str, Any]] = {}
        self._file: Any = None
        self._long = False  # the last line was long enough to write the next one with `line`'s splicing
        self.holder: int | None = None  # id of the env whose episode the log holds (`begin`)
        self._episode = ""  # that episode, as an error names it
        if self.path is not None:
            try:
                self._file = _open_for_writing(self.path)
            except FileNotFoundError:  # a new folder (asked only then: one system call less an episode)
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = _open_for_writing(self.path)

    @property
    def records(self) -> list[dict[str, Any]]:
        """The records kept (see `keep`): every one as written, none, or (`"metrics"`) their metrics views."""
        if self.keep == "metrics":
            collecting = gc.isenabled()
            gc.disable()  # the views are new objects, none in a cycle: nothing for the collector to find while they are made
            try:
                steps = iter(_step_views([kept[0] for kept in self._kept if type(kept) is tuple]))
                return [next(steps) if type(kept) is tuple else _unpacked(kept) for kept in self._kept]
            finally:
                if collecting:
                    gc.enable()
        return self._kept

    def begin(self, env: Any, seed: int | None) -> None:
        """Take `env`'s new episode (its reset calls this before anything changes); a ValueError if the log holds an
        episode already: a log holds one episode, and a second header (another reset, or another env's) made a file
        whose steps mixed two episodes, which replayed as "an edited log" and gave metrics of neither."""
        if self.holder is not None:
            raise ValueError(f"this EpisodeRecorder{self._where()} holds an episode already ({self._episode}): a log "
                             f"holds one episode; give each reset an EpisodeRecorder of its own (agents.run_episode "
                             f"and the single-agent view do, given log_dir)")
        self.holder, self._episode = id(env), f"{getattr(env, 'env_id', type(env).__name__)}, seed {seed}"

    def _where(self) -> str:
        return "" if self.path is None else f" of {excerpt(str(self.path))}"

    def check_holds(self, env: Any) -> None:
        """A ValueError unless this log holds `env`'s episode (an env's step asks, when `holder` is not its id, before
        anything changes: a recorder attached mid-episode, or one that holds another env's episode)."""
        if self.holder is None:
            raise ValueError(f"this EpisodeRecorder{self._where()} holds no episode: attach it to the env before its "
                             f"reset (a log starts with the episode's header)")
        if self.holder != id(env):
            raise ValueError(f"this EpisodeRecorder{self._where()} holds another env's episode ({self._episode}): one "
                             f"log, one env")

    def annotate(self, agent: str, **extra: Any) -> None:
        """Attach extra fields (e.g. rationale, usage) to `agent`'s entry of the next step line."""
        self._extras.setdefault(agent, {}).update(extra)

    def _annotated(self, record: dict[str, Any]) -> dict[str, Any]:
        """A step record with the extras annotated since the last one in its agents' entries (they are used up)."""
        if self._extras:
            entries = record["agents"]
            for agent, extra in self._extras.items():
                if agent in entries:
                    entries[agent].update(extra)
            self._extras = {}
        return record

    def write(self, record: dict[str, Any]) -> None:
        if self.run is not None and record.get("type") == "header":
            record = {**record, "run": self.run}
        if self._extras and record.get("type") == "step":
            self._annotated(record)
        if self.keep is True:
            self._kept.append(record)
        elif self.keep:
            self._kept.append(_packed(record))
        if self._file is not None:  # (a reset line holds every agent's observation: long where steps are)
            data = line(record) if self._long or record.get("type") == "reset" else (dumps(record) + "\n").encode("utf-8")
            self._write(data)

    def write_step(self, env: Any, texts: dict[str, str], actions: Any, rewards: dict[str, float], done: bool) -> None:
        """Write an env's step line, `step_record(env, texts, actions, rewards, done)`, the same bytes as `write` would.

        Where the full record is not kept (`keep` False or "metrics") and a file is written, the record is made with
        `_STAND_IN` for the observations (and raw actions longer than `LONG_RAW_ACTION_CHARS`) and the line spliced
        (`_spliced`): its JSON less those texts is what `keep="metrics"` holds, so no metrics view is copied and
        packed. With `keep=False` only for long lines, as `write` does (`SPLIT_LINE_BYTES`). A subclass with a `write`
        of its own is given every step record there."""
        if (self.keep is True or self._file is None or _orjson is None or (not self.keep and not self._long)
                or type(self).write is not EpisodeRecorder.write):
            self.write(step_record(env, texts, actions, rewards, done))
            return
        extras = self._extras
        # long raw actions (a model's whole reply) are spliced in too, so the kept view holds no long text at all
        long_raw = [agent for agent, raw in actions.items() if type(raw) is str and len(raw) > LONG_RAW_ACTION_CHARS]
        logged, spliced_texts = actions, [texts[agent] for agent in rewards]
        if long_raw:
            logged, spliced_texts = {**actions, **dict.fromkeys(long_raw, _STAND_IN)}, []
            for agent in rewards:  # in the line's order: each agent's observation, then its raw action
                spliced_texts.append(texts[agent])
                if agent in long_raw:
                    spliced_texts.append(clip_raw_action(actions[agent]))
        record = self._annotated(step_record(env, dict.fromkeys(rewards, _STAND_IN), logged, rewards, done))
        spliced = _spliced(record, spliced_texts)
        if spliced is None:  # written as `write` writes it, the extras with it
            self._extras = extras
            self.write(step_record(env, texts, actions, rewards, done))
            return
        data, rest = spliced
        if self.keep:
            self._kept.append((rest,))
        self._write(data)

    def _write(self, data: bytes) -> None:
        self._long = len(data) >= SPLIT_LINE_BYTES  # (splicing or not, the same bytes: only the time differs)
        # unbuffered: the line (for a .gz file its compressed bytes, Z_SYNC_FLUSH) is in the file when this returns,
        # one system call
        self._file.write(data)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "EpisodeRecorder":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def claim_log_name(log_dir: str | Path, name: str, suffix: str = ".jsonl") -> str:
    """`name`, or the first of `name-2`, `name-3`, ... with no `<name><suffix>` log in `log_dir` yet. The file is
    created (empty, exclusively) at once, so a run beside this one cannot claim it too."""
    folder = Path(log_dir)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"the log folder {folder} is a file, not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        claimed = name if n == 1 else f"{name}-{n}"
        try:
            (folder / f"{claimed}{suffix}").open("x").close()
            return claimed
        except FileExistsError:
            n += 1


def _open_for_writing(path: Path) -> Any:
    """A log file opened for bytes, unbuffered (what `write` is given is in the file when it returns), gzip-compressed
    (`compressor`) when its name ends in `.gz`."""
    if str(path).endswith(".gz"):
        return _GzipLines(path)
    return _Unbuffered(path)


class _Unbuffered:
    """A file written without a buffer: `write` puts all it is given in the file with one system call (more only if
    the system writes less), so nothing waits in memory for a flush."""

    def __init__(self, path: Path) -> None:
        self._raw = open(path, "wb", buffering=0)
        self.closed = False

    def write(self, data: bytes) -> None:
        written = self._raw.write(data)
        while written < len(data):  # the system wrote part of it (interrupted by a signal, say): the rest
            written += self._raw.write(memoryview(data)[written:])

    def close(self) -> None:
        self.closed = True
        self._raw.close()


class _GzipLines:
    """A gzip file written a line at a time, what `gzip.GzipFile` writes less its per-call overhead.

    `write` compresses the line, ends it with a `Z_SYNC_FLUSH` and writes it to the file unbuffered, so when it
    returns every line written decompresses from the file alone; `close` ends the stream (checksum and length).
    The header is `GzipFile`'s with no time stamp, so the same lines give the same bytes.
    """

    def __init__(self, path: Path) -> None:
        name = path.name.removesuffix(".gz")
        try:
            fname = name.encode("latin-1")
        except UnicodeEncodeError:  # as GzipFile: the name is left out
            fname = b""
        self._zip, self._crc32, xfl = compressor()
        self._file = _Unbuffered(path)
        self._raw = self._file._raw
        self._file.write(b"\037\213\010" + (b"\010" if fname else b"\000") + b"\000\000\000\000" + bytes([xfl]) + b"\377"
                         + (fname + b"\000" if fname else b""))
        self._crc = 0
        self._size = 0

    def write(self, data: bytes) -> None:
        self._crc = self._crc32(data, self._crc)
        self._size += len(data)
        block = self._zip.compress(data) + self._zip.flush(zlib.Z_SYNC_FLUSH)
        written = self._raw.write(block)  # (`_Unbuffered.write` inlined: one call less a line)
        if written < len(block):  # the system wrote part of it: the rest
            self._file.write(memoryview(block)[written:])

    def close(self) -> None:
        if self._file.closed:
            return
        try:
            self._file.write(self._zip.flush() + self._crc.to_bytes(4, "little") + (self._size & 0xFFFFFFFF).to_bytes(4, "little"))
        finally:
            self._file.close()

    def __del__(self) -> None:  # as GzipFile: a file left open is ended when collected
        try:
            self.close()
        except Exception:
            pass


# Said of damage to the first line or the gzip header, where a damaged log and some other file look alike.
NOT_A_LOG = ", so this is not a teamenvs episode log (or a damaged one)"


class LogError(ValueError):
    """A log that is damaged, or edited into something its readers cannot use.

    The message is `<path>:<line>: <field>: <why>` (`<path>: <field>: <why>` for damage to
    the compressed stream as a whole, which no line can be blamed for), safe to print.
    """

    def __init__(self, path: str | Path, line: int | None, field: str, why: str) -> None:
        self.path, self.line, self.field, self.why = Path(path), line, field, why
        where = f"{path}:{line}" if line else str(path)
        super().__init__(printable(f"{where}: {field}: {why}", keep_newlines=False))


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSONL episode log (or `.jsonl.gz`), checking every line; raises `LogError` for damage.

    Damage: a gzip stream whose checksum or length does not match, bytes that are not gzip or
    not UTF-8, data after the gzip stream, a line that is not a JSON object (unless it is the
    cut-off last line, below), a field of the wrong type for the log's readers (`RECORD_CHECKS`),
    and a header after the first line (a second episode: a log holds one).
    A file larger than `MAX_LOG_BYTES` (decompressed), of more than `MAX_LOG_LINES` lines or `MAX_LOG_VALUES`
    values, and what is not a regular file (a device, a pipe, a folder), are refused as not a log, so that reading takes bounded time and memory.

    A log cut off mid-write (a killed writer: a last line without its newline, a gzip stream
    that just stops) is read up to its last whole line. Such a log is never complete: an `end`
    line before the cut is left out, since a cut gzip stream's checksum cannot vouch for it.
    """
    text = _LogText(path)
    records: list[dict[str, Any]] = []
    numbers: list[int] = []
    size = values = 0
    try:
        for number, line in text.lines():
            size += len(line)
            if size > MAX_LOG_BYTES // 32:  # counting values costs a fifth of reading a real log: only past a size few reach
                values += line.count(b",") + line.count(b"{") + line.count(b"[")
            _check_size(path, number, len(records), values)
            record = _parse_line(path, number, line)
            if record.get("type") == "header" and records:  # what one recorder given two resets wrote before it refused
                raise LogError(path, number, "type", "a second header: a log holds one episode, and this one's steps "
                                                     "would mix two (one EpisodeRecorder per episode)")
            records.append(record)
            numbers.append(number)
        _check_order(path, records, numbers)
    except LogError:
        text.read_rest()  # damage to the gzip stream, found at its end, is the likelier cause: that is said instead
        raise
    if text.cut and records and records[-1].get("type") == "end":
        records.pop()
    return records


def _check_order(path: str | Path, records: list[dict[str, Any]], numbers: list[int]) -> None:
    """`LogError` where a log's well-formed lines do not make one episode in order: a bench header whose env is not
    its run's, step lines that do not run 1, 2, 3, ... (a line lost, repeated or moved), an `end` line that counts
    other steps than the log holds, or whose returns are not the sums of the step lines' rewards of the header's
    agents. Every line may be sound and the episode still not the one its end line scores."""
    due = 1
    agents: Any = None
    earned: dict[str, float] = {}
    ended: int | None = None  # the line number of the end line
    failed: int | None = None  # of an error line
    for record, number in zip(records, numbers):
        kind = record.get("type")
        if ended is not None:
            raise LogError(path, number, "type", f"a line after the end line (line {ended}): an episode's log ends "
                                                 f"there, so this is an edited log")
        if kind == "step":
            if record.get("step", due) != due:  # (a field left out is a reader's to miss, as `RECORD_CHECKS` has it)
                raise LogError(path, number, "step", f"step {record['step']} where step {due} is due: a log's steps run "
                                                     f"1, 2, 3, ... (a line lost, repeated or moved by an edit)")
            due += 1
            for agent, entry in (record.get("agents") or {}).items():
                reward = entry.get("reward") if isinstance(entry, dict) else None
                if isinstance(reward, (int, float)) and not isinstance(reward, bool):
                    earned[agent] = earned.get(agent, 0.0) + reward
        elif kind == "end":
            if failed is not None:
                raise LogError(path, number, "type", f"an end line after the error line (line {failed}): an episode that "
                                                     f"failed has no end, so this is an edited log")
            if record.get("steps", due - 1) != due - 1:  # (a field left out is for `unscored` to name)
                raise LogError(path, number, "steps", f"the end line counts {record['steps']} steps where the log holds "
                                                      f"{due - 1}: an edited log")
            if "returns" in record:
                _check_returns(path, number, record["returns"], earned, agents, due - 1)
            ended = number
        elif kind == "error":
            failed = number
        elif kind == "header":
            agents = record.get("agents")
            if agents is not None and len(set(agents)) != len(agents):  # (a list of texts, as RECORD_CHECKS checked)
                raise LogError(path, number, "agents", "the header names an agent twice: an edited log")
            run = record.get("run")
            if run and run.get("env") is not None and run["env"] != record["env_id"]:
                raise LogError(path, number, "env_id", f"the header's env {quote(record['env_id'])} is not its run's "
                                                       f"({quote(run['env'])}): an edited log")


def unscored(path: str | Path, records: list[dict[str, Any]]) -> LogError | None:
    """Why a log `read_log` read, whose last line is its end line, cannot be counted as a finished episode (None: it
    can): a header that does not name the episode's agents, or an end line without the steps played or every agent's
    return, which every teamenvs writer gives it (the readers that count episodes, `teamenvs bench` and `report`, ask)."""
    end = records[-1]
    if not isinstance(records[0].get("agents"), list) or not records[0]["agents"]:
        return LogError(path, None, "agents", "the header does not name the episode's agents")
    for name in ("steps", "returns"):
        if name not in end:
            return LogError(path, None, name, "the end line lacks it: an end line holds the steps played and every "
                                              "agent's return")
    return None


def _check_returns(path: str | Path, number: int, returns: Any, earned: Mapping[str, float], agents: Any, steps: int) -> None:
    """`LogError` where an end line's returns name an agent the header does not, or leave one out, or differ from the sum
    of that agent's step rewards by more than the rounding of the logged rewards (6 decimals a step) allows."""
    if isinstance(agents, list):
        missing = [agent for agent in agents if agent not in returns]
        if missing:
            raise LogError(path, number, f"returns.{missing[0]}", f"no return for {quote(missing[0])}, an agent of the "
                                                                    f"episode: an end line holds every agent's return")
    for agent, value in returns.items():
        if isinstance(agents, list) and agent not in agents:
            raise LogError(path, number, f"returns.{agent}", f"a return for {quote(agent)}, who is not an agent of the "
                                                               f"episode ({', '.join(map(str, agents[:4]))}): an edited log")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        total = earned.get(agent, 0.0)
        if not math.isclose(value, total, rel_tol=1e-9, abs_tol=1e-6 * (steps + 1)):
            raise LogError(path, number, f"returns.{agent}", f"the return {value:g} is not the sum of the agent's step "
                                                               f"rewards ({total:g}): an edited log")


def log_text(path: str | Path) -> bytes:
    """A log's whole text as bytes (decompressed for `.gz`), read within `MAX_LOG_BYTES`, unparsed (for byte-for-byte
    comparisons); `LogError` for a file too large, a device or a damaged gzip stream."""
    return b"".join(_LogText(path)._chunks)


MAX_LOG_BYTES = 512 * 2**20
"""Most text a log may hold (decompressed): ten times the largest one measured, 51 MB (search_rescue_v0,
2,000 steps, 10 agents on a 100x100 full map; 13 MB with the default config, 12 MB with an llm policy)."""
MAX_LOG_LINES = 1_000_000
"""Most lines a log may hold: a line a step, 500 times the longest default episode (search_rescue_v0's 2,000
steps). Real step lines are 2 KB or longer, so a real log reaches `MAX_LOG_BYTES` first."""
MAX_LOG_VALUES = MAX_LOG_BYTES // 16
"""Most JSON values (counted as commas and opening brackets) in a log past its first `MAX_LOG_BYTES // 32`
bytes (16 MiB): real ones have one per 30 bytes or more. With the two bounds above, a log of tiny values takes
no more memory than a real log at the bound."""
_CHUNK = 1 << 20  # bytes read (and decompressed) at a time


def _check_size(path: str | Path, number: int, lines: int, values: int) -> None:
    """`LogError` at line `number` when the log holds more lines or values than a log can."""
    if lines >= MAX_LOG_LINES:
        raise LogError(path, number, "size", f"more than {MAX_LOG_LINES:,} lines{NOT_A_LOG}")
    if values > MAX_LOG_VALUES:
        raise LogError(path, number, "size", f"more than {MAX_LOG_VALUES:,} JSON values{NOT_A_LOG}")


class _LogText:
    """A log's text, read (and decompressed, for `.gz`) a chunk at a time, at most `MAX_LOG_BYTES`.

    `cut`, once the lines are read: whether the text or its gzip stream stops mid-line.
    """

    def __init__(self, path: str | Path) -> None:
        self.path, self.cut = path, False
        self._chunks = self._read()

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """(number, line) of each line that is not blank; text after the last newline is no line but sets `cut`."""
        seen, rest = 0, [b""]
        for chunk in self._chunks:
            end = chunk.rfind(b"\n") + 1
            if not end:
                rest.append(chunk)
                continue
            block = b"".join([*rest, chunk[:end]])
            rest = [chunk[end:]]
            yield from _numbered(block, seen)
            seen += block.count(b"\n")
        if any(piece.strip() for piece in rest):
            self.cut = True

    def read_rest(self) -> None:
        """Read the text not yet read, for the `LogError` of damage to its gzip stream or of its size."""
        for _ in self._chunks:
            pass

    def _read(self) -> Iterator[bytes]:
        with _open_regular(self.path) as file:
            if str(self.path).endswith(".gz"):
                yield from _bounded(self.path, self._inflated(file), " decompressed")
            else:
                yield from _bounded(self.path, iter(lambda: file.read(_CHUNK), b""), "")

    def _inflated(self, file: Any) -> Iterator[bytes]:
        stream = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip, checksum and length checked by zlib
        while not stream.eof:
            data = stream.unconsumed_tail or file.read(_CHUNK)
            try:
                text = stream.decompress(data, _CHUNK)  # with no data: what the last call had no room for
            except zlib.error as exc:
                raise LogError(self.path, None, "gzip", _gzip_damage(str(exc))) from None
            if not data and not text:  # the file ends before the stream
                self.cut = True
                return
            yield text
        after = itertools.chain([stream.unused_data], iter(lambda: file.read(_CHUNK), b""))
        if any(data.strip(b"\0") for data in _bounded(self.path, after, "")):
            raise LogError(self.path, None, "gzip", "damaged: data after the end of the compressed stream")


def _open_regular(path: str | Path) -> Any:
    """`path` opened for bytes; `LogError` for a folder, for what is not a regular file (a device, pipe or socket, whose
    reading may never end or never start) and for a file too large."""
    status = os.stat(path)
    if stat.S_ISDIR(status.st_mode):
        raise LogError(path, None, "file", "a folder, not an episode log file")
    if not stat.S_ISREG(status.st_mode):
        raise LogError(path, None, "file", "not a regular file (a device, pipe or socket), not an episode log file")
    if status.st_size > MAX_LOG_BYTES:
        raise _too_large(path)
    return open(path, "rb")


def _bounded(path: str | Path, chunks: Iterable[bytes], what: str) -> Iterator[bytes]:
    """`chunks`, until more than `MAX_LOG_BYTES` in all: then `LogError`."""
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > MAX_LOG_BYTES:
            raise _too_large(path, what)
        yield chunk


def _too_large(path: str | Path, what: str = "") -> LogError:
    return LogError(path, None, "size", f"larger than {MAX_LOG_BYTES // 2**20} MiB{what}{NOT_A_LOG}")


def _numbered(block: bytes, before: int) -> Iterator[tuple[int, bytes]]:
    """(number, line) of each line of `block` (whole lines) that is not blank, after the `before` lines read before it."""
    if block.isspace():  # only blank lines: skipped at once
        return
    for number, line in enumerate(block.split(b"\n"), start=before + 1):
        if line and not line.isspace():
            yield number, line


_ZLIB_WHY = {
    "incorrect data check": "damaged: checksum mismatch",
    "incorrect length check": "damaged: length mismatch",
    "incorrect header check": f"not gzip-compressed data{NOT_A_LOG}",
}


def _gzip_damage(message: str) -> str:
    detail = message.rpartition(": ")[2]
    return _ZLIB_WHY.get(detail, f"damaged compressed data ({detail})")


def _huge_number_at(record: Any) -> str:
    """The dotted name of the first integer in `record` too large for a float (found again only when there is one)."""
    stack: list[tuple[Any, str]] = [(record, "")]
    while stack:
        value, name = stack.pop()
        if isinstance(value, int) and not abs(value) <= 1.7976931348623157e308:
            return name
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        stack.extend((item, f"{name}.{_dotted(key)}" if name else _dotted(key)) for key, item in reversed(list(items)))
    return "line"


def _dotted(key: Any, rest: str = "") -> str:
    """A field's dotted name, `key.rest`, with the key (from the file) safe to print and short."""
    name = printable(key, keep_newlines=False)[:60]
    return f"{name}.{rest}" if rest else name


def _json_int(text: str) -> int:
    """An integer of a log line; one too large for a float is damage, not a number any reader can use."""
    value = int(text)
    if len(text) > 300:
        float(value)  # raises OverflowError
    return value


def _parse_line(path: str | Path, number: int, line: bytes) -> dict[str, Any]:
    try:
        return _record(path, number, line)
    except LogError as exc:
        if number != 1 or exc.field not in ("text", "line"):
            raise
        raise LogError(path, number, exc.field, exc.why + NOT_A_LOG) from None


def _record(path: str | Path, number: int, line: bytes) -> dict[str, Any]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LogError(path, number, "text", f"not UTF-8 (byte 0x{line[exc.start]:02x} at column {exc.start + 1})") from None
    try:
        record = json.loads(text, parse_int=_json_int)
    except RecursionError:
        raise LogError(path, number, "line", "JSON nested too deeply") from None
    except OverflowError:
        raise LogError(path, number, _huge_number_at(json.loads(text)), "a number too large for a float") from None
    except json.JSONDecodeError as exc:
        raise LogError(path, number, "line", f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise LogError(path, number, "line", f"not valid JSON ({str(exc).partition(':')[0]})") from None
    if not isinstance(record, dict):
        raise LogError(path, number, "line", f"expected a JSON object, got {_json_kind(record)}")
    try:
        _check_record(record)
    except _Invalid as exc:
        raise LogError(path, number, exc.field, exc.why) from None
    return record


# ---------------------------------------------------------------------- record checks
class _Invalid(Exception):
    """A field that is not what the log's readers expect: its dotted name and why."""

    def __init__(self, why: str, field: str = "") -> None:
        super().__init__(why)
        self.why, self.field = why, field

    def under(self, key: Any) -> "_Invalid":
        return _Invalid(self.why, _dotted(key, self.field))


Check = Callable[[Any], None]

# Bigger than any env's numbers, small enough that a report's sums of squares stay finite.
MAX_MAGNITUDE = 1e100


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _is_a(types: tuple[type, ...], name: str, nullable: bool = False) -> Check:
    def check(value: Any) -> None:
        if value is None and nullable:
            return
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise _Invalid(f"expected {name}{' or null' if nullable else ''}, got {_json_kind(value)}")
    return check


TEXT = _is_a((str,), "a string")
OPT_TEXT = _is_a((str,), "a string", nullable=True)
INT = _is_a((int,), "a whole number")
OPT_INT = _is_a((int,), "a whole number", nullable=True)
BOOL = _is_a((bool,), "true/false")
OPT_BOOL = _is_a((bool,), "true/false", nullable=True)
OBJECT = _is_a((dict,), "an object")
LIST = _is_a((list,), "a list")


def _number(value: Any, allow_nan: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid(f"expected a number, got {_json_kind(value)}")
    if allow_nan and value != value:
        return
    if not abs(value) <= MAX_MAGNITUDE:
        raise _Invalid(f"expected a finite number (at most {MAX_MAGNITUDE:g} in size), got {value:.6g}")


NUMBER: Check = _number

MAX_NESTING = 32  # objects and lists within each other; a log's own go 7 deep


def _nesting(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, depth)
            stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return deepest


def _shallow(inner: Check) -> Check:
    """`inner`, and nested at most `MAX_NESTING` deep (readers such as `flatten` walk it recursively)."""
    def check(value: Any) -> None:
        inner(value)
        if _nesting(value) > MAX_NESTING:
            raise _Invalid(f"nested more than {MAX_NESTING} levels deep")
    return check


def _metric(value: Any) -> None:
    """A top-level metric: any JSON value, but a number must be usable (NaN: undefined in this episode)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        _number(value, allow_nan=True)


def _fields(spec: dict[str, Check], nullable: bool = False) -> Check:
    """An object whose fields named in `spec` pass their checks where present (others are free)."""
    is_object = _is_a((dict,), "an object", nullable)

    def check(value: Any) -> None:
        is_object(value)
        if value is None:
            return
        for key, inner in spec.items():
            if key in value:
                try:
                    inner(value[key])
                except _Invalid as exc:
                    raise exc.under(key) from None
    return check


def _each(inner: Check, container: Check = LIST) -> Check:
    """A list (or, given `container=OBJECT`, an object) whose every item passes `inner`."""
    def check(value: Any) -> None:
        container(value)
        for key, item in (value.items() if isinstance(value, dict) else enumerate(value)):
            try:
                inner(item)
            except _Invalid as exc:
                raise exc.under(key) from None
    return check


def _index(value: Any) -> None:
    """A run's position in its suite: group, condition and policy numbers."""
    _each(INT)(value)
    if len(value) != 3:
        raise _Invalid(f"expected 3 whole numbers, got {len(value)}")


EVENT = _fields({"type": TEXT, "sender": OPT_TEXT, "agent": OPT_TEXT})
ACTION = _fields({"ok": OPT_BOOL, "ignored": OPT_BOOL, "command": OPT_TEXT, "kind": OPT_TEXT, "error": OPT_TEXT,
                 "text": OPT_TEXT, "args": OBJECT}, nullable=True)
USAGE_TOTALS = ("calls", "retries", "cached", "prompt_tokens", "completion_tokens", "cost_usd")
USAGE = _fields({"total": _fields(dict.fromkeys(USAGE_TOTALS, NUMBER)), "agents": _each(OBJECT, OBJECT)}, nullable=True)
RUN = _shallow(_fields({
    "suite": TEXT, "group": TEXT, "env": TEXT, "description": TEXT, "model": OPT_TEXT, "seed": OPT_INT,
    "max_steps": OPT_INT, "index": _index,
    "condition": _fields({"name": TEXT, "preset": OPT_TEXT, "set": OBJECT}, nullable=True),
    "policy": _fields({"label": TEXT, "policy": TEXT}, nullable=True),
}, nullable=True))

# What the log's readers (report, replay, bench, metrics) rely on, per record type.
RECORD_CHECKS: dict[str, Check] = {
    "header": _fields({"env_id": TEXT, "version": TEXT, "preset": OPT_TEXT, "seed": OPT_INT, "agents": _each(TEXT),
                      "config": _shallow(_fields({"months": OPT_INT})), "run": RUN}),
    "reset": _fields({"step": INT, "agents": _each(_fields({"observation": TEXT}), OBJECT)}),
    "step": _fields({
        "step": INT, "done": BOOL, "events": _each(EVENT),
        "agents": _each(_fields({"observation": TEXT, "reward": NUMBER, "action": ACTION, "events": _each(EVENT),
                               "usage": OBJECT}), OBJECT),
    }),
    "end": _fields({"steps": INT, "returns": _each(NUMBER, OBJECT), "metrics": _shallow(_each(_metric, OBJECT)), "usage": USAGE}),
    "error": _fields({"step": INT, "error": TEXT, "usage": USAGE}),
}


TYPED = _fields({"type": TEXT})


def _check_record(record: dict[str, Any]) -> None:
    """Raise `_Invalid` naming the field when a log record's fields do not have the types its readers rely on."""
    TYPED(record)
    check = RECORD_CHECKS.get(record.get("type"))  # type: ignore[arg-type]
    if check is not None:
        check(record)


def step_records(records: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The step lines of an episode log."""
    return (r for r in records if r.get("type") == "step")


def header_record(env: Any, seed: int | None) -> dict[str, Any]:
    """A log's first line: env id, package version, preset, seed, resolved config, agents."""
    from teamenvs._version import __version__
    from teamenvs.core.config import config_to_json

    return {"type": "header", "env_id": env.env_id, "version": __version__, "preset": env.preset, "seed": seed,
            "config": config_to_json(env.config), "agents": list(env.possible_agents)}


def step_record(env: Any, texts: dict[str, str], actions: Any, rewards: dict[str, float], done: bool) -> dict[str, Any]:
    """A log's line for one step: per agent the observation text, raw and parsed action, reward and events."""
    last_action, events = env._last_action, env._events
    return {
        "type": "step",
        "step": env.step_count,
        "agents": {
            a: {"observation": texts[a], "raw_action": raw if type(raw := actions.get(a)) is str and len(raw) <= MAX_LOGGED_ACTION_CHARS
                else clip_raw_action(raw), "action": last_action[a], "reward": rewards[a], "events": events[a]}
            for a in rewards
        },
        "events": env.global_events,
        "done": done,
    }
