"""`write_whole`: a file written through a temporary file beside it, renamed over it once whole."""

from __future__ import annotations

import sys

import pytest

from teamenvs.core.files import write_whole


def test_the_file_is_written_whole_and_no_temporary_file_is_left(tmp_path):
    target = tmp_path / "results.csv"
    target.write_text("old", encoding="utf-8")
    assert write_whole(target, "new,é\n") == target
    assert target.read_bytes() == "new,é\n".encode("utf-8") and [p.name for p in tmp_path.iterdir()] == ["results.csv"]
    write_whole(target, b"\x00bytes")
    assert target.read_bytes() == b"\x00bytes"


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_one(tmp_path, monkeypatch):
    target = tmp_path / "report.md"
    target.write_text("old", encoding="utf-8")

    def cut(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("teamenvs.core.files.os.replace", cut)
    with pytest.raises(OSError, match="No space left"):
        write_whole(target, "new")
    assert target.read_text(encoding="utf-8") == "old" and [p.name for p in tmp_path.iterdir()] == ["report.md"]


@pytest.mark.skipif(sys.platform == "win32", reason="links")
def test_a_link_in_the_files_place_is_replaced_not_written_through(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("precious", encoding="utf-8")
    link = tmp_path / "results.csv"
    link.symlink_to(precious)
    write_whole(link, "csv")
    assert precious.read_text(encoding="utf-8") == "precious"
    assert not link.is_symlink() and link.read_text(encoding="utf-8") == "csv"
