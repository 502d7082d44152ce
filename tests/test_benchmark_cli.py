"""Every benchmark script's command line refuses a number it cannot use (negative, zero where it counts, NaN, inf, too
large, not a number) when it parses its arguments, with argparse's error and exit status 2, before any work: a bare
`type=int` or `type=float` took them, and then `perf --seconds -1` died of ZeroDivisionError, `llm_loop --speed --rounds 0`
of a TypeError, and `speed_social_dilemma --seconds inf` never ended. The bounded types are `teamenvs.cli`'s."""

from __future__ import annotations

import argparse
import importlib
import sys

import pytest

SCRIPTS = ("perf", "speed_social_dilemma", "llm_loop", "memory", "fuzz", "profile", "hidden_profile", "map_task",
           "search_rescue", "shape_factory", "job_fair", "rl_ppo", "rl_rllib", "rl_torchrl", "local_model", "compare_logs")
BOUNDED = {"whole_number.<locals>.parse", "finite_number.<locals>.parse", "counts"}  # `teamenvs.cli`'s, `llm_loop.counts`
HOSTILE = ("nan", "inf", "-inf", "-1", "-0.5", "abc", "1e400", "")
REQUIRED = {"compare_logs": ["before", "after"], "profile": ["day_trader_v0"]}  # positional arguments a script needs


class _Parsed(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def parser_of(script: str, monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """The parser `benchmarks.<script>.main` builds, caught when it is asked to parse (nothing else of main runs)."""
    module = importlib.import_module(f"benchmarks.{script}")

    def caught(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        raise _Parsed(self)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", caught)
    monkeypatch.setattr(sys, "argv", [script])
    with pytest.raises(_Parsed) as parsed:
        module.main([])
    monkeypatch.undo()
    return parsed.value.parser


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_number_a_benchmark_takes_is_bounded(script, monkeypatch, capsys):
    parser = parser_of(script, monkeypatch)
    numeric = [a for a in parser._actions if a.option_strings and getattr(a.type, "__qualname__", "") in BOUNDED]
    bare = [a.option_strings[0] for a in parser._actions if a.type in (int, float)]
    assert bare == [], f"benchmarks.{script}: unbounded numbers (use teamenvs.cli's whole_number, finite_number, COUNT, SEED, SECONDS)"
    for action in numeric:
        for bad in HOSTILE:
            with pytest.raises(SystemExit) as exited:
                parser.parse_args([action.option_strings[0], bad, *REQUIRED.get(script, [])])
            assert exited.value.code == 2
            error = capsys.readouterr().err
            assert f"argument {'/'.join(action.option_strings)}: expected" in error and "Traceback" not in error
    parser.parse_args(REQUIRED.get(script, []))  # the defaults are in range


def test_the_scripts_with_numbers_have_them_bounded(monkeypatch):
    """The list above holds the scripts whose options are numbers: each has at least one bounded option."""
    counted = {script: sum(getattr(a.type, "__qualname__", "") in BOUNDED for a in parser_of(script, monkeypatch)._actions)
               for script in SCRIPTS}
    assert [s for s, n in counted.items() if n == 0] == []


def test_an_env_id_a_benchmark_does_not_know_is_refused_by_name(capsys):
    from benchmarks import rl_torchrl, speed_social_dilemma

    with pytest.raises(SystemExit) as exited:
        rl_torchrl.main(["--only", "day_trader_v0,nope_v0"])
    assert exited.value.code == 2 and "unknown env id(s) 'nope_v0'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        speed_social_dilemma.main(["--agents", "101"])  # the configs' own bound, in their words
    assert exited.value.code == 2 and "--agents: n_agents must be from 2 to 100, got 101" in capsys.readouterr().err
