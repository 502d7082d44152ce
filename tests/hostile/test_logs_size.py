"""Logs too large to be real: reading one takes bounded time and memory and ends in a clear `LogError`.

Found by an audit: a 3 MB `.jsonl.gz` (a header line, then 3 GiB of newlines) made `replay` and
`report` die with a MemoryError traceback, and `replay /dev/zero` was killed for memory. `read_log`
now reads a chunk at a time and refuses more than `MAX_LOG_BYTES` of text, `MAX_LOG_LINES` lines
or `MAX_LOG_VALUES` values, and devices. Most tests lower the bounds, so that the files stay small.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from benchmarks.report import build_report
from teamenvs.cli import main
from teamenvs.core import recorder
from teamenvs.core.recorder import LogError, dumps, read_log

ROOT = Path(__file__).resolve().parents[2]
HEADER = {"type": "header", "env_id": "day_trader_v0", "version": "0", "seed": 0, "agents": ["A"]}
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


def bomb(path: Path, mib: int, unit: bytes = b"\n") -> Path:
    """A gzip log: the header line, then `mib` MiB of `unit` over and over, compressed about 1000:1 (no end)."""
    head = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    start = head.compress((dumps(HEADER) + "\n").encode()) + head.flush(zlib.Z_FULL_FLUSH)
    block = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    piece = block.compress(unit * (2**20 // len(unit))) + block.flush(zlib.Z_FULL_FLUSH)  # the same bytes each time
    path.write_bytes(GZIP_HEADER + start + piece * mib)
    return path


@pytest.fixture
def small_bounds(monkeypatch):
    """Bounds of 1 MiB, 100 lines and 1,000 values."""
    monkeypatch.setattr(recorder, "MAX_LOG_BYTES", 2**20)
    monkeypatch.setattr(recorder, "MAX_LOG_LINES", 100)
    monkeypatch.setattr(recorder, "MAX_LOG_VALUES", 1000)


def refused(path: Path, why: str, line: int | None = None) -> LogError:
    with pytest.raises(LogError) as caught:
        read_log(path)
    assert why in str(caught.value) and caught.value.line == line, str(caught.value)
    return caught.value


def replay_limited(path: str | Path) -> subprocess.CompletedProcess:
    """`teamenvs replay path` in a Python of 2 GiB of address space: a reader without bounds fails there
    with a MemoryError, rather than running this machine out of memory."""
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
            "from teamenvs.cli import main; sys.exit(main(['replay', sys.argv[1]]))")
    return subprocess.run([sys.executable, "-c", code, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_audits_gzip_bomb_is_refused_in_bounded_memory(tmp_path):
    """The audit's file at full size: 3 MB compressed, 3 GiB of newlines."""
    path = bomb(tmp_path / "bomb.jsonl.gz", 3 * 1024)
    assert path.stat().st_size < 4_000_000
    done = replay_limited(path)
    assert (done.returncode, done.stderr) == (2, f"error: {path}: size: larger than 512 MiB decompressed, "
                                                 "so this is not a teamenvs episode log (or a damaged one)\n"), done.stderr[-2000:]


def test_a_gzip_bomb_is_refused_by_replay_and_left_out_by_report(small_bounds, tmp_path, capsys):
    (tmp_path / "logs").mkdir()
    path = bomb(tmp_path / "logs" / "bomb.jsonl.gz", 3)
    error = refused(path, "size: larger than 1 MiB decompressed, so this is not a teamenvs episode log")
    assert error.field == "size"
    for argv in (["replay", str(path)], ["replay", str(path), "--html", str(tmp_path / "bomb.html")]):
        assert main(argv) == 2
        assert capsys.readouterr().err == f"error: {error}\n"
    assert not (tmp_path / "bomb.html").exists()
    (tmp_path / "logs" / "ok.jsonl").write_text(dumps(HEADER) + "\n", encoding="utf-8")
    out = build_report(tmp_path, plots=False).summary()
    assert "1 log(s) left out" in out and str(error) in out


def test_a_plain_log_over_the_bound_is_refused_before_it_is_read(small_bounds, tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_bytes((dumps(HEADER) + "\n").encode() + b"\n" * 2**20)
    refused(path, "size: larger than 1 MiB, so this is not a teamenvs episode log")
    path.write_bytes((dumps(HEADER) + "\n").encode().ljust(2**20, b"\n"))  # exactly the bound: read
    assert read_log(path) == [HEADER]


def test_too_many_lines_or_values_are_refused(small_bounds, tmp_path):
    lines = tmp_path / "lines.jsonl"
    lines.write_text(dumps(HEADER) + "\n" + "{}\n" * 100, encoding="utf-8")
    refused(lines, "size: more than 100 lines", line=101)
    lines.write_text(dumps(HEADER) + "\n" + "{}\n\n" * 99, encoding="utf-8")  # blank lines do not count
    assert len(read_log(lines)) == 100
    values = tmp_path / "values.jsonl.gz"
    values.write_bytes(gzip.compress((dumps(HEADER) + "\n" + json.dumps({"type": "note", "x": [[]] * 20_000}) + "\n").encode()))
    refused(values, "size: more than 1,000 JSON values", line=2)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_devices_are_refused(tmp_path):
    done = replay_limited("/dev/zero")
    assert (done.returncode, done.stderr) == (2, "error: /dev/zero: file: not a regular file (a device, pipe or socket), not an episode log file\n"), done.stderr[-2000:]


def test_lines_across_chunks_and_cuts_read_as_before(tmp_path):
    """Lines longer than a chunk, blank runs and a cut, read a chunk at a time, as from the whole text."""
    long = {"type": "step", "step": 1, "agents": {"A": {"observation": "x" * (3 * 2**20 + 7)}}, "events": [], "done": False}
    text = "".join(dumps(r) + "\n" + "\n" * n for n, r in enumerate([HEADER, long, *({"type": "note", "n": i} for i in range(3000))]))
    for name, data in (("a.jsonl", text.encode()), ("a.jsonl.gz", gzip.compress(text.encode()))):
        path = tmp_path / name
        path.write_bytes(data)
        records = read_log(path)
        assert records == [json.loads(line) for line in text.split("\n") if line]
    path.write_bytes(gzip.compress(text.encode())[:-20])  # cut: every whole line up to the cut
    cut = read_log(path)
    assert cut == records[:len(cut)] and len(cut) > 2000


def test_a_bad_line_in_a_damaged_gzip_stream_is_reported_as_gzip_damage(tmp_path):
    """Lines are parsed as the stream is read; damage to the stream, found at its end, is still what is said."""
    data = bytearray(gzip.compress((dumps(HEADER) + "\nnot json\n" + "{}\n" * 100).encode()))
    data[-8] ^= 1  # the checksum
    path = tmp_path / "crc.jsonl.gz"
    path.write_bytes(bytes(data))
    refused(path, "gzip: damaged: checksum mismatch")


def test_compare_logs_says_which_log_is_too_large_and_compares_the_rest(tmp_path, small_bounds, capsys):
    from benchmarks import compare_logs

    for side in ("a", "b"):
        (tmp_path / side / "logs").mkdir(parents=True)
        (tmp_path / side / "logs" / "ok.jsonl").write_text(dumps(HEADER) + "\n", encoding="utf-8")
        bomb(tmp_path / side / "logs" / "big.jsonl.gz", 2)
    assert compare_logs.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    out = capsys.readouterr().out
    assert "unreadable: big.jsonl: " in out and "larger than 1 MiB decompressed" in out
    assert "1 episode log(s) byte-identical, 1 difference(s)" in out


def test_a_pipe_or_a_folder_is_refused_at_once(tmp_path):
    """A named pipe with no writer made read_log wait for ever; a folder got the devices' message."""
    import time

    pipe = tmp_path / "pipe.jsonl"
    os.mkfifo(pipe)
    started = time.monotonic()
    refused(pipe, "file: not a regular file (a device, pipe or socket), not an episode log file")
    assert time.monotonic() - started < 5
    (tmp_path / "folder.jsonl").mkdir()
    refused(tmp_path / "folder.jsonl", "file: a folder, not an episode log file")
