"""Text from logs, configs and models must never drive the terminal, and errors must not echo API keys.

Hardening issue, items 2 and 11: `teamenvs replay` frames, run summaries and `error: ...` lines
show every control character of outside text escaped (`\\x1b`), with and without colours (the
replay's own colour codes are the only escape sequences that reach the terminal); argparse
errors of the `teamenvs` command mask values that look like API keys.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

import agents
import teamenvs
from agents.loop import EpisodeResult
from agents.policy import SyncPolicy
from teamenvs.cli import ERROR_MAX_CHARS, format_summary, main, mask_secrets
from teamenvs.core.text import printable

# Escape sequences a hostile model or log author would try: a window title (OSC), clearing the
# screen (CSI), an 8-bit CSI, a device control string, a carriage return over the line, a bidi override.
ATTACKS = ("\x1b]0;PWNED\x07", "\x1b[2J\x1b[H", "\x9b31mPWNED", "\x1bP+q\x1b\\", "ok\rPWNED", "\u202ePWNED", "\x1b[31mPWNED")
PAYLOAD = "\x1b]0;PWNED\x07\x1b[2J\x9b31m\u202e\x1bP+q\x1b\\"  # every kind at once, no whitespace (lines are collapsed)
KEY = "sk-proj-Zq9vT3xLw8KpR2mN7cYb4HdF"
OWN_COLOUR = re.compile(r"\x1b\[(?:[12]|3[1-6]|0)(?:;(?:[12]|3[1-6]))*m")  # what replay._paint writes


def terminal_controls(text: str) -> list[str]:
    """The characters of `text` that act on a terminal, our own colour codes left out."""
    return [c for c in OWN_COLOUR.sub("", text) if not c.isprintable() and c != "\n"]


class Hostile(SyncPolicy):
    """Says `wait` followed by an escape sequence, with another in its rationale."""

    def __init__(self, attack: str) -> None:
        super().__init__()
        self.attack = attack

    def act(self, observation, info):
        self.last_extras = {"rationale": f"because{self.attack}"}
        return f"wait {self.attack}"


@pytest.fixture(scope="module")
def base_log(tmp_path_factory) -> Path:
    env = teamenvs.make("commons_v0")
    policies = {a: Hostile(PAYLOAD) for a in env.possible_agents}
    result = agents.run_episode(env, policies, seed=0, log_dir=tmp_path_factory.mktemp("hostile"), max_steps=2)
    return Path(result.log_path)


def records_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_log(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def first_step(records: list[dict]) -> dict:
    return next(r for r in records if r["type"] == "step")


def _message(records: list[dict]) -> None:
    step = first_step(records)
    step["events"].append({"type": "message", "sender": next(iter(step["agents"])), "to": None, "message": PAYLOAD})


def _agent_name(records: list[dict]) -> None:
    step = first_step(records)
    name = next(iter(step["agents"]))
    step["agents"][PAYLOAD] = step["agents"].pop(name)


def _invalid_action(records: list[dict]) -> None:
    entry = next(iter(first_step(records)["agents"].values()))
    entry["action"] = {"ok": False, "kind": "unknown", "error": f"no such command{PAYLOAD}"}


def _renamed_everywhere(records: list[dict]) -> None:
    """The first agent named PAYLOAD in the header, every step and the end line's returns (a log that checks: a return
    for an agent the header does not name is an edited log, refused before anything is shown)."""
    name = records[0]["agents"][0]
    records[0]["agents"][0] = PAYLOAD
    for record in records:
        for key in ("agents", "returns"):
            if record["type"] in ("step", "end") and name in (record.get(key) or {}):
                record[key][PAYLOAD] = record[key].pop(name)


def _error_line(records: list[dict]) -> None:
    records[:] = [r for r in records if r["type"] != "end"] + [{"type": "error", "step": 1, "error": PAYLOAD}]


# Where outside text reaches the replay: each edit puts PAYLOAD into one field of a real log.
FIELDS = {
    "raw action and rationale": lambda records: None,
    "global event": lambda records: first_step(records)["events"].append({"type": "note", "text": PAYLOAD}),
    "agent event": lambda records: next(iter(first_step(records)["agents"].values()))["events"].append({"text": PAYLOAD}),
    "message": _message,
    "invalid action error": _invalid_action,
    "agent name": _agent_name,
    "agent renamed everywhere (header, steps, returns)": _renamed_everywhere,
    "header env id": lambda records: records[0].update(env_id=PAYLOAD),
    "header run meta": lambda records: records[0].update(run={"suite": PAYLOAD}),
    "metric name": lambda records: next(r for r in records if r["type"] == "end")["metrics"].update({PAYLOAD: 1}),
    "error line": _error_line,
}


def terminal(monkeypatch):
    """stdout as a terminal (the replay command colours only a terminal), NO_COLOR unset."""
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.mark.parametrize("color", [True, False], ids=["color", "no-color"])
@pytest.mark.parametrize("field", list(FIELDS))
def test_replay_shows_hostile_log_text_escaped(base_log, tmp_path, capsys, monkeypatch, field, color):
    terminal(monkeypatch)
    records = records_of(base_log)
    FIELDS[field](records)
    log = write_log(tmp_path / "edited.jsonl", records)
    assert main(["replay", str(log), *([] if color else ["--no-color"])]) == 0
    out = capsys.readouterr().out
    assert terminal_controls(out) == []
    assert "PWNED" in out and "\\x1b]0;PWNED\\x07" in out  # shown, as visible escapes
    if not color:
        assert "\x1b" not in out
    else:
        assert OWN_COLOUR.search(out)  # our colours still work


@pytest.mark.parametrize("color", [True, False], ids=["color", "no-color"])
@pytest.mark.parametrize("attack", ATTACKS, ids=[ascii(a) for a in ATTACKS])
def test_replay_escapes_every_kind_of_sequence_in_actions_and_rationales(tmp_path, capsys, monkeypatch, attack, color):
    terminal(monkeypatch)
    env = teamenvs.make("commons_v0")
    result = agents.run_episode(env, {a: Hostile(attack) for a in env.possible_agents}, seed=0, log_dir=tmp_path, max_steps=1)
    assert main(["replay", str(result.log_path), *([] if color else ["--no-color"])]) == 0
    out = capsys.readouterr().out
    assert terminal_controls(out) == []
    assert "\x1b" not in OWN_COLOUR.sub("", out)
    shown = printable(" ".join(attack.split()))
    assert f"wait {shown}" in out and f"rationale: because{shown}" in out


def test_replay_escapes_the_file_name(base_log, tmp_path, capsys):
    log = write_log(tmp_path / "ep\x1b]0;PWNED\x07.jsonl", records_of(base_log))
    assert main(["replay", str(log), "--no-color"]) == 0
    out = capsys.readouterr().out
    assert terminal_controls(out) == [] and "ep\\x1b]0;PWNED\\x07.jsonl" in out


def test_run_summary_escapes_agent_and_metric_names(tmp_path):
    result = EpisodeResult(f"env{PAYLOAD}", 0, 3, {f"agent{PAYLOAD}": 1.0}, {f"metric{PAYLOAD}": 2.0, "plain": 1},
                           tmp_path / f"log{PAYLOAD}.jsonl")
    text = format_summary(f"env{PAYLOAD}", f"policy{PAYLOAD}", [result])
    assert terminal_controls(text) == []
    for name in ("env", "policy", "agent", "metric", "log"):
        assert f"{name}{printable(PAYLOAD)}" in text


@pytest.mark.parametrize("attack", ATTACKS, ids=[ascii(a) for a in ATTACKS])
def test_error_lines_are_escaped(tmp_path, capsys, attack):
    missing = tmp_path / f"missing{attack}.jsonl"
    assert main(["replay", str(missing)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: no such episode log")
    assert terminal_controls(captured.err) == [] and f"missing{printable(attack)}.jsonl" in captured.err


@pytest.mark.parametrize("name", ["w" * 20_000 + ".jsonl", "/".join(["d" * 200] * 100) + ".jsonl"], ids=["long name", "long path"])
def test_error_lines_are_bounded(tmp_path, capsys, name):
    assert main(["replay", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err) <= len("error: \n") + ERROR_MAX_CHARS


# ---------------------------------------------------------------------- API keys in argparse errors
ARGV_WITH_KEYS = [
    ["run", "day_trader_v0", "--api-key", KEY],
    ["run", "day_trader_v0", f"--api-key={KEY}"],
    ["run", "day_trader_v0", "--openai-api-key", "hunter2"],
    ["run", "day_trader_v0", "--token", "hunter2"],
    ["run", "day_trader_v0", "--key", "hunter2"],
    ["run", "day_trader_v0", "--seed", KEY],
    ["run", "day_trader_v0", KEY],
    [KEY],
    ["bench", "--suite", "smoke", "--out", "results/x", "--api-key", KEY],
    ["replay", "ep.jsonl", "--step", "Zq9vT3xLw8KpR2mN7cYb4HdF"],
]


@pytest.mark.parametrize("argv", ARGV_WITH_KEYS, ids=[" ".join(a)[:50] for a in ARGV_WITH_KEYS])
def test_argparse_errors_mask_api_keys(capsys, argv):
    secret = argv[-1].partition("=")[2] or argv[-1]
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    captured = capsys.readouterr()
    assert "error:" in captured.err and "***" in captured.err
    assert secret not in captured.err and secret not in captured.out
    assert secret[:12] not in captured.err  # not even a prefix long enough to identify it


@pytest.mark.parametrize("text", [
    "argument --max-tokens: invalid int value: 'abc'",
    "unrecognized arguments: --policy random /tmp/runs/day_trader_v0_seed12345678901234.jsonl",
    "argument command: invalid choice: 'runn' (choose from 'list', 'run')",
    "--set n_agents=6 --set starting_money=100",
])
def test_masking_leaves_ordinary_arguments_alone(text):
    assert mask_secrets(text) == text


def test_argparse_errors_escape_control_characters(capsys):
    with pytest.raises(SystemExit):
        main(["run", "day_trader_v0", "x\x1b]0;PWNED\x07"])
    err = capsys.readouterr().err
    assert terminal_controls(err) == [] and "x\\x1b]0;PWNED\\x07" in err
