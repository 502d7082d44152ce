"""What recording a log costs (speed issue, item 4), and that the cheaper recorder writes the same logs.

The recorder encodes each line with ujson (json.dumps's spelling; the json module's C encoder, built
once, where ujson cannot write it or is not installed) and compresses `.jsonl.gz` logs with ISA-L's
fastest level (zlib at `GZIP_LEVEL` without it), still flushed line by line. Checked here: the text of
a log is what `json.dumps` gave before, byte for byte (random records and floats, with and without
ujson, and whole episodes against the in-memory records); every line is readable from the file as
soon as `write` returns; damage is still a `LogError`; the gzip bytes are the same for the same lines,
and `gzip.GzipFile`'s at `GZIP_LEVEL` without ISA-L; writing an episode's records
costs well under what the old writer (text wrapper, `json.dumps` per line, level 9) costs, timed
in the same run; a recorder writing a file keeps no records with `keep=False` and only what the
metrics read with `keep="metrics"` (what `agents.run_episode` keeps), measured with tracemalloc;
and the `recorder cost` rows of `benchmarks/perf.py`.
"""

from __future__ import annotations

import gc
import gzip
import io
import json
import math
import random
import re
import struct
import time
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest

import agents
import teamenvs
from agents import make_policies
from benchmarks import perf
from teamenvs.core import recorder as recorder_module
from teamenvs.core.recorder import (
    GZIP_LEVEL,
    EpisodeRecorder,
    LogError,
    _default,
    _GzipLines,
    as_logged,
    dumps,
    log_text,
    metrics_view,
    read_log,
)
from teamenvs.core.text import Observation


def reference_dumps(record):
    """The log's JSON spelling as the recorder wrote it before this change."""
    text = json.dumps(record, ensure_ascii=False, default=_default)
    for raw, escaped in {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}.items():
        text = text.replace(raw, escaped)
    return text


def play(env, recorder, seed=0, kind="scripted", after_step=None):
    """One episode of `kind` policies in the plain loop, written to `recorder`; returns the env steps."""
    base = env.unwrapped
    policies = make_policies(env, kind, seed=seed)
    steps = 0
    with base.recording(recorder):
        observations, infos = env.reset(seed=seed)
        for agent in env.agents:
            policies[agent].reset(agent, base.briefing(agent))
        while env.agents:
            actions = {a: policies[a].act(observations[a], infos[a]) for a in env.agents if infos[a]["needs_action"]}
            observations, _, _, _, infos = env.step(actions)
            steps += 1
            if after_step is not None:
                after_step(steps)
    return steps


# ---------------------------------------------------------------------------- same bytes
class Rich:
    def to_json(self):
        return {"rich": (1, 2)}


ALPHABET = ["a", "Z", " ", "\"", "\\", "/", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f", "é", "\u2028",
            "\u2029", "\x85", "中", "\U0001f600", "\ufeff", "{", "]", ":", ","]


def random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(14 if depth < 4 else 9)
    if kind == 0:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(12)))
    if kind == 1:
        return Observation("".join(rng.choice(ALPHABET) for _ in range(rng.randrange(40))))
    if kind == 2:
        return rng.choice([0, -1, 7, 2**70, -(2**64)])
    if kind == 3:
        return rng.choice([0.1, -2.5, 1e300, 5e-324, math.inf, -math.inf, math.nan, 1.0])
    if kind == 4:
        return rng.choice([None, True, False])
    if kind == 5:
        return np.int64(rng.randrange(100)) if rng.random() < 0.5 else np.float32(0.25)
    if kind == 6:
        return Rich()
    if kind == 7:
        return "x" * rng.randrange(3000)
    if kind == 8:
        return "".join(rng.choice(ALPHABET[:8]) for _ in range(rng.randrange(200)))
    if kind in (9, 10):
        return {rng.choice(["k", "é", "a\nb", "\u2028", 1, 2.5, None, True]): random_value(rng, depth + 1)
                for _ in range(rng.randrange(5))}
    if kind == 11:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    if kind == 12:
        return tuple(random_value(rng, depth + 1) for _ in range(rng.randrange(3)))
    return {"type": "step", "agents": {f"a{i}": {"observation": random_value(rng, 3), "reward": 0.5}
                                       for i in range(rng.randrange(3))}}


def test_dumps_is_json_dumps_byte_for_byte():
    rng = random.Random(4)
    for _ in range(3000):
        record = {"type": rng.choice(["step", "reset", "end"]), "value": random_value(rng)}
        line = dumps(record)
        assert line == reference_dumps(record)
        assert len(line.splitlines()) == 1
    assert dumps("a\u2028") == reference_dumps("a\u2028") and dumps(3) == "3"
    looped = {}
    looped["self"] = looped
    with pytest.raises(ValueError, match="Circular reference"):  # as json.dumps says
        dumps(looped)


def test_a_lone_surrogate_is_written_as_the_escape_it_reads_back_from(tmp_path):
    """Untrusted text may hold a lone surrogate (a model's reply decoded from a JSON escape), which has no UTF-8 form:
    the line holds its JSON escape instead, so the log is written and reads back with the text as it was."""
    record = {"type": "step", "step": 1, "agents": {"a": {"raw_action": "say hi \ud800 there \\\udfff", "note": "é\U0001f600"}}}
    line = dumps(record)
    assert "\\ud800" in line and line.encode("utf-8") and json.loads(line) == record
    assert dumps({"type": "step", "x": "é"}) == reference_dumps({"type": "step", "x": "é"})  # other text as before
    for name in ("ep.jsonl", "ep.jsonl.gz"):
        with EpisodeRecorder(tmp_path / name, keep=False) as recorder:
            recorder.write({"type": "header", "env_id": "day_trader_v0", "version": "0", "agents": ["a"]})
            recorder.write(record)
        assert read_log(tmp_path / name)[1] == record


def test_a_surrogate_pair_sent_as_two_code_points_reads_back_as_its_character(tmp_path):
    """JSON's `\\u` escapes cannot tell a high and a low surrogate sent as two code points (broken decoding leaves them)
    from the character they encode: the log reads back that character, which `as_logged` says; lone surrogates, and a
    low one before a high one, read back as they were (the hostile-input contract compares raw actions this way)."""
    sent = "say a\ud83d\ude00b \ud800 \udfff\ud800 é"
    expected = "say a\U0001f600b \ud800 \udfff\ud800 é"
    assert as_logged(sent) == expected and as_logged("plain") == "plain" and as_logged("é\U0001f600") == "é\U0001f600"
    record = {"type": "step", "step": 1, "agents": {"a": {"raw_action": sent}}}
    for name in ("ep.jsonl", "ep.jsonl.gz"):
        with EpisodeRecorder(tmp_path / name, keep=False) as recorder:
            recorder.write({"type": "header", "env_id": "day_trader_v0", "version": "0", "agents": ["a"]})
            recorder.write(record)
        assert read_log(tmp_path / name)[1]["agents"]["a"]["raw_action"] == expected == as_logged(sent)


def test_a_line_is_never_broken_in_two_by_an_object_s_own_json():
    """ujson inserts what an object's `__json__()` returns as it is; a newline there would break the JSONL line, so such a
    line is written by the json module (which calls `default`: the object's `str`)."""
    class Raw:
        def __json__(self):
            return '{"a":\n1}'

        def __str__(self):
            return "raw"

    record = {"type": "step", "extra": Raw()}
    assert dumps(record) == reference_dumps(record) == '{"type": "step", "extra": "raw"}'


def long_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(3000)))


def step_lines(rng: random.Random, count: int) -> list[dict]:
    """Step records whose agents' observations are long random texts (most of them) or anything else."""
    records = []
    for _ in range(count):
        agents_ = {}
        for i in range(rng.randrange(5)):
            if rng.random() < 0.1:
                agents_[f"a{i}"] = random_value(rng, 3)  # an entry that is not a dict, or a dict without an observation
                continue
            observation = long_text(rng) if rng.random() < 0.7 else random_value(rng, 3)
            if rng.random() < 0.2:
                observation = Observation(str(observation))
            agents_[f"a{i}"] = {"observation": observation, "raw_action": random_value(rng, 3), "reward": random_float(rng),
                                "events": [random_value(rng, 3)]}
        records.append({"type": "step", "step": rng.randrange(100), "agents": agents_, "events": [random_value(rng, 2)],
                        "done": False})
    return records


def shape(value):
    """A value's keys in order and its strings' identities, all the way down: what `line` must leave as it was."""
    if isinstance(value, dict):
        return [(key, shape(item)) for key, item in value.items()]
    if isinstance(value, (list, tuple)):
        return [shape(item) for item in value]
    return id(value)


def test_line_is_dumps_and_a_newline_byte_for_byte(monkeypatch):
    """`line` writes long observations with orjson and the rest with `dumps`'s encoder, spliced: the same bytes as
    `dumps`, for any text (control characters, quotes, U+2028, a lone surrogate), for records holding the stand-in's
    own text anywhere, and without orjson; and the record is left as it was (key order, the same objects)."""
    assert recorder_module._orjson is not None  # a dependency: the splicing is what runs
    rng = random.Random(12)
    records = step_lines(rng, 1500)
    stand_in = recorder_module._STAND_IN
    special = [
        {"observation": "x" * 9000, "raw_action": stand_in},  # the stand-in as a whole string elsewhere
        {"observation": "x" * 9000, "raw_action": f'say "{stand_in}'},  # ... after an escaped quote
        {"observation": stand_in, "raw_action": "wait"},  # an observation that is the stand-in
        {"observation": "x" * 9000, stand_in: 1},  # ... as a key
        {"observation": "see \ud800 here " * 500, "raw_action": "wait"},  # a lone surrogate: orjson refuses it
        {"observation": "x" * 9000, "raw_action": "a \udfff b"},  # ... elsewhere
        {"observation": "breaks \u2028 \u2029 \x85 here " * 300, "reward": 1e-05},
        {"observation": Observation("view \n\t\"quoted\" \\ é 中 \U0001f600 " * 300), "reward": math.nan},
    ]
    records += [{"type": "step", "step": 1, "agents": {"a": entry, "b": {"observation": "y" * 5000}}, "done": False}
                for entry in special]
    for record in records:
        before = shape(record)
        assert recorder_module.line(record) == (dumps(record) + "\n").encode("utf-8")
        assert shape(record) == before
    for record in records[:300]:
        if "\ud800" not in str(record) and "\udfff" not in str(record):
            assert recorder_module.line(record) == (reference_dumps(record) + "\n").encode("utf-8")
    looped = {"type": "step", "agents": {"a": {"observation": "x" * 9000, "events": []}}}
    entry = looped["agents"]["a"]
    entry["events"].append(looped)
    before = (list(entry), id(entry["observation"]))
    with pytest.raises(ValueError, match="Circular reference"):
        recorder_module.line(looped)
    assert (list(entry), id(entry["observation"])) == before  # put back though the encoding failed
    monkeypatch.setattr(recorder_module, "_orjson", None)
    for record in records[:300] + records[-len(special):]:
        assert recorder_module.line(record) == (dumps(record) + "\n").encode("utf-8")


@pytest.mark.parametrize("keep", [False, "metrics"])
def test_the_recorder_splices_where_it_pays_and_writes_the_same_log(tmp_path, monkeypatch, keep):
    """Step lines are spliced (`_spliced`) always with `keep="metrics"` (its view is the line's JSON less the
    observations) and for long lines only with `keep=False`, reset lines always; the log is the same text either way,
    and the metrics views read back are those of the log's records."""
    calls = []
    splice = recorder_module._spliced
    monkeypatch.setattr(recorder_module, "_spliced", lambda record, texts: calls.append(record) or splice(record, texts))
    for env_id, long_lines in (("job_fair_v0", True), ("day_trader_v0", False)):
        reference = EpisodeRecorder()
        play(teamenvs.make(env_id), reference, seed=3)
        calls.clear()
        path = tmp_path / f"{env_id}-{keep}.jsonl.gz"
        with EpisodeRecorder(path, keep=keep) as recorder:
            play(teamenvs.make(env_id), recorder, seed=3)
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
        assert text == "".join(reference_dumps(r) + "\n" for r in reference.records)
        steps = sum(r["type"] == "step" for r in reference.records)
        # the reset line is spliced, the header the usual way; after a long line, every line is
        assert [c["type"] for c in calls] == ["reset"] + ["step"] * (steps if keep or long_lines else 0), env_id
        assert recorder.records == [metrics_view(r) for r in read_log(path)] if keep else recorder.records == []


def test_write_step_is_write_of_the_step_record_in_every_case(tmp_path):
    """`write_step` (what an env calls) writes what `write(step_record(...))` writes, with the extras annotated before
    it, and keeps the same metrics view: spliced, or the usual way where splicing cannot be exact (a lone surrogate in a
    text, no text, the stand-in's text as an action), NaN and huge numbers included."""
    from types import SimpleNamespace

    from teamenvs.core.recorder import step_record

    stand_in = recorder_module._STAND_IN
    cases = [  # (texts, actions, rewards, spliced)
        ({"a": "view of a " * 50, "b": "view \u2028 of b \x85"}, {"a": "say hi", "b": 3.5}, {"a": 1.0, "b": math.nan}, True),
        ({"a": "x", "b": "y"}, {"a": "say big", "b": None}, {"a": 2.0**80, "b": -0.0}, True),
        ({"a": "see \ud800", "b": "y"}, {"a": "wait"}, {"a": 0.0, "b": 0.0}, False),
        ({"a": "x", "b": None}, {"a": "wait"}, {"a": 0.0, "b": 0.0}, False),
        ({"a": "x", "b": "y"}, {"a": stand_in, "b": "say \udfff"}, {"a": 0.0, "b": 0.0}, False),
    ]
    for keep in (False, "metrics", True):
        for number, (texts, actions, rewards, spliced) in enumerate(cases):
            env = SimpleNamespace(step_count=number + 1, global_events=[{"type": "round", "pool": 1e-05, "t": (1, 2)}],
                                  _last_action={"a": {"ok": True, "command": "say"}, "b": {"ok": None, "ignored": True}},
                                  _events={"a": [], "b": [{"type": "note", "value": 3, "big": 2**70}]})
            path = tmp_path / f"{keep}-{number}.jsonl.gz"
            with EpisodeRecorder(path, keep=keep) as recorder:
                recorder.annotate("a", rationale="because\u2029", usage={"tokens": 7})
                recorder.write_step(env, texts, actions, rewards, False)
                recorder.annotate("b", probe={"q": "fine"})
                recorder.write_step(env, texts, actions, rewards, True)
            expected = [step_record(env, texts, actions, rewards, done) for done in (False, True)]
            expected[0]["agents"]["a"].update(rationale="because\u2029", usage={"tokens": 7})
            expected[1]["agents"]["b"].update(probe={"q": "fine"})
            written = gzip.decompress(path.read_bytes()).decode("utf-8")
            assert written == "".join(dumps(r) + "\n" for r in expected), (keep, number)
            if keep == "metrics":
                assert [type(kept) is tuple for kept in recorder._kept] == [spliced, spliced], number
                as_logged = [metrics_view(json.loads(dumps(r))) for r in expected]  # the views as the log's JSON
                assert dumps(recorder.records) == dumps(as_logged)  # (by text: NaN is not equal to itself)
            elif keep is True:
                assert dumps(recorder.records) == dumps(expected)


def test_without_orjson_the_recorder_writes_and_keeps_as_before(tmp_path, monkeypatch):
    monkeypatch.setattr(recorder_module, "_orjson", None)
    for env_id in ("job_fair_v0", "day_trader_v0"):
        reference = EpisodeRecorder()
        play(teamenvs.make(env_id), reference, seed=5)
        path = tmp_path / f"{env_id}.jsonl.gz"
        with EpisodeRecorder(path, keep="metrics") as recorder:
            play(teamenvs.make(env_id), recorder, seed=5)
        assert gzip.decompress(path.read_bytes()).decode("utf-8") == "".join(reference_dumps(r) + "\n" for r in reference.records)
        assert all(type(kept) is bytes for kept in recorder._kept)  # marshal's metrics views, as before
        assert recorder.records == [metrics_view(r) for r in reference.records]


def test_a_kept_step_view_reads_back_as_the_json_module_reads_the_line():
    """A step line's kept view is decoded by orjson, which reads an integer beyond 64 bits as a float: such views (and
    NaN, which orjson refuses) are read by the json module; every other value as json.loads reads it."""
    rng = random.Random(9)
    edges = [2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, -(10**19) + 1, 10**19, 2**70, -(2**90), 0, -1]
    values = edges + [random_float(rng) for _ in range(3000)] + ["1234567890123456789012 in text", "é\u2028"]
    for value in values:
        data = dumps({"type": "step", "agents": {"a": {"observation": "x", "raw_action": "y", "v": value}}}).encode("utf-8")
        view = recorder_module._step_views([data])[0]
        expected = json.loads(data)
        del expected["agents"]["a"]["observation"], expected["agents"]["a"]["raw_action"]
        assert dumps(view) == dumps(expected) and type(view["agents"]["a"]["v"]) is type(expected["agents"]["a"]["v"]), value


def test_kept_views_read_back_in_order_whatever_each_line_held(tmp_path):
    """Step views are decoded together (one orjson call); lines kept otherwise (a lone surrogate's, marshalled) keep
    their places, and one view's NaN or integer beyond 64 bits sends them all to the json module, read alike."""
    from types import SimpleNamespace

    from teamenvs.core.recorder import step_record

    env = SimpleNamespace(step_count=0, global_events=[], _last_action={"a": {"ok": True}}, _events={"a": []})
    steps = [({"a": "view"}, {"a": "wait"}, {"a": 1.0}), ({"a": "see \ud800"}, {"a": "wait"}, {"a": 2.0}),
             ({"a": "view"}, {"a": "wait"}, {"a": math.nan}), ({"a": "view"}, {"a": "wait"}, {"a": 3.0})]
    for extra, nan in (({}, math.nan), ({"big": 2**70}, 2.5)):  # (the second without NaN: the big integer alone)
        steps[2] = ({"a": "view"}, {"a": "wait"}, {"a": nan})
        expected = []
        with EpisodeRecorder(tmp_path / "ep.jsonl.gz", keep="metrics") as recorder:
            recorder.write({"type": "header", "env_id": "x", "agents": ["a"]})
            for number, (texts, actions, rewards) in enumerate(steps):
                env.step_count = number + 1
                env._events = {"a": [{"type": "note", **extra}]}
                recorder.write_step(env, texts, actions, rewards, False)
                expected.append(step_record(env, texts, actions, rewards, False))
            recorder.write({"type": "end", "steps": 4})
        kinds = [type(kept) for kept in recorder._kept]
        assert kinds == [bytes, tuple, bytes, tuple, tuple, bytes]
        views = [{"type": "header", "env_id": "x", "agents": ["a"]}] + [metrics_view(r) for r in expected]
        assert dumps(recorder.records) == dumps(views + [{"type": "end", "steps": 4}])
        assert type(recorder.records[4]["agents"]["a"]["events"][0].get("big", 0)) is int


def test_long_raw_actions_are_spliced_and_not_kept(tmp_path):
    """A model's long reply is spliced into the line as observations are, so the view kept with `keep="metrics"` holds
    no long text; the line is the same (a reply over the log's limit cut, with its marker, as before)."""
    from types import SimpleNamespace

    from teamenvs.core.recorder import LONG_RAW_ACTION_CHARS, step_record

    env = SimpleNamespace(step_count=1, global_events=[], _last_action={a: {"ok": True} for a in "abc"},
                          _events={a: [] for a in "abc"})
    texts = {a: f"view of {a}" for a in "abc"}
    replies = {"a": "I think so.\nACTION: wait " + "x" * 3000, "b": "wait", "c": "\u2028 reply \x85 " * 5000}
    assert len(replies["a"]) > LONG_RAW_ACTION_CHARS and len(replies["c"]) > 20_000
    path = tmp_path / "ep.jsonl.gz"
    with EpisodeRecorder(path, keep="metrics") as recorder:
        recorder.write_step(env, texts, replies, {"a": 1.0, "b": 0.0, "c": 2.0}, False)
    expected = step_record(env, texts, replies, {"a": 1.0, "b": 0.0, "c": 2.0}, False)
    assert gzip.decompress(path.read_bytes()).decode("utf-8") == reference_dumps(expected) + "\n"
    assert expected["agents"]["c"]["raw_action"].endswith("...[cut: 50,000 characters in all]")
    (kept,) = recorder._kept
    assert type(kept) is tuple and len(kept[0]) < 1000 and b"xxxx" not in kept[0]
    assert recorder.records == [metrics_view(expected)]


def test_a_subclass_with_its_own_write_sees_every_step_record(tmp_path):
    """`write_step` builds a step's line without the full record where it can; a subclass that overrides `write` (to
    see or send every record) is given each step record there instead, and writes the same log."""
    class Seeing(EpisodeRecorder):
        def write(self, record):
            self.seen.append(record["type"])
            super().write(record)

    for keep in (False, "metrics"):
        recorder = Seeing(tmp_path / f"{keep}.jsonl.gz", keep=keep)
        recorder.seen = []
        with recorder:
            steps = play(teamenvs.make("job_fair_v0"), recorder, seed=1)
        assert recorder.seen == ["header", "reset"] + ["step"] * steps
        reference = EpisodeRecorder()
        play(teamenvs.make("job_fair_v0"), reference, seed=1)
        assert gzip.decompress((tmp_path / f"{keep}.jsonl.gz").read_bytes()).decode("utf-8") == "".join(
            reference_dumps(r) + "\n" for r in reference.records)


def random_float(rng: random.Random) -> float:
    """Any double (random bits: NaN, infinities, subnormals among them), or a decimal of any size."""
    if rng.random() < 0.5:
        return struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
    return rng.random() * 10.0 ** rng.randint(-12, 20) * rng.choice([1, -1])


def test_every_float_is_spelled_as_json_dumps_does():
    """ujson spells some floats otherwise (1e-5 for Python's 1e-05): such lines go to the json module."""
    rng = random.Random(7)
    floats = [random_float(rng) for _ in range(20_000)] + [1e-5, 2.5e-7, -1e-9, 1e-10, 1e16, 1e22, 5e-324, -0.0, 0.1]
    floats += [float(f"{rng.uniform(1, 10)!r}e{e}") for e in range(-320, 308) for _ in range(10)]  # every exponent
    for value in floats:
        record = {"type": "step", "reward": value, "events": [{"value": value}], "text": "a route"}
        assert dumps(record) == reference_dumps(record), value
        looks_like_one = {**record, "text": "route 3e-5 away"}  # text spelled like ujson's short exponent
        assert dumps(looks_like_one) == reference_dumps(looks_like_one)


def test_without_ujson_the_json_module_writes_every_line(monkeypatch):
    assert recorder_module._ujson is not None  # a dependency: the fast encoder is the one used
    monkeypatch.setattr(recorder_module, "_ujson", None)
    exact = recorder_module._make_fast_encode(recorder_module._exact_encode)
    assert exact is recorder_module._exact_encode
    rng = random.Random(5)
    for _ in range(500):
        record = {"type": "step", "value": random_value(rng), "reward": random_float(rng)}
        assert exact(record) == json.dumps(record, ensure_ascii=False, default=_default)


def test_an_older_ujson_is_called_with_keywords(monkeypatch):
    """ujson 6 is called with its arguments by position (a third of a microsecond less a call); a ujson whose positional
    arguments differ (5.x has double_precision second) is found out by the probe and called with keywords: it writes
    every line, none left to the json module."""
    import ujson

    calls = []

    class Older:
        @staticmethod
        def dumps(obj, ensure_ascii=True, double_precision=17, *args, **keywords):
            assert not args, "no positional arguments past double_precision in this fake"
            calls.append(obj)
            return ujson.dumps(obj, ensure_ascii=ensure_ascii, **keywords)

    def exact(obj):
        raise AssertionError(f"left to the json module: {obj!r:.80}")

    monkeypatch.setattr(recorder_module, "_ujson", Older)
    encode = recorder_module._make_fast_encode(exact)
    calls.clear()  # (the probe's own calls)
    records = [{"type": "step", "text": "é/ \u2028 \"q\"", "values": [1.5, 0.1, -2, None, True, 2**40], "nested": {"a": []}},
               {"type": "step", "reward": 230.0, "events": [{"earned": 200.0, "bonus": 30}]}]
    for record in records:
        assert encode(record) == json.dumps(record, ensure_ascii=False, default=_default)
    assert calls == records
    if "teamenvs.core.recorder" in teamenvs.compiled.loaded():
        pytest.skip("the recorder is compiled here (teamenvs.compiled): its closures cannot be read; the source's are")
    settings = [c.cell_contents for c in recorder_module._encode.__closure__ if type(c.cell_contents) is tuple and len(c.cell_contents) == 9]
    assert settings, "ujson 6 (the installed one) is called by position"


def written(path, lines):
    ours = _GzipLines(path)
    for line in lines:
        ours.write(line)
    ours.close()
    return path.read_bytes()


LINES = [dumps({"type": "step", "step": i, "text": "é" * i}).encode("utf-8") + b"\n" for i in range(50)]


def test_the_gzip_bytes_are_the_same_for_the_same_lines_and_any_gzip_reader_reads_them(tmp_path):
    assert recorder_module._isal is not None  # a dependency: ISA-L compresses
    for name in ("ep.jsonl.gz", "é.jsonl.gz", "中.jsonl.gz"):
        first, again = written(tmp_path / name, LINES), written(tmp_path / f"again-{name}", LINES)
        assert first[10:].partition(b"\0")[2] == again[10:].partition(b"\0")[2]  # but the name in the header
        assert gzip.decompress(first) == b"".join(LINES)
        reference = gzip.GzipFile(tmp_path / f"ref-{name}", "wb", mtime=0)
        reference.write(b"x")
        reference.close()
        ref = (tmp_path / f"ref-{name}").read_bytes()
        assert first[:8] == ref[:8] and first[9] == ref[9]  # GzipFile's header: no time stamp; the extra flags say "fast"
    assert len(first) < len(b"".join(LINES)) / 4


def test_without_isal_the_gzip_bytes_are_gzipfile_s_at_the_log_level(tmp_path, monkeypatch):
    monkeypatch.setattr(recorder_module, "_isal", None)
    for name in ("ep.jsonl.gz", "é.jsonl.gz", "中.jsonl.gz"):
        reference = gzip.GzipFile(tmp_path / f"ref-{name}", "wb", compresslevel=GZIP_LEVEL, mtime=0)
        for line in LINES:
            reference.write(line)
            reference.flush()
        reference.close()
        ref = (tmp_path / f"ref-{name}").read_bytes()
        got = written(tmp_path / name, LINES)
        assert got[:10] == ref[:10] and got[10:].partition(b"\0")[2] == ref[10:].partition(b"\0")[2]  # but the name
        assert gzip.decompress(got) == b"".join(LINES)


# ---------------------------------------------------------------------------- flushed per line, damage found
def test_every_line_is_in_the_file_when_write_returns(tmp_path):
    path = tmp_path / "ep.jsonl.gz"
    recorder = EpisodeRecorder(path)
    checked = []

    def check(_steps):
        data = path.read_bytes()  # as another process would see it: the stream has no end yet
        text = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data)
        assert text == "".join(dumps(r) + "\n" for r in recorder.records).encode("utf-8")
        written = json.loads(json.dumps(recorder.records, default=_default))
        if written[-1]["type"] == "end":
            written.pop()  # an unfinished stream cannot vouch for an end line: read as cut off, never complete
        assert read_log(path) == written
        checked.append(len(recorder.records))

    play(teamenvs.make("commons_v0"), recorder, seed=1, after_step=check)
    recorder.write({"type": "end", "steps": len(checked)})
    check(0)
    recorder.close()
    assert read_log(path)[-1] == {"type": "end", "steps": len(checked) - 1}
    assert len(checked) > 20 and checked == sorted(checked)


class ShortWrites:
    """A file that writes at most 7 bytes a call, as a system call interrupted by a signal may."""

    def __init__(self, raw):
        self.raw = raw

    def write(self, data):
        return self.raw.write(bytes(data[:7]))

    def close(self):
        self.raw.close()


def test_a_short_write_is_finished(tmp_path):
    records = [{"type": "header", "env_id": "x"}] + [{"type": "step", "step": i, "text": "é" * i} for i in range(40)]
    for name in ("ep.jsonl", "ep.jsonl.gz"):
        recorder = EpisodeRecorder(tmp_path / name, keep=False)
        target = recorder._file._file if name.endswith(".gz") else recorder._file
        target._raw = ShortWrites(target._raw)
        if name.endswith(".gz"):
            recorder._file._raw = target._raw
        for record in records:
            recorder.write(record)
        recorder.close()
        assert [json.loads(text) for text in log_text(tmp_path / name).decode("utf-8").splitlines()] == records


def test_a_log_in_a_new_folder_is_written(tmp_path):
    for name in ("ep.jsonl", "ep.jsonl.gz"):
        path = tmp_path / "new" / name.replace(".", "-") / name  # folders made only when the file cannot be opened
        with EpisodeRecorder(path, keep=False) as recorder:
            recorder.write({"type": "header", "env_id": "x"})
        assert read_log(path) == [{"type": "header", "env_id": "x"}]


def test_a_damaged_log_is_still_a_log_error(tmp_path):
    path = tmp_path / "ep.jsonl.gz"
    with EpisodeRecorder(path, keep=False) as recorder:
        play(teamenvs.make("day_trader_v0", rounds=3), recorder)
    data = path.read_bytes()
    assert read_log(path)[0]["env_id"] == "day_trader_v0"
    crc = data[:-8] + bytes([data[-8] ^ 1]) + data[-7:]
    path.write_bytes(crc)
    with pytest.raises(LogError, match="checksum mismatch"):
        read_log(path)
    middle = len(data) // 2
    path.write_bytes(data[:middle] + bytes([data[middle] ^ 0x10]) + data[middle + 1:])
    with pytest.raises(LogError):
        read_log(path)
    plain = tmp_path / "ep.jsonl"
    lines = gzip.decompress(data).decode("utf-8").splitlines()
    lines[2] = lines[2].replace('"step": 1', '"step": "one"', 1)
    plain.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(LogError) as caught:
        read_log(plain)
    assert caught.value.line == 3 and caught.value.field == "step"


# ---------------------------------------------------------------------------- cost
def old_writer(path: Path):
    """The writer this change replaced: text wrapper over GzipFile at level 9, json.dumps per line."""
    handle = io.TextIOWrapper(gzip.GzipFile(path, "wb", mtime=0), encoding="utf-8")

    def write(record):
        handle.write(reference_dumps(record) + "\n")
        handle.flush()

    return write, handle.close


def test_writing_a_log_costs_well_under_the_old_writer_in_the_same_run(tmp_path):
    records = []
    for env_id in ("day_trader_v0", "hidden_profile_v0", "job_fair_v0"):
        recorder = EpisodeRecorder()
        play(teamenvs.make(env_id), recorder, seed=2)
        records += recorder.records
    best = {"old": math.inf, "new": math.inf}
    for round_ in range(5):  # alternating, best of 5 CPU times: robust to other load on the machine
        for name in ("old", "new") if round_ % 2 == 0 else ("new", "old"):
            path = tmp_path / f"{name}{round_}.jsonl.gz"
            if name == "old":
                write, close = old_writer(path)
            else:
                recorder = EpisodeRecorder(path, keep=False)
                write, close = recorder.write, recorder.close
            start = time.process_time()
            for record in records:
                write(record)
            close()
            best[name] = min(best[name], time.process_time() - start)
    assert gzip.decompress((tmp_path / "new0.jsonl.gz").read_bytes()) == gzip.decompress((tmp_path / "old0.jsonl.gz").read_bytes())
    assert best["new"] < 0.8 * best["old"], best  # measured 0.5-0.6 (level 9 again: about 0.9-1)


# ---------------------------------------------------------------------------- memory
def grown_during_episode(env, recorder):
    """Traced memory (bytes) the episode added from just after reset to its end, with its garbage collected."""
    start = {}

    def first(steps):
        if steps == 1:
            gc.collect()
            start["bytes"] = tracemalloc.get_traced_memory()[0]

    gc.collect()
    tracemalloc.start()
    try:
        play(env, recorder, seed=0, after_step=first)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - start["bytes"]
    finally:
        tracemalloc.stop()


def test_a_recorder_writing_a_file_keeps_nothing_or_only_what_metrics_read(tmp_path):
    grown = {}
    for keep in (None, False, "metrics", True):
        env = teamenvs.make("day_trader_v0", rounds=80)
        recorder = None if keep is None else EpisodeRecorder(tmp_path / f"{keep}.jsonl.gz", keep=keep)
        grown[keep] = grown_during_episode(env, recorder)
        if recorder is not None:
            recorder.close()
            assert (recorder.records == []) == (keep is False)
    text = len(gzip.decompress((tmp_path / "False.jsonl.gz").read_bytes()))
    assert grown[True] - grown[None] > 0.5 * text, (grown, text)  # keeping every record holds about the log's text
    assert grown[False] - grown[None] < 0.05 * text, (grown, text)  # keep=False: the records are not kept at all
    # keep="metrics" (agents.run_episode with a log file): no observation texts, packed; measured about a fifth
    assert grown["metrics"] - grown[None] < 0.25 * (grown[True] - grown[None]), (grown, text)


def test_run_episode_with_a_log_keeps_only_the_metrics_view_and_reads_records_back(tmp_path):
    env = teamenvs.make("day_trader_v0", rounds=8)
    recorders = []
    logged = agents.run_episode(env, make_policies(env, "scripted", seed=1), seed=1, log_dir=tmp_path, compress=True,
                                on_step=lambda steps, usage: recorders.append(env.unwrapped.recorder))
    recorder = recorders[-1]
    assert recorder.keep == "metrics" and recorder.path == logged.log_path
    # packed, nothing for the garbage collector: step lines as their JSON less the observations, the rest marshal's bytes
    kinds = [type(kept) for kept in recorder._kept]  # header, reset, the steps, the end line
    assert kinds[:2] == [bytes, bytes] and kinds[-1] is bytes and set(kinds[2:-1]) == {tuple} and len(kinds) > 8
    assert all(type(kept[0]) is bytes and b"trader_1" in kept[0] for kept in recorder._kept if type(kept) is tuple)
    entries = [e for r in recorder.records if isinstance(r.get("agents"), dict) for e in r["agents"].values()]
    assert entries and not any("observation" in e or "raw_action" in e for e in entries)
    assert logged.__dict__["_records"] is None  # nothing read back until asked
    on_disk = read_log(logged.log_path)
    assert logged.records == on_disk and logged.records[-1]["type"] == "end"
    assert on_disk[1]["agents"]["trader_1"]["observation"]
    assert [metrics_view(r) for r in on_disk] == json.loads(json.dumps(recorder.records, default=_default))

    in_memory = agents.run_episode(env, make_policies(env, "scripted", seed=1), seed=1)
    assert in_memory.metrics == logged.metrics and in_memory.records[-1]["type"] == "end"
    text = gzip.decompress(logged.log_path.read_bytes()).decode("utf-8")
    assert text == "".join(reference_dumps(r) + "\n" for r in in_memory.records)


@pytest.mark.parametrize("env_id", teamenvs.list_envs())
def test_run_episode_gives_the_same_metrics_with_a_log_and_without(tmp_path, env_id):
    """With a log file the metrics read the kept views (step lines decoded from their JSON), without one the records
    themselves: the same metrics, in every env."""
    for kind in ("scripted", "random"):
        env = teamenvs.make(env_id)
        logged = agents.run_episode(env, make_policies(env, kind, seed=4), seed=4, log_dir=tmp_path, compress=True,
                                    max_steps=60)
        in_memory = agents.run_episode(env, make_policies(env, kind, seed=4), seed=4, max_steps=60)
        assert json.dumps(logged.metrics, sort_keys=True) == json.dumps(in_memory.metrics, sort_keys=True), (env_id, kind)


SPECIAL = ["say a \u2028 b \u2029 c \x85 d", "say \ud800 here", recorder_module._STAND_IN, f'say "{recorder_module._STAND_IN}',
           "say 1e-5 and 1e-05", "wait"]


@pytest.mark.parametrize("env_id", teamenvs.list_envs())
def test_hostile_actions_give_the_same_log_whatever_is_kept(tmp_path, env_id):
    """Hostile actions (100k characters, control characters, lone surrogates, JSON-looking text, non-strings) are
    written alike by every path: spliced step lines (`keep="metrics"`), `write` of the full record (`keep=True`), and
    `keep=False`'s choice by length."""
    from teamenvs.testing import hostile_action

    for seed in range(2):
        texts = {}
        for keep in ("metrics", True, False):
            env = teamenvs.make(env_id)
            rng = np.random.default_rng(seed)
            path = tmp_path / f"{seed}-{keep}.jsonl.gz"
            with EpisodeRecorder(path, keep=keep) as recorder, env.unwrapped.recording(recorder):
                _, infos = env.reset(seed=seed)
                for _ in range(25):
                    if not env.agents:
                        break
                    actions = {a: hostile_action(rng, env, a, infos[a]) for a in env.agents if infos[a]["needs_action"]}
                    if actions:  # and one of the texts each path must treat alike, for the first agent asked
                        actions[next(iter(actions))] = SPECIAL[int(rng.integers(len(SPECIAL)))]
                    _, _, _, _, infos = env.step(actions)
            # (a non-string action is logged as its repr, which may hold a memory address)
            texts[keep] = re.sub(rb"0x[0-9a-f]+", b"0x", gzip.decompress(path.read_bytes()))
            if keep is True:  # and all of them json.dumps's text of the records
                texts["dumps"] = re.sub(rb"0x[0-9a-f]+", b"0x", "".join(dumps(r) + "\n" for r in recorder.records).encode())
        assert texts["metrics"] == texts[True] == texts[False] == texts["dumps"], (env_id, seed)


# ---------------------------------------------------------------------------- benchmarks/perf.py
def test_the_perf_rows_measure_with_and_without_a_log_in_one_run():
    rows = perf.recorder_rows(0.05, env_ids=["map_task_v0"])
    assert len(rows) == 1
    measurement, setting, value, unit, notes = rows[0]
    assert (measurement, setting, unit) == ("recorder cost", "map_task_v0, scripted, .jsonl.gz log",
                                            "x env steps/s without a recorder")
    assert 0.2 < float(value) < 2.0  # a ratio of two throughputs of one run
    assert "CPU-time ratio" in notes and "written" in notes
    r = perf.recorder_cost("map_task_v0", 0.0)
    assert r["pairs"] == 1 and r["steps"] == r["rec_steps"] > 0 and r["text_bytes"] > 5 * r["bytes"] > 0
