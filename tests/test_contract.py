"""The env contract (`teamenvs.testing.check_team_env`) over the registry, and adding a paradigm.

Every registered env passes the contract, so a new env gets these tests for free. The toy
paradigm in `examples/meeting_point/` is copied, as one folder, into a copy of the package:
with no other edit it is registered, has its baselines, joins the smoke suite and the
Gymnasium ids, and passes the same contract.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import teamenvs
from teamenvs.testing import CHECKS, check_team_env

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("env_id", teamenvs.list_envs())
def test_every_registered_env_passes_the_contract(env_id):
    assert check_team_env(env_id) == [name for name, _ in CHECKS]


@pytest.mark.parametrize("env_id", teamenvs.list_envs())
def test_metric_bounds_hold_over_random_and_scripted_episodes(env_id):
    """The bounds figures cut intervals to (`metric_bounds`) are never broken by an episode: random valid play (which
    reaches rejected actions, unfinished tasks and empty denominators) and the baselines, cut short and played out."""
    from agents import run_episode
    from teamenvs.core.policy import make_policies
    from teamenvs.testing import check_metric_bounds

    for kind, seed, max_steps in (("random", 0, None), ("random", 1, 12), ("scripted", 2, 30)):
        env = teamenvs.make(env_id)
        result = run_episode(env, make_policies(env, kind, seed=seed), seed=seed, max_steps=max_steps)
        check_metric_bounds(env_id, result.metrics, result.returns)
    assert teamenvs.make(env_id).unwrapped.metric_bounds  # every paradigm has shares


def test_the_contract_catches_a_metric_outside_its_bounds(monkeypatch):
    from teamenvs.day_trader.env import DayTraderEnv
    from teamenvs.testing import check_logs_metrics_and_replay

    monkeypatch.setattr(DayTraderEnv, "metric_bounds", {"mean_final_wealth": (0.0, 1.0)})
    with pytest.raises(AssertionError, match=r"metric mean_final_wealth is .*, outside its metric_bounds \[0.0, 1.0\]"):
        check_logs_metrics_and_replay("day_trader_v0")
    from teamenvs.map_task.env import MapTaskEnv

    monkeypatch.setattr(MapTaskEnv, "metric_bounds", {"return": (0.0, 0.5)})  # each agent's return (seed 0: 0.607)
    with pytest.raises(AssertionError, match=r"metric return is 0.607\d*, outside its metric_bounds \[0.0, 0.5\]"):
        check_logs_metrics_and_replay("map_task_v0")
    monkeypatch.setattr(DayTraderEnv, "metric_bounds", {"cooperation": (0.0, 1.0)})
    with pytest.raises(AssertionError, match=r"metric_bounds name metrics the paradigm does not report: \['cooperation'\]"):
        check_logs_metrics_and_replay("day_trader_v0")


def test_the_contract_catches_infos_shared_between_steps(monkeypatch):
    from teamenvs.core.env import TeamEnv
    from teamenvs.testing import check_valid_action_episode

    shared: dict = {"note": "the same dict every step"}
    original = TeamEnv._observe

    def leaky(self, final=False):
        observations, infos = original(self, final)
        for info in infos.values():
            info["extra"] = shared
        return observations, infos

    monkeypatch.setattr(TeamEnv, "_observe", leaky)
    with pytest.raises(AssertionError, match="share a mutable object"):
        check_valid_action_episode("commons_v0", max_steps=3)


def test_the_contract_catches_a_private_message_read_by_a_third_agent(monkeypatch):
    """`tell` delivered to every agent: the twin episodes whose private messages differ in their words tell the observer
    apart, and the check names the sender, the recipient and who else read it."""
    from teamenvs.commons.env import CommonsEnv
    from teamenvs.testing import check_message_isolation

    monkeypatch.setattr(CommonsEnv, "_recipients", lambda self, sender, to: [a for a in self.agents if a != sender])
    with pytest.raises(AssertionError, match=r"fisher_\d's private message to fisher_\d was delivered to fisher_1 too"):
        check_message_isolation("commons_v0", seed=3)


def test_the_contract_catches_words_of_others_messages_in_an_info(monkeypatch):
    """An info that carries anything of the words of messages the agent was not sent (here their first letters)."""
    from teamenvs.core.env import TeamEnv
    from teamenvs.testing import check_message_isolation

    original = TeamEnv._observe

    def leaky(self, final=False):
        observations, infos = original(self, final)
        for info in infos.values():
            info["gist"] = "".join(message.text[0] for message, _ in self.messenger.last_delivery)
        return observations, infos

    monkeypatch.setattr(TeamEnv, "_observe", leaky)
    # (private messages: in the paper's group chat every member is sent every message)
    with pytest.raises(AssertionError, match="member_1's info at step \\d+ depends on words it was not sent"):
        check_message_isolation("hidden_profile_v0", seed=3, private_messages=True)
    monkeypatch.setattr(TeamEnv, "_observe", original)
    assert check_message_isolation("hidden_profile_v0", seed=3, private_messages=True)["delivered"] > 0  # unpatched, it passes


def test_the_contract_catches_teammates_refused_actions_in_an_info(monkeypatch):
    """Every agent's last action (a refusal quotes what its agent wrote) in every agent's info, not its own alone."""
    from teamenvs.core.env import TeamEnv
    from teamenvs.testing import check_message_isolation

    original = TeamEnv._observe

    def leaky(self, final=False):
        observations, infos = original(self, final)
        for info in infos.values():
            info["team"] = {agent: dict(self._last_action.get(agent) or {}) for agent in self.possible_agents}
        return observations, infos

    monkeypatch.setattr(TeamEnv, "_observe", leaky)
    with pytest.raises(AssertionError, match="depends on words it was not sent"):
        check_message_isolation("day_trader_v0", seed=3)  # (broadcast messages only: the refused actions tell it)


NEW_PARADIGM = """
import gymnasium, teamenvs
from teamenvs.core.policy import make_policies
from teamenvs.testing import check_team_env
from benchmarks.suite import load_suite
from agents import run_episode

assert teamenvs.list_envs()[-1] == "meeting_point_v0", teamenvs.list_envs()
print("contract:", ", ".join(check_team_env("meeting_point_v0")))
env = teamenvs.make("meeting_point_v0")
assert type(make_policies(env, "scripted", seed=0)["agent_2"]).__name__ == "Gather"
gather = run_episode(env, make_policies(env, "scripted", seed=3), seed=3).metrics
idle = run_episode(env, make_policies(env, "idle", seed=3), seed=3).metrics
assert gather["met"] is True and idle["met"] is False, (gather, idle)
assert [g.env for g in load_suite("smoke").groups][-1] == "meeting_point_v0"
single = gymnasium.make("teamenvs/MeetingPoint-v0")
single.reset(seed=0)
print("ok")
"""


def test_a_new_paradigm_is_one_folder_and_nothing_else(tmp_path):
    shutil.copytree(ROOT / "teamenvs", tmp_path / "teamenvs", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "examples" / "meeting_point", tmp_path / "teamenvs" / "meeting_point")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", NEW_PARADIGM], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert ("contract: pettingzoo api, valid-action episode, decisions told their outcome, presets, logs, metrics and replay, pickle and deepcopy, "
            "single-agent view, rl interface") in done.stdout
    assert done.stdout.strip().endswith("ok")
