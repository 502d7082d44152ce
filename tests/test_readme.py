"""Every command the README and the docs pages show is run here, in reading order, in a scratch folder.

The pages are README.md, then the docs it links (`DOCS`, in the order a reader follows
them); `docs/local-models.md` is left out: its commands need a llama.cpp server with a
downloaded model. Commands come from the pages themselves (code blocks and inline code),
so a command added there is picked up without touching this file; syntax summaries (with `<...>`, `[...]`, `|`
or an upper-case placeholder such as DIR) are skipped. Four rewrites keep the run offline
and within CI time, and each is said where it happens:
- a command aimed at a real endpoint (OpenAI, Ollama, vLLM) runs against the built-in
  server with its `random-valid` model instead;
- `python -m benchmarks.X` commands get their own quick flags appended (argparse keeps the
  last value), so the README's flags are parsed and the script prints its tables;
- `compile` builds one module into a scratch folder (`--dir`, `--only teamenvs.core.view`): the whole engine takes
  minutes, and the suite runs on the source (test_compiled.py checks what a compiled module changes: nothing);
- `bench --suite paper` runs with `--seeds 1`; `bench --suite llm` at a real endpoint runs
  its suite checks and stops before the episodes (its LLM episodes are the README's
  job to describe, not CI's to pay for; the LLM bench path runs end to end in test_bench.py).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace


import pytest

from teamenvs.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *(ROOT / "docs" / name for name in (
    "cli.md", "benchmarks.md", "python.md", "llm.md", "rl/README.md", "envs/day_trader_v0.md", "envs/shape_factory_v0.md",
    "envs/commons_v0.md", "envs/search_rescue_v0.md", "envs/map_task_v0.md", "envs/hidden_profile_v0.md",
    "envs/job_fair_v0.md", "performance.md", "architecture.md"))]
RUN_ELSEWHERE = {ROOT / "docs" / "local-models.md"}  # needs a local llama.cpp server


def page_texts() -> list[tuple[Path, str]]:
    return [(page, page.read_text(encoding="utf-8")) for page in DOCS]


def text_of(page: Path) -> str:
    return page.read_text(encoding="utf-8")

BENCH_QUICK = {
    "search_rescue": ["--seeds", "1", "--only", "table3"],
    "map_task": ["--seeds", "1", "--seconds", "0.2"],
    "job_fair": ["--quick"],
    "hidden_profile": ["--seeds", "1", "--seconds", "0.2"],
    "shape_factory": ["--seeds", "1", "--seconds", "0.2"],
    "llm_loop": ["--latency-ms", "20", "--steps", "2", "--episodes", "2", "--in-process", "--sizes", "1", "--rounds", "1"],
    "memory": ["--sizes", "2000", "--queries", "5", "--loop-queries", "1"],
    "speed_social_dilemma": ["--seconds", "0.2"],
    "perf": ["--quick"],
    "profile": ["--seconds", "0.2", "--top", "5"],
    "local_model": ["--model", "random-valid", "--constrain", "json", "--envs", "day_trader_v0"],  # + the built-in server's URL
}
PLACEHOLDER = re.compile(r"<|\[|\||(?:^|\s)(?:DIR|LOG|OUT|URL|M|N)(?:\s|$)")


def page_commands() -> list[tuple[Path, str]]:
    """(page, command) for every concrete `teamenvs ...` and `python -m benchmarks...` command, in reading order.

    A command shown on more than one page runs on the first; a page's commands never depend on another page's.
    """
    commands: list[tuple[Path, str]] = []
    seen: set[str] = set()
    for page, text in page_texts():
        found: list[tuple[int, str]] = []
        for block in re.finditer(r"```(\w*)\n(.*?)```", text, re.S):
            if block.group(1) not in ("", "bash", "sh", "shell"):
                continue
            offset = block.start(2)
            for line in block.group(2).splitlines(keepends=True):
                # `python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/teamenvs bench ...` runs its last part
                for part in line.split("  #")[0].split("&&"):
                    part = part.strip().removeprefix(".venv/bin/")
                    if part.startswith("teamenvs "):
                        found.append((offset, part))
                offset += len(line)
        for inline in re.finditer(r"`((?:teamenvs |python -m benchmarks\.)[^`]*)`", text):
            found.append((inline.start(), " ".join(inline.group(1).split())))
        for _, command in sorted(found):
            if not PLACEHOLDER.search(command) and command not in seen:
                seen.add(command)
                commands.append((page, command))
    return commands


def readme_commands() -> list[str]:
    return [command for _, command in page_commands()]


def yaml_example() -> str:
    blocks = [b for _, text in page_texts() for b in re.findall(r"```yaml\n(.*?)```", text, re.S)]
    assert len(blocks) == 1, "the docs show one suite file"
    return blocks[0]


def test_every_docs_page_is_reached_and_every_link_resolves():
    """Each page under docs/ is linked from the README or a page it links, and every relative link points at a file."""
    pages = set((ROOT / "docs").rglob("*.md")) | {README}
    linked = {README}
    for page in sorted(pages):
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            assert path.exists(), f"{page.relative_to(ROOT)} links {target}, which does not exist"
            linked |= {path} if path.is_file() else set(path.glob("*.md"))
    assert pages - linked == set(), f"pages nobody links: {sorted(str(p.relative_to(ROOT)) for p in pages - linked)}"
    assert set(DOCS) | RUN_ELSEWHERE | set((ROOT / "docs" / "rl").glob("*_v0.md")) == pages, "a new docs page: add it to DOCS"
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200, "the README is the newcomer's first page: keep it short"


def _target_rows(text: str) -> list[list[str]]:
    """The rows of a page's `| target | measured | met |` table, as cells."""
    table = re.search(r"^\| target \| measured \| met \|\n\|---\|---\|---\|\n((?:\|.*\n)+)", text, re.M)
    assert table, "no speed table"
    return [[cell.strip() for cell in row.strip().strip("|").split(" | ")] for row in table.group(1).splitlines()]


def test_the_readmes_speed_table_is_the_latest_runs():
    """The README's speed table is docs/performance.md's summary of the latest full run, shortened: the same targets in
    the same order, each measured and met cell the start of the docs' (which add the run before's figures and why), so a
    new run's figures cannot reach one page and not the other."""
    readme, docs = _target_rows(text_of(README)), _target_rows(text_of(ROOT / "docs" / "performance.md"))
    assert [row[0] for row in readme] == [row[0] for row in docs]
    for short, full in zip(readme, docs):
        assert len(short) == len(full) == 3, short
        assert full[1].startswith(short[1]) and full[2].startswith(short[2]), (short, full)
        assert re.search(r"\d", short[1]), short  # a figure, not only words


def test_the_readme_lists_the_main_commands():
    commands = readme_commands()
    for expected in ("teamenvs bench --suite smoke --out results/smoke", "teamenvs report results/smoke",
                     "teamenvs bench --suite paper --out results/paper", "python -m benchmarks.perf"):
        assert expected in commands
    assert any(c.startswith("teamenvs replay") and "--html" in c for c in commands)
    assert any("api.openai.com" in c for c in commands) and any("11434" in c for c in commands)


def _offline(argv: list[str], server_url: str) -> list[str]:
    """A command for a real endpoint, pointed at the built-in server's `random-valid` model instead."""
    out = list(argv)
    if "--base-url" in out:
        out[out.index("--base-url") + 1] = server_url
        out[out.index("--model") + 1] = "random-valid"
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_serve_llm() -> None:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "teamenvs.cli", "serve-llm", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as reply:
                    body = reply.read().decode()
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.2)
        assert "random-valid" in body
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
@pytest.mark.parametrize("page", DOCS, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_readme_command_runs(page, tmp_path, monkeypatch, capsys, server):
    """One page at a time (so the pages spread over the test workers), each in its own scratch folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cooperation_study.yaml").write_text(yaml_example(), encoding="utf-8")
    ran = []
    commands = [command for on, command in page_commands() if on == page]
    for command in commands:
        argv = shlex.split(command)
        if argv[0] == "python":
            module = argv[2].split(".", 1)[1]
            assert module in BENCH_QUICK, f"README names a benchmark this test does not know how to run quickly: {command}"
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            served = ["--base-url", server.url] if module == "local_model" else []  # not a llama.cpp server: the built-in one
            proc = subprocess.run([sys.executable, *argv[1:], *BENCH_QUICK[module], *served], capture_output=True, text=True,
                                  cwd=tmp_path, env=env, timeout=300)
            assert proc.returncode == 0, f"{command}\n{proc.stderr[-2000:]}"
            assert "|---" in proc.stdout, f"{command} printed no table"
            ran.append(command)
            continue
        args = argv[1:]
        if args[0] == "serve-llm":
            run_serve_llm()
            ran.append(command)
            continue
        args = _offline(args, server.url)
        if args[0] == "run" and "--log-dir" not in args:
            args += ["--log-dir", str(tmp_path / "runs")]
        if args[:3] == ["bench", "--suite", "paper"]:
            args += ["--seeds", "1"]
        if args[:3] == ["bench", "--suite", "llm"]:
            import benchmarks.bench

            calls = []
            stand_in = SimpleNamespace(failed=[], report_error=None, summary=lambda: "episodes not run here")
            with monkeypatch.context() as patch:
                patch.setattr(benchmarks.bench, "run_bench",
                              lambda suite, out, calls=calls, stand_in=stand_in, **kw: calls.append((suite, out, kw)) or stand_in)
                assert main(args) == 0
            suite, out, kw = calls[0]
            stated = re.search(r"paper grid \(3 seeds, ([\d,]+) episodes", "".join(text for _, text in page_texts()))
            assert stated is not None, "the docs state the llm suite's size"
            assert suite.name == "llm" and suite.needs_model and len(suite.episodes()) == int(stated.group(1).replace(",", ""))
            assert kw["model"] == "random-valid" and kw["base_url"] == server.url and kw["price"] == "0.15,0.60"
            ran.append(command)
            continue
        if args[0] == "compile" and "--status" not in args:
            args += ["--dir", str(tmp_path / "compiled"), "--only", "teamenvs.core.view"]
        code = main(args)
        output = capsys.readouterr()
        assert code == 0, f"{command}\n{output.err[-2000:]}"
        ran.append(command)
        if args[0] == "compile" and "--status" not in args:
            assert "compiled 1 module(s)" in output.out and len(list((tmp_path / "compiled").iterdir())) == 1
        if args[0] == "bench":
            out = tmp_path / args[args.index("--out") + 1]
            assert (out / "report.md").read_text(encoding="utf-8").count("±") > 10
            assert "0 failed" in output.out
            report = (out / "report.md").read_text(encoding="utf-8")
            for table in re.findall(r"(?:^\|.*\|\n)+", text_of(page), re.M):
                if table.splitlines()[0] in report.splitlines():  # an excerpt of this report: it must still be what it prints
                    assert table in report, f"{page.name}'s excerpt of {command}'s report is stale:\n{table}"
        if args[0] == "replay" and "--html" not in args:
            assert "step" in output.out.lower()
        if args[0] == "replay" and "--html" in args:
            assert (tmp_path / args[args.index("--html") + 1]).stat().st_size > 10_000
    assert len(ran) == len(commands)


# the heavy libraries of the `rl` extra (pyproject.toml), never installed for the tests
RL_EXTRA_MODULES = ("torch", "torchrl", "ray", "stable_baselines3", "sb3_contrib")


def needs_missing_extra(block: str) -> bool:
    """Whether a Python block imports a module of the `rl` extra that is not installed here."""
    imported = set(re.findall(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", block, re.M))
    return any(m in imported and importlib.util.find_spec(m) is None for m in RL_EXTRA_MODULES)


def test_needs_missing_extra_reads_the_imports():
    assert needs_missing_extra("from torchrl.envs.libs.pettingzoo import PettingZooWrapper") == (importlib.util.find_spec("torchrl") is None)
    assert not needs_missing_extra("import numpy as np, teamenvs\nx = 'torchrl'")


def test_the_python_examples_run(tmp_path, monkeypatch, server):
    """Each page's Python blocks, in order, in one namespace per page; the OpenAI model name runs against the built-in server."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    pages = 0
    usage = None
    for page, text in page_texts() + [(p, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "docs" / "rl").glob("*_v0.md"))]:
        blocks = re.findall(r"```python\n(.*?)```", text, re.S)
        namespace: dict = {}
        for block in blocks:
            if needs_missing_extra(block):  # e.g. the TorchRL example, where the `rl` extra is not installed (CI)
                continue
            exec(compile(block.replace('"gpt-4o-mini"', '"random-valid"'), str(page.relative_to(ROOT)), "exec"), namespace)
        pages += bool(blocks)
        if "result" in namespace and getattr(namespace["result"], "usage", None):
            usage = namespace["result"].usage
    assert pages >= 5
    assert usage is not None and usage["total"]["calls"] > 0
    assert list((tmp_path / "runs").glob("*.jsonl"))
