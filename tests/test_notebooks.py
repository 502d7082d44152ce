"""The notebooks in notebooks/ run top to bottom (so they never rot) and are committed without outputs.

Each notebook is executed with nbclient in a fresh kernel (`python3`, which resolves to this
interpreter: checked), in an empty working folder, with TMPDIR pointing into the test's
temporary folder, offline (conftest unsets OPENAI_BASE_URL; the kernel inherits the
environment). A cell that raises fails the test with its traceback (CellExecutionError).
Besides "no errors", the tests check what a reader would see, and a check cell appended to the
in-memory copy reports the notebook's final state as JSON.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
QUICKSTART = NOTEBOOKS / "01_quickstart.ipynb"
ANALYSIS = NOTEBOOKS / "02_benchmark_analysis.ipynb"
MARK = "__NOTEBOOK_CHECK__"


def run_notebook(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, check: str) -> tuple[Any, dict[str, Any], Path]:
    """Execute `path` with `check` (an expression giving a JSON-able dict) appended; returns the
    executed notebook, the check's dict and the (empty, unless the notebook wrote there) working folder."""
    nb = nbformat.read(str(path), as_version=4)
    nb.cells.append(new_code_cell(f"import json as _json, sys as _sys\nprint({MARK!r} + _json.dumps({check}, default=str))"))
    work, temp = tmp_path / "cwd", tmp_path / "tmp"
    work.mkdir()
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))  # the notebooks' tempfile.mkdtemp() folders land here
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))  # no kernel history in the home directory
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.delenv("MPLBACKEND", raising=False)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code_cells), "a code cell did not run"
    assert not [o for c in code_cells for o in c.outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in code_cells[-1].outputs if o.output_type == "stream")
    assert MARK in text, text
    state = json.loads(text.split(MARK, 1)[1].strip())
    assert state["prefix"] == sys.prefix, f"the kernel ran {state['executable']}, not this environment's {sys.executable}"
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


# ---------------------------------------------------------------------- committed files
@pytest.mark.parametrize("path", [QUICKSTART, ANALYSIS], ids=lambda p: p.name)
def test_committed_without_outputs(path):
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert code_cells and any(c.cell_type == "markdown" for c in nb.cells)
    for cell in code_cells:
        assert cell.outputs == [], f"cell {cell.get('id')} has outputs: clear them before committing"
        assert cell.execution_count is None, f"cell {cell.get('id')} has an execution count: clear it before committing"
        assert "execution" not in cell.metadata
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw["nbformat"] == 4


# ---------------------------------------------------------------------- executed
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
    assert "re-simulated: every observation matches the log" in text and "== step 3/45" in text
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


def test_benchmark_analysis_runs(tmp_path, monkeypatch):
    check = ('{"prefix": _sys.prefix, "executable": _sys.executable, "out_dir": str(out_dir), "rows": len(df), '
             '"complete": int((df["status"] == "complete").sum()), "episodes": len(suite.episodes()), '
             '"failed": len(outcome.failed), "skipped_again": again.skipped, "plots": [p.name for p in plots]}')
    nb, state, work = run_notebook(ANALYSIS, tmp_path, monkeypatch, check)

    # the suite ran completely, and the second run resumed (skipped everything)
    assert state["failed"] == 0
    assert state["rows"] == state["complete"] == state["episodes"] == state["skipped_again"] > 0
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
