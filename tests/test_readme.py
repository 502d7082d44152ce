"""Every command the README shows is run here, in the README's order, in a scratch folder.

Commands come from the README itself (code blocks and inline code), so a command added
there is picked up without touching this file; syntax summaries (with `<...>`, `[...]`, `|`
or an upper-case placeholder such as DIR) are skipped. Three rewrites keep the run offline
and within CI time, and each is said where it happens:
- a command aimed at a real endpoint (OpenAI, Ollama, vLLM) runs against the built-in
  server with its `random-valid` model instead;
- `python -m benchmarks.X` commands get their own quick flags appended (argparse keeps the
  last value), so the README's flags are parsed and the script prints its tables;
- `bench --suite paper` runs with `--seeds 1`; `bench --suite llm` at a real endpoint runs
  its suite checks and stops before the episodes (its LLM episodes are the README's
  job to describe, not CI's to pay for; the LLM bench path runs end to end in test_bench.py).
"""

from __future__ import annotations

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


from teamenvs.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BENCH_QUICK = {
    "search_rescue": ["--seeds", "1", "--only", "table3"],
    "map_task": ["--seeds", "1", "--seconds", "0.2"],
    "job_fair": ["--quick"],
    "hidden_profile": ["--seeds", "1", "--seconds", "0.2"],
    "shape_factory": ["--seeds", "1", "--seconds", "0.2"],
    "llm_loop": ["--latency-ms", "20", "--steps", "2", "--episodes", "2", "--in-process"],
    "memory": ["--sizes", "2000", "--queries", "5", "--loop-queries", "1"],
    "speed_social_dilemma": ["--seconds", "0.2"],
    "perf": ["--quick"],
}
PLACEHOLDER = re.compile(r"<|\[|\||(?:^|\s)(?:DIR|LOG|OUT|URL|M|N)(?:\s|$)")


def readme_commands() -> list[str]:
    """Concrete `teamenvs ...` and `python -m benchmarks...` commands, in README order, without duplicates."""
    text = README.read_text(encoding="utf-8")
    found: list[tuple[int, str]] = []
    for block in re.finditer(r"```(\w*)\n(.*?)```", text, re.S):
        if block.group(1) not in ("", "bash", "sh", "shell"):
            continue
        offset = block.start(2)
        for line in block.group(2).splitlines(keepends=True):
            if line.startswith("teamenvs "):
                found.append((offset, line.split("  #")[0].strip()))
            offset += len(line)
    for inline in re.finditer(r"`((?:teamenvs |python -m benchmarks\.)[^`]*)`", text):
        found.append((inline.start(), " ".join(inline.group(1).split())))
    commands = []
    for _, command in sorted(found):
        if not PLACEHOLDER.search(command) and command not in commands:
            commands.append(command)
    return commands


def yaml_example() -> str:
    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "the README shows one suite file"
    return blocks[0]


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


def test_every_readme_command_runs(tmp_path, monkeypatch, capsys, server):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cooperation_study.yaml").write_text(yaml_example(), encoding="utf-8")
    ran = []
    for command in readme_commands():
        argv = shlex.split(command)
        if argv[0] == "python":
            module = argv[2].split(".", 1)[1]
            assert module in BENCH_QUICK, f"README names a benchmark this test does not know how to run quickly: {command}"
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            proc = subprocess.run([sys.executable, *argv[1:], *BENCH_QUICK[module]], capture_output=True, text=True,
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
            stand_in = SimpleNamespace(failed=[], summary=lambda: "episodes not run here")
            with monkeypatch.context() as patch:
                patch.setattr(benchmarks.bench, "run_bench",
                              lambda suite, out, calls=calls, stand_in=stand_in, **kw: calls.append((suite, out, kw)) or stand_in)
                assert main(args) == 0
            suite, out, kw = calls[0]
            stated = re.search(r"paper grid \(3 seeds, ([\d,]+) episodes", README.read_text(encoding="utf-8"))
            assert stated is not None, "the README states the llm suite's size"
            assert suite.name == "llm" and suite.needs_model and len(suite.episodes()) == int(stated.group(1).replace(",", ""))
            assert kw["model"] == "random-valid" and kw["base_url"] == server.url and kw["price"] == "0.15,0.60"
            ran.append(command)
            continue
        code = main(args)
        output = capsys.readouterr()
        assert code == 0, f"{command}\n{output.err[-2000:]}"
        ran.append(command)
        if args[0] == "bench":
            out = tmp_path / args[args.index("--out") + 1]
            assert (out / "report.md").read_text(encoding="utf-8").count("±") > 10
            assert "0 failed" in output.out
        if args[0] == "replay" and "--html" not in args:
            assert "step" in output.out.lower()
        if args[0] == "replay" and "--html" in args:
            assert (tmp_path / args[args.index("--html") + 1]).stat().st_size > 10_000
    assert len(ran) == len(readme_commands())


def test_the_python_examples_run(tmp_path, monkeypatch, server):
    """The README's Python blocks, in order, in one namespace; the OpenAI model name runs against the built-in server."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block.replace('"gpt-4o-mini"', '"random-valid"'), "README.md", "exec"), namespace)
    assert namespace["result"].usage["total"]["calls"] > 0
    assert list((tmp_path / "runs").glob("*.jsonl"))
