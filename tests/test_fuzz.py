"""Fuzzing: hostile action strings (`teamenvs.testing.check_hostile_actions`, which the env contract runs on
every registered env) into a log, the check's own logic, and `benchmarks.fuzz`'s fuzzers of what users hand
the suite.

Each step every agent sends a random input: empty, 100k characters, random unicode with
control characters, JSON-looking text, prompt-injection-looking text, command fragments,
non-strings, or (sometimes) a valid action so that episodes progress. Invariants checked
at every step: `step` never raises; every invalid action has a non-empty error that
appears verbatim in that agent's next observation; every observation lies in the
observation space; rewards are finite floats; the info schema holds.
"""

from __future__ import annotations

import json
import time

import pytest

import teamenvs
from teamenvs.core.recorder import EpisodeRecorder
from teamenvs.testing import check_hostile_actions

def test_fuzz_day_trader_2000_steps(tmp_path):
    env = teamenvs.make("day_trader_v0")
    paths = []

    def next_log():  # logging hostile input must not fail either; each episode in a log of its own
        if env.recorder is not None:
            env.recorder.close()
        paths.append(tmp_path / f"fuzz{len(paths)}.jsonl")
        env.record_to(EpisodeRecorder(paths[-1], keep=False))

    counts = check_hostile_actions("day_trader_v0", seed=0, steps=2_000, env=env, new_episode=next_log)
    env.record_to(None).close()
    lines = [line for path in paths for line in path.read_text(encoding="utf-8").splitlines()]
    records = [json.loads(line) for line in lines]
    assert sum(r["type"] == "step" for r in records) == 2_000 and sum(r["type"] == "header" for r in records) == len(paths) > 1
    assert max(len(line) for line in lines) < 10 * 100_000  # 100k-character actions are clipped in the log
    # the mix really exercised both paths and several episodes
    assert counts["invalid"] > 2_000
    assert counts["valid"] > 1_000
    assert counts["episodes"] >= 40


@pytest.mark.parametrize("mode", [{}, {"obs_type": "both", "action_type": "discrete"}])
def test_the_hostile_action_check_catches_a_step_that_raises(monkeypatch, mode):
    from teamenvs.commons.env import CommonsEnv

    original = CommonsEnv._apply

    def fragile(self, parsed):
        if any(action is None for action in parsed.values()):
            raise KeyError("a refused action broke the rules")
        return original(self, parsed)

    monkeypatch.setattr(CommonsEnv, "_apply", fragile)
    with pytest.raises(AssertionError, match="raised KeyError"):
        check_hostile_actions("commons_v0", seed=0, steps=50, **mode)


def test_the_hostile_action_check_catches_an_error_the_agent_is_not_shown(monkeypatch):
    from teamenvs.core.env import TeamEnv

    monkeypatch.setattr(TeamEnv, "last_action_line", lambda self, agent: "Your last action: (not shown)")
    with pytest.raises(AssertionError, match="is not in its next observation"):
        check_hostile_actions("commons_v0", seed=0, steps=50)


@pytest.mark.parametrize("error", ["", "  ", "x" * 5_000])
def test_the_hostile_action_check_catches_an_unclear_error(monkeypatch, error):
    from teamenvs.core.commands import ActionError

    monkeypatch.setattr(ActionError, "to_json", lambda self: {"ok": False, "kind": self.kind, "command": self.command,
                                                              "error": error})
    with pytest.raises(AssertionError, match="got no clear error"):
        check_hostile_actions("day_trader_v0", seed=0, steps=50)


# ---------------------------------------------------------------------------- benchmarks.fuzz (configs, suites, logs, HTTP)
def test_the_input_fuzzers_find_nothing_in_a_short_run(capsys):
    from benchmarks import fuzz

    assert fuzz.main(["--seed", "3", "--rounds", "25"]) == 0
    out = capsys.readouterr().out
    assert all(f"{name}: 25 inputs, 0 failure(s)" in out for name in fuzz.FUZZERS)


def test_the_config_fuzzer_reports_a_crash_a_hang_and_a_bad_message(monkeypatch):
    """A fuzzer must fail where the standard fails: an exception that is not a clear refusal, no answer in time,
    and a refusal whose message is empty, huge or holds a raw terminal escape."""
    from benchmarks import fuzz
    from teamenvs.core import config

    monkeypatch.setattr(fuzz, "TIME_LIMIT", 0.2)
    assert fuzz._check("x", 1, lambda: 1, (ValueError,)) is None
    assert fuzz._check("x", 1, lambda: (_ for _ in ()).throw(ValueError("clear")), (ValueError,)) is None
    assert "TypeError: boom" in fuzz._check("x", 1, lambda: (_ for _ in ()).throw(TypeError("boom")), (ValueError,)).why
    assert "no answer within 0.2 s" in fuzz._check("x", 1, lambda: time.sleep(1), (ValueError,)).why
    for message, why in (("", "empty"), ("a" * 5000, "5,000 characters"), ("\x1b[2J", "terminal escape")):
        assert why in fuzz._check("x", 1, lambda m=message: (_ for _ in ()).throw(ValueError(m)), (ValueError,)).why

    def broken(name, value, hint):
        raise TypeError("coercion broke")

    monkeypatch.setattr(config, "_coerce", broken)
    failures = fuzz.fuzz_configs(0, 10)
    assert failures and all("TypeError: coercion broke" in f.why and f.fuzzer == "configs" for f in failures)


def test_the_action_fuzzer_reports_a_step_that_raises_in_the_team_env_and_the_single_agent_view(monkeypatch):
    from benchmarks import fuzz
    from teamenvs.core.env import TeamEnv

    original = TeamEnv.step

    def fragile(self, actions):
        if any(not isinstance(a, (str, int)) for a in actions.values()):
            raise OverflowError("a hostile action broke step")
        return original(self, actions)

    monkeypatch.setattr(TeamEnv, "step", fragile)
    failures = fuzz.fuzz_actions(0, 12)
    assert len(failures) >= 10 and all("OverflowError" in f.why and f.fuzzer == "actions" for f in failures)
    assert any("single-agent view" in f.what for f in failures) and any("single-agent view" not in f.what for f in failures)


def test_the_reply_fuzzer_reports_an_escape_and_a_crash(monkeypatch):
    from agents.llm import client as llm_client
    from agents.llm import http
    from benchmarks import fuzz

    monkeypatch.setattr(http, "clip", lambda text, limit=300: "\x1b[2J" + text[:limit])
    monkeypatch.setattr(llm_client, "clip", lambda text, limit=300: "\x1b[2J" + text[:limit])
    failures = fuzz.fuzz_replies(3, 30)
    assert failures and all(f.fuzzer == "replies" for f in failures)
    assert any("a raw terminal escape in the error message" in f.why for f in failures)

    def broken(*args, **kwargs):
        raise KeyError("the reply broke the client")

    monkeypatch.setattr(llm_client, "_classify", broken)
    assert any("KeyError" in f.why for f in fuzz.fuzz_replies(3, 30))


def test_the_model_fuzzer_reports_model_text_reaching_the_terminal_raw_and_a_crash(monkeypatch):
    from agents.llm import policy
    from benchmarks import fuzz
    from teamenvs import replay

    monkeypatch.setattr(replay, "printable", lambda text, **kw: str(text))
    failures = fuzz.fuzz_models(1, 8)
    assert failures and all("a raw terminal escape from the log reached the terminal replay" in f.why for f in failures)
    monkeypatch.undo()

    def broken(self, *args, **kwargs):
        raise IndexError("a reply broke the policy")

    monkeypatch.setattr(policy.LLMPolicy, "aact", broken)
    failures = fuzz.fuzz_models(1, 3)
    assert len(failures) == 3 and all("IndexError: a reply broke the policy" in f.why for f in failures)


def test_the_cli_fuzzer_reports_a_crash_and_a_raw_escape(monkeypatch):
    from benchmarks import fuzz
    from teamenvs import cli

    original = cli._cmd_info

    def fragile(args):
        if args.env_id != "day_trader_v0":
            raise ZeroDivisionError("an argument broke info")
        return original(args)

    monkeypatch.setattr(cli, "_cmd_info", fragile)
    monkeypatch.setattr(fuzz, "CLI_CORPUS", (["info", "day_trader_v0"],))
    failures = fuzz.fuzz_cli(1, 40)
    assert failures and all("ZeroDivisionError: an argument broke info" in f.why for f in failures)
    monkeypatch.setattr(cli, "_cmd_info", lambda args: print(args.env_id) or 0)  # echoes an argument raw
    monkeypatch.setattr(fuzz, "CLI_VALUES", ("\x1b[2J",))
    assert any("a raw terminal escape from an argument" in f.why for f in fuzz.fuzz_cli(1, 40))


def test_the_isolation_fuzzer_reports_a_private_message_read_by_others(monkeypatch):
    from benchmarks import fuzz
    from teamenvs.core.env import TeamEnv

    monkeypatch.setattr(TeamEnv, "_recipients", lambda self, sender, to: [a for a in self.agents if a != sender])
    failures = fuzz.fuzz_isolation(0, 12)
    assert failures and all(f.fuzzer == "isolation" and "private message to" in f.why for f in failures)
