"""The compiled engine (teamenvs.compiled): which modules it compiles, that it loads a compiled module only for the
source it was compiled from, falls back to the source when a compiled file cannot be loaded, can be turned off, and
gives the same episode log byte for byte. Compiling needs Cython (the dev extra) and a C compiler."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import teamenvs
from teamenvs import compiled
from teamenvs.cli import main

needs_compiler = pytest.mark.skipif(not any(shutil.which(c) for c in ("cc", "gcc", "clang")), reason="no C compiler here")


def run_python(code: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter (the engine's finder is installed once per process, at `import teamenvs`)."""
    full = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full, cwd=cwd, timeout=300)


def test_address_names_the_module_the_source_and_the_engine():
    a = compiled.address("teamenvs.core.env", b"x = 1\n")
    assert a == compiled.address("teamenvs.core.env", b"x = 1\n")
    assert a.startswith("teamenvs.core.env-") and a.endswith(compiled.SUFFIX)
    assert a != compiled.address("teamenvs.core.env", b"x = 2\n")  # an edit gives another file
    assert a != compiled.address("teamenvs.core.view", b"x = 1\n")


def test_package_modules_are_the_hot_modules_and_not_those_that_read_files_beside_them():
    modules = compiled.package_modules()
    for name in ("teamenvs.core.env", "teamenvs.core.recorder", "teamenvs.day_trader.view", "teamenvs.search_rescue.rules",
                 "teamenvs.wrappers.single_agent"):
        assert name in modules and modules[name].suffix == ".py" and modules[name].is_file()
    for name in ("teamenvs.replay", "teamenvs.cli", "teamenvs.compiled", "teamenvs.map_task.library", "teamenvs.hidden_profile.drawing"):
        assert name not in modules
    assert not any(name.endswith("__init__") or ".data." in name for name in modules)


@pytest.fixture(scope="module")
def tiny_package(tmp_path_factory):
    """A package `tpkg` with one module, compiled into a folder: (source root, compiled folder, module source)."""
    if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
        pytest.skip("no C compiler here")
    base = tmp_path_factory.mktemp("tiny")
    (base / "src" / "tpkg").mkdir(parents=True)
    (base / "src" / "tpkg" / "__init__.py").write_text("")
    source = base / "src" / "tpkg" / "mod.py"
    source.write_text("def where():\n    return __file__\n\ndef total(xs):\n    return sum(x * x for x in xs)\n")
    said: list[str] = []
    built = compiled.compile_modules({"tpkg.mod": source}, root=base / "compiled", jobs=1, echo=said.append)
    assert built.compiled == ["tpkg.mod"] and not built.failed, built.summary()
    # a build takes minutes: it says how far it is, in each of its two stages
    assert "  1/1 translated (tpkg.mod)" in said and "  1/1 compiled (tpkg.mod)" in said, said
    again = compiled.compile_modules({"tpkg.mod": source}, root=base / "compiled", jobs=1)
    assert again.up_to_date == ["tpkg.mod"] and not again.compiled  # nothing to do for an unchanged source
    return base / "src", base / "compiled", source


LOAD_TINY = """
import sys, warnings
from pathlib import Path
from teamenvs.compiled import _Finder
warnings.simplefilter("always")
finder = _Finder(Path({root!r}), "tpkg")
sys.meta_path.insert(0, finder)
import tpkg.mod
print(tpkg.mod.where().endswith(".py"), tpkg.mod.total([1, 2, 3]), sorted(finder.loaded))
"""


def test_a_module_is_loaded_compiled_only_while_its_source_is_the_one_compiled(tiny_package):
    src, root, source = tiny_package
    done = run_python(LOAD_TINY.format(root=str(root)), cwd=src)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "14", "['tpkg.mod']"]  # __file__ is the compiled file
    original = source.read_text()
    try:
        source.write_text(original.replace("x * x", "x * x * x"))  # edited after compiling: the source runs
        done = run_python(LOAD_TINY.format(root=str(root)), cwd=src)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["True", "36", "[]"]
    finally:
        source.write_text(original)


def test_a_damaged_compiled_file_is_skipped_for_the_source_with_a_warning(tiny_package, tmp_path):
    src, root, source = tiny_package
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / compiled.address("tpkg.mod", source.read_bytes())).write_bytes(b"\x7fELF not really")
    done = run_python(LOAD_TINY.format(root=str(damaged)), cwd=src)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "14", "[]"]
    assert "could not be loaded" in done.stderr and "loading its source" in done.stderr


@needs_compiler
def test_a_compiled_teamenvs_module_gives_the_same_log_and_can_be_turned_off(tmp_path):
    root = tmp_path / "compiled"
    name = "teamenvs.day_trader.rules"
    built = compiled.compile_modules({name: compiled.package_modules()[name]}, root=root, jobs=1)
    assert built.compiled == [name], built.summary()
    episode = """
    import teamenvs, teamenvs.compiled as c
    from agents import make_policies
    from teamenvs.core.recorder import EpisodeRecorder
    env = teamenvs.make("day_trader_v0", preset="group_size_6")
    policies = make_policies(env, "random", seed=3)
    with env.recording(EpisodeRecorder({path!r}, keep=False)) as recorder:
        obs, infos = env.reset(seed=3)
        while env.agents:
            obs, *_, infos = env.step({{a: policies[a].act(obs[a], infos[a]) for a in env.agents if infos[a]["needs_action"]}})
        recorder.close()
    print(sorted(c.loaded()))
    """
    logs = {}
    for label, extra in (("on", {compiled.ENV_SWITCH: "1"}), ("off", {compiled.ENV_SWITCH: "0"})):  # whatever the caller set
        path = tmp_path / f"{label}.jsonl"
        done = run_python(episode.format(path=str(path)), env={compiled.ENV_DIR: str(root), **extra})
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.strip().replace("'", '"')) == ([name] if label == "on" else [])
        logs[label] = path.read_bytes()
    assert logs["on"].count(b"\n") > 40 and logs["on"] == logs["off"]


def test_status_says_what_is_compiled(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(compiled.ENV_DIR, str(tmp_path))
    assert main(["compile", "--status"]) == 0
    out = capsys.readouterr().out
    total = len(compiled.package_modules())
    assert f"0 of {total} modules compiled from their current source, in {tmp_path}" in out


def test_compiling_without_cython_says_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "Cython", None)  # `import Cython` fails
    assert main(["compile", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "needs Cython" in err and 'pip install "teamenvs[compiled]"' in err
    assert not any(tmp_path.iterdir())


def test_bad_jobs_is_a_clear_error(tmp_path, capsys):
    assert main(["compile", "--dir", str(tmp_path), "--jobs", "0"]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err


def test_the_engine_in_this_process_is_named():
    # the suite runs on the source unless TEAMENVS_COMPILED_DIR holds compiled modules: either way it says which
    words = compiled.engine()
    assert words == "source (Python)" if not compiled.loaded() else words.startswith("compiled (")
    assert teamenvs.compiled is compiled


def test_progress_is_said_about_every_tenth_of_the_way_and_at_the_end():
    said: list[str] = []
    step = compiled._progress(77, said.append, "translated")
    for k in range(77):
        step(f"m{k}")
    assert said[0] == "  7/77 translated (m6)" and said[-1] == "  77/77 translated (m76)" and len(said) == 11
    said.clear()
    step = compiled._progress(3, said.append, "compiled")
    for k in range(3):
        step(f"m{k}")
    assert said == ["  1/3 compiled (m0)", "  2/3 compiled (m1)", "  3/3 compiled (m2)"]
