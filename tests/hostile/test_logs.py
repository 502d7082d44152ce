"""Damaged and edited episode logs (hardening issue, items 3 and 6).

`read_log` must tell a damaged log from a cut-off one: damage (a checksum or length mismatch,
bytes that are not gzip or UTF-8, a bad line before the last, a field of the wrong type)
raises `LogError` naming the file, line and field; a log cut off mid-write reads up to its
last whole line and is never complete. Checked here by flipping every bit near the end of a
real compressed log, by cutting logs everywhere near their end, and with a corpus of edited
fields run through `read_log`, `teamenvs report` and `teamenvs replay`.
"""

from __future__ import annotations

import gzip
import json
import re
import struct
from pathlib import Path

import pytest

import agents
import teamenvs
from benchmarks.bench import check_log, finished_run, is_complete, log_path, run_bench
from benchmarks.report import build_report, load_results
from benchmarks.suite import load_suite
from teamenvs.cli import main
from teamenvs.core.recorder import LogError, dumps, read_log, unscored
from teamenvs.registry import list_envs

TINY = {"name": "tiny", "seeds": 1, "groups": [
    {"title": "Trade", "env": "day_trader_v0", "conditions": ["baseline"], "policies": ["scripted"], "max_steps": 4}]}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """One short DayTrader episode run by `teamenvs bench`: (episode, its .jsonl.gz log, its records)."""
    root = tmp_path_factory.mktemp("tiny")
    path = root / "tiny.json"
    path.write_text(json.dumps(TINY), encoding="utf-8")
    suite = load_suite(path)
    run_bench(suite, root / "out", workers=1, progress=False, report=False)
    episode = suite.episodes()[0]
    log = log_path(root / "out", episode)
    return episode, log, read_log(log)


def lines_of(records) -> list[str]:
    return [dumps(r) for r in records]


def write_plain(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- damage to the bytes


def test_no_bit_flip_near_the_end_passes_as_a_complete_log_with_other_numbers(tiny, tmp_path):
    episode, log, records = tiny
    data = log.read_bytes()
    assert is_complete(log, episode) and records[-1]["type"] == "end"
    target = tmp_path / log.name
    target.write_bytes(data)
    outcomes = {"damaged": 0, "incomplete": 0, "same": 0}
    wrong = []
    start = max(0, len(data) - 400)
    for offset in range(start, len(data)):
        for bit in range(8):
            with open(target, "r+b") as f:  # in place: truncating a file is slow on some file systems
                f.seek(offset)
                f.write(bytes([data[offset] ^ (1 << bit)]))
            done, why = check_log(target, episode)
            with open(target, "r+b") as f:
                f.seek(offset)
                f.write(data[offset:offset + 1])
            if why is not None:
                outcomes["damaged"] += 1
                assert f"{target}: gzip: " in why or f"{target}:" in why
            elif not done:
                outcomes["incomplete"] += 1
            elif read_log(target) == records:
                outcomes["same"] += 1  # e.g. a padding bit after the last block
            else:
                wrong.append((offset, bit))
    assert wrong == [], f"{len(wrong)} flips read as complete logs with other contents: {wrong[:5]}"
    assert outcomes["damaged"] > 0.9 * sum(outcomes.values()), outcomes


def test_checksum_length_and_trailing_data_are_damage_not_a_cut(tiny, tmp_path):
    _, log, _ = tiny
    data = log.read_bytes()
    crc, size = struct.unpack("<II", data[-8:])
    cases = {
        "crc": (data[:-8] + struct.pack("<II", crc ^ 1, size), "damaged: checksum mismatch"),
        "size": (data[:-8] + struct.pack("<II", crc, size + 1), "damaged: length mismatch"),
        "trailing": (data + b"extra bytes", "damaged: data after the end of the compressed stream"),
        "not_gzip": (b"hello, plain text\n", "not gzip-compressed data"),
    }
    for name, (raw, why) in cases.items():
        path = tmp_path / f"{name}.jsonl.gz"
        path.write_bytes(raw)
        with pytest.raises(LogError) as caught:
            read_log(path)
        assert str(caught.value).startswith(f"{path}: gzip: {why}"), str(caught.value)
        assert caught.value.line is None and caught.value.field == "gzip"
    padded = tmp_path / "padded.jsonl.gz"
    padded.write_bytes(data + b"\0" * 16)  # zero padding after the stream (tape, some copy tools) is no damage
    assert read_log(padded)[-1]["type"] == "end"


def test_a_log_cut_anywhere_reads_as_incomplete_never_complete(tiny, tmp_path):
    episode, log, records = tiny
    data = log.read_bytes()
    cuts = sorted(set(range(0, len(data), 37)) | set(range(len(data) - 40, len(data))))
    for size in cuts:
        cut = tmp_path / f"cut{size}.jsonl.gz"
        cut.write_bytes(data[:size])
        got = read_log(cut)  # no LogError: a cut is not damage
        assert got == records[: len(got)], size
        assert not got or got[-1]["type"] != "end", size
        assert not is_complete(cut, episode)
    # a plain log cut anywhere in its last line, even just before the final newline
    text = "".join(line + "\n" for line in lines_of(records))
    last = text.rindex("\n", 0, len(text) - 1) + 1
    for size in range(last, len(text)):
        plain = tmp_path / f"cut{size}.jsonl"
        plain.write_text(text[:size], encoding="utf-8")
        got = read_log(plain)
        assert got == records[:-1], size
    plain.write_text(text, encoding="utf-8")
    assert read_log(plain) == records


def test_one_bad_line_mid_file_is_reported_with_its_line_number(tiny, tmp_path):
    _, _, records = tiny
    lines = lines_of(records)
    bad = list(lines)
    bad[3] = bad[3][: len(bad[3]) // 2]  # a line cut in half, with lines after it
    plain = write_plain(tmp_path / "bad.jsonl", bad)
    with pytest.raises(LogError, match=rf"^{re.escape(str(plain))}:4: line: not valid JSON"):
        read_log(plain)
    packed = tmp_path / "bad.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    with pytest.raises(LogError, match=rf"^{re.escape(str(packed))}:4: line: not valid JSON"):
        read_log(packed)
    # the same half line as the last line, with its newline: written whole, so damage too
    with pytest.raises(LogError, match=rf":{len(lines)}: line: not valid JSON"):
        read_log(write_plain(tmp_path / "last.jsonl", lines[:-1] + [bad[3]]))
    # bytes that are not UTF-8, and a line that is JSON but not an object
    raw = "".join(line + "\n" for line in lines).encode("utf-8")
    at = raw.index(b"\n", raw.index(b"\n") + 1) + 5  # in line 3
    undecodable = tmp_path / "latin.jsonl"
    undecodable.write_bytes(raw[:at] + b"\xff\xfe" + raw[at:])
    with pytest.raises(LogError, match=rf"^{re.escape(str(undecodable))}:3: text: not UTF-8 \(byte 0xff at column 5\)"):
        read_log(undecodable)
    with pytest.raises(LogError, match=rf"^{re.escape(str(tmp_path / 'array.jsonl'))}:2: line: expected a JSON object, got a list"):
        read_log(write_plain(tmp_path / "array.jsonl", [lines[0], "[1, 2]", *lines[1:]]))
    with pytest.raises(LogError, match=r":5: line: JSON nested too deeply"):
        read_log(write_plain(tmp_path / "deep.jsonl", lines[:4] + ["[" * 100_000 + "]" * 100_000] + lines[4:]))


def test_a_damaged_log_is_rerun_by_bench_and_said_so(tiny, tmp_path):
    episode, log, records = tiny
    out = log.parent.parent
    data = log.read_bytes()
    crc, size = struct.unpack("<II", data[-8:])
    try:
        log.write_bytes(data[:-8] + struct.pack("<II", crc ^ 0xFF, size))
        suite = load_suite(out.parent / "tiny.json")
        outcome = run_bench(suite, out, workers=1, progress=False, report=False)
        assert (outcome.ran, outcome.skipped, outcome.failed) == (1, 0, [])
        assert f"damaged log, rerun: {log}: gzip: damaged: checksum mismatch" in outcome.summary()
        assert log.read_bytes() == data  # rerun from scratch: the same bytes as the first run
    finally:
        log.write_bytes(data)


# ---------------------------------------------------------------------------- edited fields

HUGE = 10**400
NAN, INF = float("nan"), float("inf")

# (line type, where to put the value, the value, the field the error names); "A" stands for the first agent
CORPUS = [
    ("header", ["env_id"], 123, "env_id"),
    ("header", ["env_id"], None, "env_id"),
    ("header", ["version"], ["1"], "version"),
    ("header", ["preset"], 7, "preset"),
    ("header", ["seed"], "0", "seed"),
    ("header", ["seed"], 1.5, "seed"),
    ("header", ["seed"], HUGE, "seed"),
    ("header", ["agents"], "trader_1,trader_2", "agents"),
    ("header", ["agents"], [1, 2], "agents.0"),
    ("header", ["agents"], {"a": 1}, "agents"),
    ("header", ["config"], "rounds=3", "config"),
    ("header", ["config"], [], "config"),
    ("header", ["config", "months"], "12", "config.months"),
    ("header", ["config", "deep"], json.loads("[" * 40 + "]" * 40), "config"),
    ("header", ["run"], "bench", "run"),
    ("header", ["run", "suite"], 1, "run.suite"),
    ("header", ["run", "group"], None, "run.group"),
    ("header", ["run", "condition"], "baseline", "run.condition"),
    ("header", ["run", "condition", "name"], ["c"], "run.condition.name"),
    ("header", ["run", "condition", "set"], "x=1", "run.condition.set"),
    ("header", ["run", "policy"], "scripted", "run.policy"),
    ("header", ["run", "policy", "label"], {"x": 1}, "run.policy.label"),
    ("header", ["run", "index"], 5, "run.index"),
    ("header", ["run", "index"], [0, 0], "run.index"),
    ("header", ["run", "index"], ["a", "b", "c"], "run.index.0"),
    ("header", ["run", "model"], 4, "run.model"),
    ("header", ["type"], 1, "type"),
    ("reset", ["agents"], "everyone", "agents"),
    ("reset", ["agents", "A"], "hi", "agents.A"),
    ("reset", ["agents", "A", "observation"], 5, "agents.A.observation"),
    ("step", ["step"], "1", "step"),
    ("step", ["step"], 1.5, "step"),
    ("step", ["agents"], [], "agents"),
    ("step", ["agents", "A"], "x", "agents.A"),
    ("step", ["agents", "A", "reward"], "10", "agents.A.reward"),
    ("step", ["agents", "A", "reward"], NAN, "agents.A.reward"),
    ("step", ["agents", "A", "reward"], INF, "agents.A.reward"),
    ("step", ["agents", "A", "reward"], HUGE, "agents.A.reward"),
    ("step", ["agents", "A", "reward"], 1e300, "agents.A.reward"),
    ("step", ["agents", "A", "reward"], None, "agents.A.reward"),
    ("step", ["agents", "A", "reward"], True, "agents.A.reward"),
    ("step", ["agents", "A", "action"], "invest", "agents.A.action"),
    ("step", ["agents", "A", "action"], [1], "agents.A.action"),
    ("step", ["agents", "A", "action", "ok"], "yes", "agents.A.action.ok"),
    ("step", ["agents", "A", "action", "command"], ["invest"], "agents.A.action.command"),
    ("step", ["agents", "A", "action", "kind"], {"k": 1}, "agents.A.action.kind"),
    ("step", ["agents", "A", "events"], "none", "agents.A.events"),
    ("step", ["agents", "A", "events"], [1], "agents.A.events.0"),
    ("step", ["agents", "A", "events"], [{"type": ["x"]}], "agents.A.events.0.type"),
    ("step", ["events"], "none", "events"),
    ("step", ["events"], ["msg"], "events.0"),
    ("step", ["events"], [{"type": "message", "sender": ["a"]}], "events.0.sender"),
    ("step", ["events"], [{"type": "drawing", "accuracy": HUGE}], "events.0.accuracy"),
    ("step", ["done"], "yes", "done"),
    ("end", ["steps"], "4", "steps"),
    ("end", ["returns"], "lots", "returns"),
    ("end", ["returns", "A"], "10", "returns.A"),
    ("end", ["returns", "A"], NAN, "returns.A"),
    ("end", ["returns", "A"], HUGE, "returns.A"),
    ("end", ["metrics"], "good", "metrics"),
    ("end", ["metrics"], [1, 2], "metrics"),
    ("end", ["metrics", "mean_final_wealth"], INF, "metrics.mean_final_wealth"),
    ("end", ["metrics", "mean_final_wealth"], HUGE, "metrics.mean_final_wealth"),
    ("end", ["metrics", "mean_final_wealth"], -1e200, "metrics.mean_final_wealth"),
    ("end", ["metrics", "deep"], json.loads('{"a": ' * 40 + "1" + "}" * 40), "metrics"),
    ("end", ["usage"], "cheap", "usage"),
    ("end", ["usage", "total"], 3, "usage.total"),
    ("end", ["usage", "total"], {"calls": "3"}, "usage.total.calls"),
    ("end", ["type"], None, "type"),
]


def edited(records, kind: str, where: list[str], value) -> tuple[list[dict], int]:
    """A deep copy of `records` with `value` put at `where` in the first line of type `kind`; (records, its line)."""
    copy = json.loads(json.dumps(records))
    index = next(i for i, r in enumerate(copy) if r.get("type") == kind)
    agent = copy[0]["agents"][0]
    keys = [agent if k == "A" else k for k in where]
    target = copy[index]
    for key in keys[:-1]:
        target = target.setdefault(key, {})
    target[keys[-1]] = value
    return copy, index + 1


def write_edited(path: Path, records) -> Path:
    # json.dumps writes NaN/Infinity and huge ints as Python's json reads them back
    return write_plain(path, [json.dumps(r, ensure_ascii=False) for r in records])


@pytest.mark.parametrize("kind, where, value, field", CORPUS, ids=[f"{c[0]}.{'.'.join(c[1])}={str(c[2])[:12]}" for c in CORPUS])
def test_an_edited_field_is_a_log_error_naming_file_line_and_field(tiny, tmp_path, capsys, kind, where, value, field):
    _, _, records = tiny
    bad, line = edited(records, kind, where, value)
    agent = records[0]["agents"][0]
    field = field.replace(".A", f".{agent}")
    path = write_edited(tmp_path / "logs" / "edited.jsonl", bad)
    with pytest.raises(LogError) as caught:
        read_log(path)
    assert str(caught.value).startswith(f"{path}:{line}: {field}: "), str(caught.value)
    assert (caught.value.line, caught.value.field) == (line, field)
    # the commands say the same, as an error line, and exit nonzero (a traceback would fail the test)
    for argv in (["replay", str(path), "--no-color"], ["report", str(tmp_path)]):
        assert main(argv) != 0
        err = capsys.readouterr().err
        assert err.startswith("error: ") and f"{path}:{line}: {field}: " in err, err


def test_sound_lines_out_of_order_are_damage_and_rerun_by_bench(tiny, tmp_path):
    """Found by review: a step line repeated or deleted, an end line counting other steps, or a header naming another
    env than its run left every line sound, and report and bench counted the log complete (replay alone saw it)."""
    episode, log, records = tiny
    assert [r.get("step") for r in records if r["type"] == "step"] == [1, 2, 3, 4]
    step_2 = next(i for i, r in enumerate(records) if r.get("step") == 2)
    repeated = records[:step_2 + 1] + records[step_2:]
    dropped = records[:step_2] + records[step_2 + 1:]
    cases = {
        "repeated": (repeated, step_2 + 2, "step", "step 2 where step 3 is due"),
        "dropped": (dropped, step_2 + 1, "step", "step 3 where step 2 is due"),
        "end": (edited(records, "end", ["steps"], 3)[0], len(records), "steps", "the end line counts 3 steps where the log holds 4"),
        "env": (edited(records, "header", ["env_id"], "commons_v0")[0], 1, "env_id",
                "the header's env 'commons_v0' is not its run's ('day_trader_v0')"),
        # found by review: an end line's returns were taken as they stood (123456 counted; a 'ghost' agent's return
        # pulled the return column down)
        "return": (edited(records, "end", ["returns", "A"], 123456)[0], len(records), f"returns.{records[0]['agents'][0]}",
                   "the return 123456 is not the sum of the agent's step rewards"),
        "ghost": (edited(records, "end", ["returns", "ghost"], 0.0)[0], len(records), "returns.ghost",
                  "a return for 'ghost', who is not an agent of the episode"),
        # found by review: returns for some agents only, a line after the end line, an end line after an error line
        # and a header naming an agent twice were all counted
        "some returns": (records[:-1] + [{**records[-1], "returns": dict(list(records[-1]["returns"].items())[1:])}],
                         len(records), f"returns.{records[0]['agents'][0]}", "no return for"),
        "after end": (records + [records[-2]], len(records) + 1, "type", f"a line after the end line (line {len(records)})"),
        "error, end": (records[:-1] + [{"type": "error", "step": 4, "error": "X"}, records[-1]], len(records) + 1, "type",
                       f"an end line after the error line (line {len(records)})"),
        "twice": (edited(records, "header", ["agents"], records[0]["agents"] + records[0]["agents"][:1])[0], 1, "agents",
                  "the header names an agent twice"),
    }
    for name, (bad, line, field, why) in cases.items():
        path = write_edited(tmp_path / f"{name}.jsonl", bad)
        with pytest.raises(LogError) as caught:
            read_log(path)
        assert (caught.value.line, caught.value.field) == (line, field), name
        assert why in str(caught.value), name
    # bench takes such a log for damage and reruns it
    out = log.parent.parent
    data = log.read_bytes()
    try:
        with gzip.open(log, "wt", encoding="utf-8") as file:
            file.write("".join(dumps(r) + "\n" for r in repeated))
        outcome = run_bench(load_suite(out.parent / "tiny.json"), out, workers=1, progress=False, report=False)
        assert (outcome.ran, outcome.skipped) == (1, 0)
        assert "damaged log, rerun:" in outcome.summary() and "step 2 where step 3 is due" in outcome.summary()
        assert log.read_bytes() == data
    finally:
        log.write_bytes(data)


def test_an_end_line_without_steps_or_returns_is_not_counted(tiny, tmp_path):
    """Found by review: an end line stripped of its steps and returns, its step lines gone and a metric made 99,999, was
    counted complete by bench and report (and bolded as the best). Every teamenvs writer gives an end line both, and
    the header its agents: a log without them is damage, rerun by bench and left out of the report."""
    _, log, records = tiny
    stripped = [records[0], {k: v for k, v in records[-1].items() if k not in ("steps", "returns")}]
    stripped[1]["metrics"] = {**stripped[1]["metrics"], "mean_final_wealth": 99999}
    no_agents = [{k: v for k, v in records[0].items() if k != "agents"}, *records[1:]]
    for name, bad, field in (("stripped", stripped, "steps"), ("no agents", no_agents, "agents")):
        path = write_edited(tmp_path / f"{name}.jsonl", bad)
        assert read_log(path)[-1]["type"] == "end"  # sound lines, for a reader that reads them
        why = unscored(path, read_log(path))
        assert why is not None and why.field == field and str(why).startswith(f"{path}: {field}: "), name
        assert finished_run(path) == (None, str(why)), name
    logs = tmp_path / "out" / "logs"
    logs.mkdir(parents=True)
    (logs / log.name).write_bytes(log.read_bytes())
    write_edited(logs / "Trade__baseline__scripted__seed9.jsonl", stripped)
    out = build_report(tmp_path / "out", plots=False).summary()
    assert "report: 1 of 1 episodes complete" in out and "the end line lacks it" in out
    assert "99999" not in (tmp_path / "out" / "results.csv").read_text(encoding="utf-8")


def test_report_leaves_an_edited_log_out_and_says_which_and_why(tiny, tmp_path):
    _, log, records = tiny
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / log.name).write_bytes(log.read_bytes())
    bad, line = edited(records, "end", ["returns", "A"], "lots")
    path = write_edited(logs / "Trade__baseline__scripted__seed9.jsonl", bad)
    (logs / "cut.jsonl.gz").write_bytes(log.read_bytes()[:-9])  # a cut log: incomplete, not left out
    (logs / "notes.jsonl").write_text('{"type": "note"}\n', encoding="utf-8")  # JSONL, but no episode log
    out = build_report(tmp_path, plots=False).summary()
    assert "report: 1 of 2 episodes complete" in out
    assert "2 log(s) left out, damaged or not episode logs" in out
    assert f"{path}:{line}: returns.{records[0]['agents'][0]}: expected a number, got a string" in out
    assert f"{logs / 'notes.jsonl'}: header: the first line is not a header" in out
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Logs left out" in md and f"`{path.name}` line {line}: returns." in md
    assert "- `cut.jsonl.gz`: incomplete" in md
    rows = load_results(tmp_path)
    assert sorted(r["status"] for r in rows) == ["complete", "incomplete"]  # the left-out ones are nowhere
    assert all(r["seed"] != "9" for r in rows)


def test_the_logs_of_every_env_pass_the_checks(tmp_path):
    for env_id in list_envs():
        env = teamenvs.make(env_id)
        result = agents.run_episode(env, agents.make_policies(env, "random", seed=0), seed=0, log_dir=tmp_path,
                                    max_steps=30, compress=True, run={"suite": "s"})
        records = read_log(result.log_path)
        assert records[-1]["type"] == "end" and len(records) == result.steps + 3, env_id


def test_report_of_far_apart_seeds_builds_no_giant_list(tiny, tmp_path):
    # the seeds line once listed range(first, last + 1) to see whether the seeds had gaps
    _, _, records = tiny
    logs = tmp_path / "logs"
    for seed in (0, 10**18, 2 * 10**18):
        copy, _ = edited(records, "header", ["seed"], seed)
        write_edited(logs / f"s{seed}.jsonl", copy)
    report = build_report(tmp_path, plots=False)
    assert [r.status for r in report.rows] == ["complete"] * 3
    assert "seeds 0, 1000000000000000000, 2000000000000000000" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_one_recorder_for_two_episodes_or_two_envs_is_refused_before_anything_changes(tmp_path):
    """One recorder given a second reset (a custom loop's `with env.recording(rec): for seed in ...`) or a second env
    wrote a log whose steps mixed two episodes: it read back as valid, replayed as "an edited log", and its metrics
    were neither episode's. Now the second reset, another env's reset and a step of an env whose episode the log does
    not hold are refused before the env changes, and a log that holds a second header is damage."""
    first, second = teamenvs.make("commons_v0"), teamenvs.make("commons_v0")
    from teamenvs.core.recorder import EpisodeRecorder

    recorder = EpisodeRecorder(tmp_path / "one.jsonl")
    first.record_to(recorder)
    second.record_to(recorder)
    first.reset(seed=0)
    first.step({a: "wait" for a in first.agents})
    for env, seed in ((second, 1), (first, 2)):
        with pytest.raises(ValueError, match=re.escape("holds an episode already (commons_v0, seed 0): a log holds one episode")):
            env.reset(seed=seed)
    assert (first.step_count, second._was_reset) == (1, False)  # neither changed
    late = teamenvs.make("commons_v0")
    late.reset(seed=3)
    late.record_to(EpisodeRecorder(tmp_path / "late.jsonl"))
    with pytest.raises(ValueError, match="holds no episode: attach it to the env before its reset"):
        late.step({a: "wait" for a in late.agents})
    assert late.step_count == 0
    first.step({a: "wait" for a in first.agents})  # the log's own episode goes on
    recorder.close()
    assert [r["type"] for r in read_log(tmp_path / "one.jsonl")] == ["header", "reset", "step", "step"]
    lines = (tmp_path / "one.jsonl").read_text().splitlines()
    (tmp_path / "two.jsonl").write_text("\n".join(lines + lines[:2]) + "\n")  # a log written before: two episodes
    with pytest.raises(LogError, match=r"two\.jsonl:5: type: a second header: a log holds one episode"):
        read_log(tmp_path / "two.jsonl")
