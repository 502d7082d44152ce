"""The notebooks in notebooks/ are committed with their outputs, and run top to bottom here (so they never rot).

Committed: every code cell ran, in order, in one kernel, and shows what it printed, returned or drew; no cell
failed or warned; the outputs hold no temporary or home paths and no timing metadata, so that re-executing a
notebook changes its file only where its results change. Refresh the saved outputs after changing a notebook or
what it shows with

    .venv/bin/python tests/test_notebooks.py                 # every notebook
    .venv/bin/python tests/test_notebooks.py 03_llm_team_vs_baselines.ipynb

which executes each one as the tests do and saves it with its outputs.

Executed: each notebook runs with nbclient in a fresh kernel (`python3`, which resolves to this interpreter:
checked), in an empty working folder, with TMPDIR pointing into the test's temporary folder, offline (conftest
unsets OPENAI_BASE_URL; the kernel inherits the environment). A cell that raises fails the test with its traceback
(CellExecutionError). Besides "no errors", the tests check what a reader would see, and a check cell appended to
the in-memory copy reports the notebook's final state as JSON.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
QUICKSTART = NOTEBOOKS / "01_quickstart.ipynb"
ANALYSIS = NOTEBOOKS / "02_benchmark_analysis.ipynb"
LLM_VS_BASELINES = NOTEBOOKS / "03_llm_team_vs_baselines.ipynb"
ALL = [QUICKSTART, ANALYSIS, LLM_VS_BASELINES]
MARK = "__NOTEBOOK_CHECK__"
METADATA = {  # the notebook metadata kept on saving: no Python version or other detail of the machine that ran it
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python", "pygments_lexer": "ipython3"},
}
MAX_PNG_BYTES = 150_000  # one figure; at 72-80 dpi they are 20-90 KB
MAX_NOTEBOOK_BYTES = 600_000


# ---------------------------------------------------------------------- executing
def kernel_env(tmp: Path) -> dict[str, str]:
    """The environment variables a notebook runs with (the kernel inherits them): its temporary files, IPython's
    and Jupyter's state and the LLM response cache under `tmp`. Those in UNSET are removed: offline, the notebooks'
    default model, matplotlib's inline backend."""
    return {"TMPDIR": str(tmp / "tmp"), "IPYTHONDIR": str(tmp / "ipython"), "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
            "TEAMENVS_CACHE": str(tmp / "llm-cache")}


UNSET = ("MPLBACKEND", "OPENAI_BASE_URL", "TEAMENVS_MODEL")


def execute(nb: Any, tmp: Path) -> Path:
    """Execute `nb` in place with its working folder and temporary folder under `tmp` (the caller has set the
    environment from `kernel_env`); returns the working folder."""
    work = tmp / "cwd"
    work.mkdir()
    (tmp / "tmp").mkdir()
    NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False, resources={"metadata": {"path": str(work)}}).execute()
    return work


def run_notebook(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, check: str) -> tuple[Any, dict[str, Any], Path]:
    """Execute `path` with `check` (an expression giving a JSON-able dict) appended; returns the
    executed notebook, the check's dict and the (empty, unless the notebook wrote there) working folder."""
    nb = nbformat.read(str(path), as_version=4)
    nb.cells.append(new_code_cell(f"import json as _json, sys as _sys\nprint({MARK!r} + _json.dumps({check}, default=str))"))
    for name, value in kernel_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    for name in UNSET:
        monkeypatch.delenv(name, raising=False)
    work = execute(nb, tmp_path)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code_cells), "a code cell did not run"
    assert not [o for c in code_cells for o in c.outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in code_cells[-1].outputs if o.output_type == "stream")
    assert MARK in text, text
    state = json.loads(text.split(MARK, 1)[1].strip())
    assert state["prefix"] == sys.prefix, f"the kernel ran {state['executable']}, not this environment's {sys.executable}"
    nb.cells.pop()  # the check cell: what is left is what would be saved
    assert_clean_outputs(nb, path.name, tmp_path)
    committed = nbformat.read(str(path), as_version=4)
    for cell, saved in zip(nb.cells, committed.cells, strict=True):
        if cell.cell_type == "code":  # what a reader sees without running it is what running it prints
            executed = {"outputs": coalesce_streams(cell.outputs)}  # as saving writes them
            assert output_strings_of([executed]) == output_strings_of([saved]), (
                f"{path.name} cell {cell.get('id')}: the committed outputs are stale; save it with python tests/test_notebooks.py")
    return nb, state, work


def outputs_of(cell: Any) -> tuple[str, list[dict[str, Any]]]:
    """(everything printed or returned as text, the rich outputs) of one cell."""
    text, rich = [], []
    for out in cell.outputs:
        if out.output_type == "stream":
            text.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            text.append(out.data.get("text/plain", ""))
            rich.append(out.data)
    return "".join(text), rich


def cell_with(nb: Any, source: str) -> Any:
    matches = [c for c in nb.cells if c.cell_type == "code" and source in c.source]
    assert len(matches) == 1, f"{len(matches)} code cells contain {source!r}"
    return matches[0]


def all_text(nb: Any) -> str:
    return "\n".join(outputs_of(c)[0] for c in nb.cells if c.cell_type == "code")


# ---------------------------------------------------------------------- what a saved notebook may hold
def output_strings(nb: Any) -> list[str]:
    """Every text of every output (streams, text/plain, HTML, Markdown, tracebacks): what is searched for paths."""
    return output_strings_of(nb.cells)


def output_strings_of(cells: list[Any]) -> list[str]:
    found = []
    for cell in cells:
        for out in cell.get("outputs", []):
            found.append(out.get("text", ""))
            found += [v for k, v in sorted(out.get("data", {}).items()) if isinstance(v, str) and not k.startswith("image/")]
            found += out.get("traceback", [])
    return found


def assert_clean_outputs(nb: Any, name: str, *scratch: Path) -> None:
    """No cell failed or wrote to stderr; every code cell has outputs and a run number, 1, 2, 3, ... (top to bottom
    in one kernel); no output names a temporary or home folder or this checkout, or an object's memory address."""
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert code_cells and any(c.cell_type == "markdown" for c in nb.cells)
    for i, cell in enumerate(code_cells, 1):
        where = f"{name} cell {cell.get('id')}"
        assert cell.execution_count == i, f"{where}: run number {cell.execution_count}, not {i}: run the notebook top to bottom"
        assert cell.outputs, f"{where} has no output: save the notebook executed (python tests/test_notebooks.py)"
        for out in cell.outputs:
            assert out.output_type != "error", f"{where} failed: {out.get('ename')}: {out.get('evalue')}"
            assert not (out.output_type == "stream" and out.name == "stderr"), f"{where} wrote to stderr: {out.text[:300]}"
            for mime, value in out.get("data", {}).items():
                if mime == "image/png":
                    size = len(base64.b64decode(value))
                    assert size <= MAX_PNG_BYTES, f"{where}: a {size:,}-byte PNG (at most {MAX_PNG_BYTES:,}): lower its dpi or size"
        assert "execution" not in cell.metadata, f"{where} keeps execution timestamps"
    text = "\n".join(output_strings(nb))
    places = {str(Path(p).resolve()) for p in (tempfile.gettempdir(), Path.home(), NOTEBOOKS.parent, *scratch)}
    places |= {str(p) for p in scratch}
    for place in sorted(p for p in places if len(p) > 4):  # not a home folder of "/"
        assert place not in text, f"{name}: an output names the folder {place}"
    assert not re.search(r"(?<![\w/.])/tmp/", text), f"{name}: an output names a path in /tmp"
    assert not re.search(r" at 0x[0-9a-f]{6,}>", text), f"{name}: an output shows an object's memory address (it changes every run)"


# ---------------------------------------------------------------------- committed files
@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_committed_with_outputs(path):
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    assert dict(nb.metadata) == METADATA, "save the notebook with python tests/test_notebooks.py (it keeps only the kernelspec)"
    assert_clean_outputs(nb, path.name)
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw["nbformat"] == 4
    assert path.stat().st_size <= MAX_NOTEBOOK_BYTES, f"{path.name} is {path.stat().st_size:,} bytes: keep its outputs small"


def test_every_notebook_is_tested():
    assert sorted(NOTEBOOKS.glob("*.ipynb")) == sorted(ALL)


def test_committed_results():
    """What a reader sees without running anything: the figures, and the third notebook's CI tables."""
    images = {p.name: [c.get("id") for c in nbformat.read(str(p), as_version=4).cells
                       if any("image/png" in o.get("data", {}) for o in c.get("outputs", []))] for p in ALL}
    assert images[ANALYSIS.name] and images[LLM_VS_BASELINES.name]
    llm = nbformat.read(str(LLM_VS_BASELINES), as_version=4)
    text = all_text(llm)
    for env in ("DayTrader", "Commons"):
        for policy in ("llm-team", "scripted", "random"):
            assert re.search(rf"{env}\s+{policy}\s", text), f"no row {env} / {policy} in the saved CI tables"


# ---------------------------------------------------------------------- executed
@pytest.mark.slow
def test_quickstart_runs(tmp_path, monkeypatch):
    check = ('{"prefix": _sys.prefix, "executable": _sys.executable, "log_dir": str(log_dir), '
             '"logs": sorted(p.name for p in log_dir.iterdir()), "llm_calls": llm_result.usage["total"]["calls"], '
             '"server_requests": server.requests, "scripted": scripted.metrics, "custom_returns": custom.returns}')
    nb, state, work = run_notebook(QUICKSTART, tmp_path, monkeypatch, check)
    text = all_text(nb)

    # an observation, the briefing, the valid actions
    assert "DayTrader, round 1/30, decision phase. You are trader_1" in text
    assert "Commands (one per turn; case does not matter)" in text
    assert "invest group <amount 15-100>" in text
    # stepping by hand: the invalid actions and the errors the agents read next step
    assert "REJECTED: unknown command 'invset group 40'. Did you mean 'invest group <amount 15-100>'?" in text
    assert "amount must be a whole number from 15 to 100 (got 500)" in text
    # the rendered grid before and after 25 scripted steps
    assert "Search and rescue step 0/" in text and "Search and rescue step 25/" in text
    # the scripted episode's metrics dict, returned by the cell
    scripted_text, _ = outputs_of(cell_with(nb, "scripted = agents.run_episode"))
    assert "'mean_final_wealth': 7070.0" in scripted_text and "'cooperation_rate': 1.0" in scripted_text
    assert state["scripted"]["cooperation_rate"] == 1.0 and state["scripted"]["rounds_played"] == 30
    # the replay of the scripted log
    assert "re-simulated: every observation matches the log" in text and "== step 3/48" in text
    # the LLM episode: usage, every call answered by the local server, a rationale from the log
    calls = [int(n) for n in re.findall(r"model calls: (\d+)", text)]
    assert calls and calls[0] > 0
    assert state["llm_calls"] == state["server_requests"] == calls[0]
    assert "'calls': " in outputs_of(cell_with(nb, "LocalLLMServer().start()"))[0]
    assert re.search(r"rationale: \S", text)
    # the custom policy
    assert "is a Policy: True" in text
    assert set(state["custom_returns"]) == {"trader_1", "trader_2", "trader_3"}
    # logs went to a temporary folder, nothing into the working folder
    assert Path(state["log_dir"]).parent == tmp_path / "tmp"
    assert {"day_trader_v0_seed0.jsonl", "day_trader_llm_seed0.jsonl", "day_trader_custom_seed0.jsonl"} <= set(state["logs"])
    assert list(work.iterdir()) == []


@pytest.mark.slow
def test_benchmark_analysis_runs(tmp_path, monkeypatch):
    check = ('{"prefix": _sys.prefix, "executable": _sys.executable, "out_dir": str(out_dir), "rows": len(df), '
             '"complete": int((df["status"] == "complete").sum()), "episodes": len(suite.episodes()), '
             '"failed": len(outcome.failed), "skipped_again": again.skipped, "plots": [p.name for p in plots]}')
    nb, state, work = run_notebook(ANALYSIS, tmp_path, monkeypatch, check)

    # the suite ran completely, and the second run resumed (skipped everything)
    assert state["failed"] == 0
    assert state["rows"] == state["complete"] == state["episodes"] == state["skipped_again"] > 0
    assert f"{state['episodes']} episodes run, 0 skipped, 0 failed" in all_text(nb)
    assert "Commons_survival.png" in state["plots"] and "DayTrader_metrics.png" in state["plots"]
    # the groupby tables (HTML, with mean and sd columns)
    tables = [d["text/html"] for c in nb.cells if c.cell_type == "code" for d in outputs_of(c)[1] if "text/html" in d]
    assert any("<table" in t and "mean_final_wealth" in t and "<th>sd</th>" in t for t in tables)
    assert any("<table" in t and "total_gain" in t for t in tables)
    # the bar chart drawn in the notebook, and a PNG of the report
    _, chart = outputs_of(cell_with(nb, "plt.subplots"))
    assert any("image/png" in d for d in chart), "the bar chart cell showed no image"
    _, report_png = outputs_of(cell_with(nb, "Commons_survival.png"))
    assert any("image/png" in d for d in report_png)
    # the head of report.md, as Markdown
    _, head = outputs_of(cell_with(nb, "display(Markdown(head))"))
    assert any(d.get("text/markdown", "").startswith("# Benchmark report: dilemmas") for d in head)
    # everything under a temporary folder, nothing in the working folder
    assert Path(state["out_dir"]).parent == tmp_path / "tmp"
    assert list(work.iterdir()) == []


@pytest.mark.slow
def test_llm_team_vs_baselines_runs(tmp_path, monkeypatch):
    check = ('{"prefix": _sys.prefix, "executable": _sys.executable, "work_dir": str(work_dir), "model": MODEL, '
             '"offline": offline, "episodes": len(suite.episodes()), "ran": outcome.ran, "failed": len(outcome.failed), '
             '"complete": len(df), "llm_calls": int(df["usage.calls"].sum()), '
             '"ci": ci.to_dict("records"), "paired": paired.drop(columns="excludes 0").to_dict("records"), '
             '"report_md": (out_dir / "report.md").read_text(encoding="utf-8"), "probed": [s["step"] for s in probed], '
             '"memories": len(stored), "kinds": sorted({m.kind for m in stored}), '
             '"personas": [p.to_json() for p in people.values()], "cache": os.environ["TEAMENVS_CACHE"]}')
    nb, state, work = run_notebook(LLM_VS_BASELINES, tmp_path, monkeypatch, check)
    text = all_text(nb)

    # offline, with the built-in server's test double: every LLM call reached it (the bench's and the rerun's)
    assert state["model"] == "random-valid" and state["offline"]
    assert "model 'random-valid', on the built-in offline server (a test double, not a language model)" in text
    assert state["episodes"] == state["ran"] == state["complete"] == 30 and state["failed"] == 0
    assert "30 episodes run, 0 skipped, 0 failed" in text
    requests = [int(n) for n in re.findall(r"requests the offline server answered: (\d+)", text)]
    assert state["llm_calls"] > 0 and requests == [state["llm_calls"]]
    assert Path(state["cache"]) == tmp_path / "llm-cache"  # the environment's cache folder was kept, not replaced

    # the CI table: both envs x three teams, each metric's mean inside its interval, and shown as "mean [lo, hi]"
    cells = {(r["env"], r["policy"], r["metric"]): r for r in state["ci"]}
    for env in ("DayTrader", "Commons"):
        for team in ("llm-team", "scripted", "random"):
            row = cells[(env, team, "return_mean")]
            assert row["n"] == 5 and row["lo"] <= row["mean"] <= row["hi"]
    ci_text, ci_rich = outputs_of(cell_with(nb, 'display(ci_table("DayTrader"))'))
    for env in ("DayTrader", "Commons"):
        for team in ("llm-team", "scripted", "random"):
            assert re.search(rf"{env}\s+{team}\s+5\s+[-\d,.]+ \[[-\d,.]+, [-\d,.]+\]", ci_text), (env, team, ci_text)
    assert len([d for d in ci_rich if "<table" in d.get("text/html", "")]) == 2
    # the scripted baselines are deterministic: their CI is a point; random's return varies over seeds
    assert cells[("DayTrader", "scripted", "return_mean")]["lo"] == cells[("DayTrader", "scripted", "return_mean")]["hi"]
    assert cells[("DayTrader", "random", "return_mean")]["lo"] < cells[("DayTrader", "random", "return_mean")]["hi"]

    # the paired differences: both teams vs scripted in both envs, the same numbers as report.md's paired table
    pairs = {(r["env"], r["policy"], r["metric"]): r for r in state["paired"]}
    assert {(e, p) for e, p, _ in pairs} == {(e, f"{t} − scripted") for e in ("DayTrader", "Commons") for t in ("llm-team", "random")}
    assert "report.md's paired differences match results.csv: True" in text
    report_md = state["report_md"]
    for (env, policy, metric), r in pairs.items():
        if metric.startswith("return"):
            team = policy.split(" ")[0]
            assert re.search(rf"\| baseline \| {team} \| return \| 5 \| [-+\d,.]+ \| \[", report_md)
            assert r["pairs"] == 5
    # in the commons random overfishes and the lake collapses: a difference from scripted the CI excludes 0
    collapse = pairs[("Commons", "random − scripted", "survival_time ↑")]
    assert collapse["difference"] < 0 and collapse["hi"] < 0
    paired_text, paired_rich = outputs_of(cell_with(nb, "shown = paired.assign"))
    assert "llm-team − scripted" in paired_text and "random − scripted" in paired_text and " *" in paired_text
    assert len([d for d in paired_rich if "<table" in d.get("text/html", "")]) == 2

    # the figure: means with CI bars and the paired differences
    _, figure = outputs_of(cell_with(nb, "plt.subplots(2, 4"))
    assert any("image/png" in d for d in figure)

    # personas, probe answers from the log, the memory of a rerun that reproduced the bench's episode
    assert len(set(state["personas"])) == 3
    assert "Think, speak and decide as this person would throughout the task." in " ".join(text.split())  # wrapped
    assert state["probed"] == [1, 6, 11, 16]  # the log counts steps from 1
    assert re.search(r"trader_1: confidence [\d.]+ \| teammates: '[^']+' \| plan: '[^']+'", text)
    probe_text, _ = outputs_of(cell_with(nb, "probe_columns = "))
    assert "probes.confidence.all" in probe_text and "DayTrader" in probe_text and "Commons" in probe_text
    assert "the same actions as the bench's log: True" in text
    assert state["memories"] > 0 and {"observation", "action"} <= set(state["kinds"])
    assert "retrieved for 'Did my teammates invest in the group pool?':" in text

    # everything under a temporary folder, nothing in the working folder
    assert Path(state["work_dir"]).parent == tmp_path / "tmp"
    assert list(work.iterdir()) == []


# ---------------------------------------------------------------------- saving notebooks with their outputs
def coalesce_streams(outputs: list[Any]) -> list[Any]:
    """Consecutive writes to one stream as one output: how the kernel chunked them depends on timing."""
    merged: list[Any] = []
    for out in outputs:
        if out.output_type == "stream" and merged and merged[-1].output_type == "stream" and merged[-1].name == out.name:
            merged[-1].text += out.text
        else:
            merged.append(out)
    return merged


def save_executed(path: Path) -> None:
    """Execute `path` as the tests do (scratch folders, offline) and save it with its outputs and the plain metadata."""
    nb = nbformat.read(str(path), as_version=4)
    with tempfile.TemporaryDirectory(prefix="notebook_") as scratch:
        tmp = Path(scratch)
        saved = dict(os.environ)
        os.environ.update(kernel_env(tmp))
        for name in UNSET:
            os.environ.pop(name, None)
        try:
            execute(nb, tmp)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        nb.metadata = nbformat.from_dict(METADATA)
        for cell in nb.cells:
            cell.metadata.pop("execution", None)
            if cell.cell_type == "code":
                cell.outputs = coalesce_streams(cell.outputs)
        assert_clean_outputs(nb, path.name, tmp)
    nbformat.validate(nb)
    nbformat.write(nb, str(path))
    print(f"saved {path.name} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    names = sys.argv[1:]
    for notebook in [NOTEBOOKS / n for n in names] if names else ALL:
        save_executed(notebook)
