"""The Gymnasium single-agent view: registration, teammates, reward accounting, checker."""

from __future__ import annotations

import re

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import teamenvs
from teamenvs.core.policy import ScriptedPolicy


def _play(env, action_for):
    obs, info = env.reset(seed=0)
    total, steps = 0.0, 0
    while True:
        obs, reward, terminated, truncated, info = env.step(action_for(info))
        total += reward
        steps += 1
        if terminated or truncated:
            return obs, info, total, steps


def test_every_env_is_registered_with_gymnasium():
    for env_id in teamenvs.list_envs():
        gym_id = teamenvs.spec(env_id).gym_id
        assert gym_id in gymnasium.registry
        env = gymnasium.make(gym_id)
        obs, info = env.reset(seed=1)
        assert isinstance(obs, str) and obs
        assert info["needs_action"] is True
        assert env.observation_space.contains(obs)


def test_defecting_learner_among_cooperators_earns_what_the_rules_imply():
    env = gymnasium.make("teamenvs/DayTrader-v0", agent="trader_2", teammates="cooperator")
    obs, info, total, steps = _play(
        env, lambda info: "invest individual 100" if info["view"]["phase"] == "decision" else "wait"
    )
    # Each round: pool 200 tripled = 600, 200 each; the defector nets +100 +200 = 300 and, as sole
    # top earner, takes the 90 bonus from round 2 on: 30 * 300 + 29 * 90 = 11610.
    assert total == pytest.approx(11610.0)
    assert info["view"]["money"] == pytest.approx(200 + 11610.0)
    assert steps == 48  # 30 decisions + 6 discussions of 3 turns: the learner acts every step


def test_teammates_can_be_given_as_policy_objects():
    class AlwaysGroup15(ScriptedPolicy):
        def decide(self, view, info):
            return "invest group 15" if view["phase"] == "decision" else "wait"

    teammates = {"trader_1": AlwaysGroup15(), "trader_3": AlwaysGroup15()}
    env = gymnasium.make("teamenvs/DayTrader-v0", agent="trader_2", teammates=teammates)
    env.reset(seed=0)
    _, reward, *_ = env.step("wait")
    assert reward == pytest.approx(30.0)  # pool 30, tripled 90, 30 each; round 1 has no bonus


def test_unknown_agent_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown agent 'trader_9'"):
        gymnasium.make("teamenvs/DayTrader-v0", agent="trader_9")


def test_passes_gymnasium_env_checker():
    env = gymnasium.make("teamenvs/DayTrader-v0", agent="trader_1")
    check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("flag", ["skip_idle", "flat_info"])
@pytest.mark.parametrize("bad", ["no", 0, 1, "False"])
def test_the_view_s_flags_must_be_true_or_false(flag, bad):
    """`flat_info="no"` is truthy: it used to give the flat info it meant to turn off."""
    with pytest.raises(ValueError, match=f"{flag} must be true or false"):
        gymnasium.make("teamenvs/DayTrader-v0", **{flag: bad})
    env = gymnasium.make("teamenvs/DayTrader-v0", **{flag: False})
    assert getattr(env.unwrapped, flag) is False


def test_two_teammates_of_one_policy_object_are_refused():
    """Each teammate's policy keeps its agent's briefing and history: one object for two teammates played both as the last."""
    env = teamenvs.make("day_trader_v0")
    policies = teamenvs.core.policy.make_policies(env, "tit_for_tat", seed=0)
    with pytest.raises(ValueError, match="the policy of 'trader_3' is the same object as the policy of 'trader_2'"):
        gymnasium.make("teamenvs/DayTrader-v0", teammates={"trader_2": policies["trader_2"], "trader_3": policies["trader_2"]}).reset(seed=0)
    view = gymnasium.make("teamenvs/DayTrader-v0", teammates={"trader_2": policies["trader_2"], "trader_3": policies["trader_3"]})
    assert view.reset(seed=0)[1]["needs_action"]


def test_a_teammate_spec_the_view_would_misread_is_refused_when_it_is_made():
    """A mapping with the learner's own policy in it (a whole team's mapping) was taken and that policy never played;
    one naming an agent the env lacks was taken too when its values were objects; names mixed with objects were read as
    the object's repr, "unknown baseline '<...TitForTat object at ...>'"; and every one of these surfaced at the first
    reset, not where the view was made."""
    env = teamenvs.make("day_trader_v0")
    team = teamenvs.core.policy.make_policies(env, "tit_for_tat", seed=0)
    for teammates, says in (
        (dict(team), "teammates maps the learner 'trader_1', whose actions come from the Gymnasium agent"),
        ({"trader_1": "defector"}, "teammates maps the learner 'trader_1'"),
        ({"trader_2": team["trader_2"], "trader_3": team["trader_3"], "trader4": team["trader_1"]},
         "teammates names agents the env does not have: 'trader4'; agents are trader_1, trader_2, trader_3"),
        ({"trader_2": team["trader_2"], "trader_3": "defector"}, "baseline names or to policy objects, not both"),
        ({"trader_2": team["trader_2"]}, "no teammate policy for trader_3 (teammates maps agents to policy objects"),
        ("tit_for_tatt", "unknown baseline 'tit_for_tatt' for day_trader_v0"),
    ):
        with pytest.raises(ValueError, match=re.escape(says)):
            gymnasium.make("teamenvs/DayTrader-v0", agent="trader_1", teammates=teammates)  # no reset needed to say so
    # what the view takes: the teammates' objects, or names for some of them (the rest play the default baseline)
    objects = gymnasium.make("teamenvs/DayTrader-v0", agent="trader_1", teammates={a: team[a] for a in ("trader_2", "trader_3")})
    objects.reset(seed=0)
    assert objects.unwrapped._teammates == {"trader_2": team["trader_2"], "trader_3": team["trader_3"]}
    named = gymnasium.make("teamenvs/DayTrader-v0", agent="trader_1", teammates={"trader_3": "defector"})
    named.reset(seed=0)
    assert [type(p).__name__ for p in named.unwrapped._teammates.values()] == ["TitForTat", "Defector"]


def test_teammate_objects_in_two_live_episodes_are_refused():
    """A SyncVectorEnv whose env function hands every copy one mapping of teammate objects: the copies' episodes played
    the same objects, each teammate's history mixing both episodes, without a word."""
    import numpy as np

    team = teamenvs.core.policy.make_policies(teamenvs.make("day_trader_v0"), "tit_for_tat", seed=0)
    mates = {a: team[a] for a in ("trader_2", "trader_3")}

    def make():
        return gymnasium.make("teamenvs/DayTrader-v0", agent="trader_1", teammates=mates, obs_type="vector", action_type="discrete")

    vector = gymnasium.vector.SyncVectorEnv([make, make])
    with pytest.raises(ValueError, match="the teammate policy of 'trader_2' plays in another view's episode, which is not over"):
        vector.reset(seed=[0, 1])
    vector.close()
    # one after another is fine: an episode played to its end, or a view closed, lets the objects play elsewhere
    first = make()
    first.reset(seed=0)
    while not any(first.step(0)[2:4]):
        pass
    second, third = make(), make()
    second.reset(seed=1)
    with pytest.raises(ValueError, match="plays in another view's episode"):
        third.reset(seed=2)
    second.close()
    assert third.observation_space.contains(third.reset(seed=2)[0])
    third.close()
    # and each worker of an AsyncVectorEnv holds copies of its own
    workers = gymnasium.vector.AsyncVectorEnv([make, make])
    workers.reset(seed=0)
    assert workers.step(np.zeros(2, np.int64))[0]["observation"].shape[0] == 2
    workers.close()


@pytest.mark.parametrize("obs_type", ["text", "vector"])
def test_learners_given_to_the_single_agent_view_is_refused(obs_type):
    """`learners=` is the multi-agent env's option: the view raised "got multiple values for keyword argument
    'learners'" with numeric observations, and with text took it without effect."""
    with pytest.raises(ValueError, match=re.escape("the single-agent view has one learner, agent=None: pass agent=... "
                                                   "instead of learners=['trader_2']")):
        gymnasium.make("teamenvs/DayTrader-v0", obs_type=obs_type, learners=["trader_2"])
    assert gymnasium.make("teamenvs/DayTrader-v0", agent="trader_2", obs_type=obs_type).unwrapped.agent == "trader_2"


def test_log_dir_writes_each_episode_to_a_log_of_its_own(tmp_path):
    """The single-agent view's episodes, logged: one `.jsonl.gz` log per episode (a log holds one episode), named by
    seed or, for a vector env's autoreset, by episode, unique where a vector env's copies share the folder; each reads
    back and replays, its re-simulation verifying every step."""
    import numpy as np

    from teamenvs.core.recorder import read_log
    from teamenvs.replay import load_replay

    def make():
        return gymnasium.make("teamenvs/Commons-v0", agent="fisher_1", teammates="mimic", obs_type="vector",
                              action_type="discrete", log_dir=tmp_path)

    vector = gymnasium.vector.SyncVectorEnv([make, make])
    _, info = vector.reset(seed=[0, 1])
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(40):
        _, _, terminated, truncated, info = vector.step((rng.random(info["action_mask"].shape) * info["action_mask"]).argmax(axis=1))
        ended += int(np.sum(terminated | truncated))
    vector.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2 + ended and {"commons_v0_fisher_1_seed0.jsonl.gz", "commons_v0_fisher_1_seed1.jsonl.gz"} <= set(names)
    assert any(name.endswith("-2.jsonl.gz") for name in names)  # both copies' second episodes: one name each
    complete = 0
    for path in tmp_path.iterdir():
        records = read_log(path)
        assert [r["type"] for r in records][:2] == ["header", "reset"]
        replay = load_replay(path)
        assert replay.sim.warning is None and replay.sim.verified == replay.n_steps > 0
        if records[-1]["type"] == "end":  # an episode that ended: its returns and metrics, as run_episode writes them
            complete += 1
            steps = [r for r in records if r["type"] == "step"]
            assert records[-1]["steps"] == len(steps) and records[-1]["returns"] == {
                a: sum(r["agents"][a]["reward"] for r in steps if a in r["agents"]) for a in records[0]["agents"]}
            assert "survival_time" in records[-1]["metrics"]
    assert complete == ended  # the two episodes cut by close() have none
    with pytest.raises(ValueError, match="log_dir must be a folder's path or None, got 5"):
        gymnasium.make("teamenvs/Commons-v0", log_dir=5)


@pytest.mark.parametrize("obs_type", ["text", "vector"])
def test_a_refused_action_is_reported_after_the_steps_the_learner_skips(obs_type):
    # under round_robin the medic's turn passes with its action: the learner step covers the teammates' turns, and
    # its info, text and vector tell what became of the medic's own action, not "none needed" of the last turn
    import numpy as np

    from teamenvs.core.env import LAST_ACTION_REJECTED

    env = gymnasium.make("teamenvs/SearchRescue-v0", agent="medic", preset="round_robin", obs_type=obs_type,
                         action_type="discrete" if obs_type == "vector" else "text")
    obs, info = env.reset(seed=0)
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0]) if obs_type == "vector" else "fly to the moon"
    obs, _, _, _, info = env.step(bad)
    assert info["skipped_steps"] == 2 and info["needs_action"]
    if obs_type == "text":
        assert info["last_action"]["ok"] is False
        assert f"\n{LAST_ACTION_REJECTED}: unknown command 'fly to the moon'" in obs
        obs, _, _, _, info = env.step("wait")
        assert info["last_action"]["ok"] is True and "Your last action: wait (accepted)." in obs
    else:
        assert info["action_rejected"] is True
        from teamenvs.search_rescue.view import features

        table = features(env.unwrapped.team_env.unwrapped.config)
        start = sum(f.size for f in table[: [f.name for f in table].index("last_action")])
        assert obs["observation"][start: start + 4].tolist() == [0.0, 0.0, 1.0, 0.0]  # none yet, accepted, rejected, idle


def test_the_learner_s_return_is_its_return_in_the_team_env_steps_before_its_first_decision_included():
    # under round_robin the transporter's first turn is the third step: a reward paid to it in the steps the view's
    # reset plays comes with its first step's (each step here pays every agent 1, so none is lost or counted twice)
    env = gymnasium.make("teamenvs/SearchRescue-v0", agent="transporter", preset="round_robin", max_episode_steps=-1)
    team = env.unwrapped.team_env
    original, paid = team.step, []

    def paying(actions):
        observations, rewards, terminations, truncations, infos = original(actions)
        rewards = {a: r + 1.0 for a, r in rewards.items()}
        paid.append(rewards.get("transporter", 0.0))
        return observations, rewards, terminations, truncations, infos

    team.step = paying
    _, info = env.reset(seed=0)
    assert info["env_steps"] == 2 and len(paid) == 2
    total = 0.0
    for _ in range(30):
        _, reward, terminated, truncated, info = env.step("wait")
        total += reward
    assert total == sum(paid) and len(paid) == 2 + 30 * 3
