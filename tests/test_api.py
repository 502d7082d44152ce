"""PettingZoo and Gymnasium API compliance of every registered env (and every DayTrader preset).

Runs PettingZoo's own `parallel_api_test`, `parallel_seed_test` and, through
`parallel_to_aec`, `api_test`. PettingZoo's generic advice for numeric envs ("observation
is not a NumPy array", "space probably should be Box or Discrete") does not apply to text
envs and is allowed, as is its naming advice ("player_0"): search-and-rescue agents are
named after their roles (`medic`, `transporter_2`) as the issue asks. Any other warning (e.g. a live agent missing from a returned dict)
fails the test. Also checks the text spaces themselves.
"""

from __future__ import annotations

import re
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.spaces import Text
from pettingzoo import ParallelEnv
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test
from pettingzoo.utils.conversions import parallel_to_aec

import teamenvs
from teamenvs.core.env import UnknownAgentWarning
from teamenvs.core.text import excerpt
from teamenvs.day_trader.config import PRESETS

ENV_IDS = teamenvs.list_envs()
TEXT_ENV_ADVICE = (
    "Observation is not a NumPy array",
    "probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
    "We recommend agents to be named in the format <descriptor>_<number>",
)


def run_pettingzoo_tests(factory) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel_api_test(factory(), num_cycles=200)
        parallel_seed_test(factory)
        api_test(parallel_to_aec(factory()), num_cycles=100)
    unexpected = [str(w.message) for w in caught if not any(a in str(w.message) for a in TEXT_ENV_ADVICE)]
    assert unexpected == []


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_pettingzoo_api(env_id):
    run_pettingzoo_tests(lambda: teamenvs.make(env_id))


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_pettingzoo_api_day_trader_presets(preset):
    run_pettingzoo_tests(lambda: teamenvs.make("day_trader_v0", preset=preset))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_spaces_are_text_and_the_same_object_every_call(env_id):
    env = teamenvs.make(env_id)
    assert isinstance(env, ParallelEnv)
    env.reset(seed=0)
    for agent in env.possible_agents:
        obs_space = env.observation_space(agent)
        act_space = env.action_space(agent)
        assert isinstance(obs_space, Text) and isinstance(act_space, Text)
        assert env.observation_space(agent) is obs_space
        assert env.action_space(agent) is act_space
    assert env.observation_space(env.possible_agents[0]) is not env.observation_space(env.possible_agents[1])


def test_text_spaces_of_two_agents_and_two_envs_draw_from_their_own_generators():
    """The spaces are copies of one prototype: seeding one must not seed, or move, another's generator."""
    first, second = teamenvs.make("commons_v0"), teamenvs.make("commons_v0")
    a, b = first.possible_agents[:2]
    spaces = [first.action_space(a), first.action_space(b), second.action_space(a)]
    for space in spaces:
        space.seed(7)
    draws = [space.sample() for space in spaces]
    assert draws[0] == draws[1] == draws[2]  # the same seed, the same draw: nothing else drew from them
    spaces[0].seed(8)
    assert spaces[1].sample() == spaces[2].sample() != ""  # reseeding the first moved neither other generator
    assert len({id(space.np_random) for space in spaces}) == 3


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_first_observations_are_in_the_space_and_info_has_the_schema(env_id):
    env = teamenvs.make(env_id)
    observations, infos = env.reset(seed=1)
    assert set(observations) == set(env.agents) == set(infos)
    for agent in env.agents:
        assert env.observation_space(agent).contains(observations[agent])
        assert isinstance(observations[agent], str) and observations[agent].strip()
        assert {"view", "valid_actions", "needs_action", "last_action", "events"} <= set(infos[agent])


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_metadata(env_id):
    env = teamenvs.make(env_id)
    assert env.metadata["name"] == env_id
    assert env.metadata["render_modes"] == ["ansi"]
    assert env.metadata["is_parallelizable"] is True
    assert type(env).env_id == env_id


def test_text_space_membership():
    env = teamenvs.make("day_trader_v0")
    space = env.observation_space("trader_1")
    assert space.contains("Grüße, 你好 🙂\nsecond line")
    assert not space.contains("")  # observations are never empty
    assert not space.contains("bell\x07")
    assert not space.contains(b"bytes")
    assert not space.contains("x" * (space.max_length + 1))
    action_space = env.action_space("trader_1")
    assert action_space.contains("")
    sample = action_space.sample()
    assert isinstance(sample, str) and action_space.contains(sample)


@pytest.mark.parametrize("env_id, shown", [("day_trader_v1", "'day_trader_v1'. Did you mean 'day_trader_v0'?"),
                                           (["day_trader_v0"], "['day_trader_v0']."), (None, "None."),
                                           # the spaces or line break shown, and said to be what is wrong
                                           (" day_trader_v0", "' day_trader_v0'. Did you mean 'day_trader_v0', without the spaces"),
                                           ("commons_v0\n", "'commons_v0\\n'. Did you mean 'commons_v0', without the spaces or line break"),
                                           ("Commons_V0", "'Commons_V0'. Did you mean 'commons_v0'? (env ids are lower case)")])
def test_an_unknown_env_id_is_a_config_error_and_a_key_error(env_id, shown):
    """One kind of error for every bad name a user gives (the command line shows ConfigErrors as its errors), still a
    KeyError as before; an id that is not a string is unknown too (a list raised TypeError: unhashable)."""
    from teamenvs.core.config import ConfigError
    from teamenvs.registry import UnknownEnvError

    for call in (teamenvs.make, teamenvs.spec):
        with pytest.raises(UnknownEnvError) as info:
            call(env_id)
        assert isinstance(info.value, ConfigError) and isinstance(info.value, KeyError)
        assert str(info.value).startswith(f"unknown env id {shown}") and "Registered: day_trader_v0" in str(info.value)


def test_importing_teamenvs_and_playing_a_step_loads_no_networkx():
    # networkx (about 50 ms to import, 16,772 objects every full garbage collection walks) is loaded by the functions that
    # use it (a job fair's matching, the map task's completion check, a drawn search-and-rescue map), not by an import
    import subprocess
    import sys

    code = ("import sys, teamenvs\n"
            "for env_id in teamenvs.list_envs():\n"
            "    env = teamenvs.make(env_id); env.reset(seed=0); env.step({})\n"
            "print('networkx' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


BAD_RESETS = [  # (seed, options, the error, what it says)
    (-1, None, ValueError, r"reset\(seed=\.\.\.\) takes a non-negative integer or None, got -1"),
    ("0", None, TypeError, r"takes a non-negative integer or None, got '0'"),
    (1.5, None, TypeError, r"got 1\.5"),
    (True, None, TypeError, r"got True"),  # a bool is an int to Python, but never meant as a seed
    ([1, 2], None, TypeError, r"got \[1, 2\]"),  # numpy would seed from a list, which the log's header cannot replay as one seed
    (0, "fast", TypeError, r"reset\(options=\.\.\.\) takes a dict or None, got 'fast'"),
    (0, 5, TypeError, r"takes a dict or None, got 5"),
]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_reset_with_a_bad_seed_or_options_is_refused_and_leaves_the_episode_as_it_was(env_id):
    env = teamenvs.make(env_id)
    for seed, options, error, says in BAD_RESETS:
        with pytest.raises(error, match=says):
            env.reset(seed=seed, options=options)
    with pytest.raises(RuntimeError, match=r"step\(\) was called before reset\(\)"):  # refused resets reset nothing
        env.step({})
    env.reset(seed=3)
    before = env.step({a: "wait" for a in env.agents})
    for seed, options, error, says in BAD_RESETS:
        with pytest.raises(error, match=says):
            env.reset(seed=seed, options=options)
    assert env.step_count == 1 and env.agents  # the same episode, one step in
    other = teamenvs.make(env_id)
    other.reset(seed=3)
    assert other.step({a: "wait" for a in other.agents})[0] == before[0]
    # numpy integers and integers of any size are seeds, as numpy takes them
    for seed in (np.int64(7), 2**80):
        assert env.reset(seed=seed)[0] == teamenvs.make(env_id).reset(seed=int(seed))[0]


def test_the_single_agent_view_refuses_a_bad_reset_before_it_changes():
    env = gymnasium.make("teamenvs/Commons-v0", agent="fisher_1", teammates="mimic")
    observation, _ = env.reset(seed=2)
    teammates = env.unwrapped._teammates
    for seed, options, error, says in BAD_RESETS:
        with pytest.raises(error, match=says):
            env.reset(seed=seed, options=options)
    assert env.unwrapped._teammates is teammates and env.unwrapped.team_env.step_count == 0


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_an_unknown_agent_is_named_with_the_agents(env_id):
    """Spaces keep PettingZoo's KeyError for an unknown agent, and say which agents there are; the env's own methods
    that take an agent refuse one that is not (a briefing used to be written for anyone: "You are nobody, ...")."""
    env = teamenvs.make(env_id, obs_type="vector", action_type="discrete")
    agents = ", ".join(env.possible_agents)
    for space in (env.observation_space, env.action_space):
        for bad in ("nobody", None, ["x"]):
            with pytest.raises(KeyError, match=f"unknown agent .*; agents are {agents}"):
                space(bad)
    with pytest.raises(RuntimeError, match=r"observe_now\(\) was called before reset\(\)"):
        env.observe_now(env.possible_agents[0])
    env.reset(seed=0)
    for method in (env.briefing, env.observe_now, lambda agent: env.action_text(agent, 0)):
        with pytest.raises(ValueError, match=f"unknown agent 'nobody'; agents are {agents}"):
            method("nobody")
    assert all(env.briefing(agent).strip() for agent in env.possible_agents)  # every agent of the env has its briefing


@pytest.mark.parametrize("action_type", ["text", "discrete"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_an_action_for_an_unknown_agent_is_ignored_with_a_warning_that_names_it(env_id, action_type):
    """A misspelt agent's action used to be dropped without a word (and the agent meant was told "no action was
    received"): `step` still never raises for what it is sent, but warns, naming the key and the agents, and plays the
    step with the other actions. An action for every agent of the env, asked to act or not, gives no warning
    (SuperSuit's black_death sends every possible agent's)."""
    env = teamenvs.make(env_id, action_type=action_type)
    agents = ", ".join(env.possible_agents)
    observations, infos = env.reset(seed=0)
    live = next(a for a in env.agents if infos[a]["needs_action"])
    sent = 0 if action_type == "discrete" else "wait"
    for step, bad in enumerate(("nobody", live.upper(), 0, None)):
        with pytest.warns(UnknownAgentWarning, match=rf"step\(\) ignored the action\(s\) for {re.escape(excerpt(bad))}: "
                                                     rf"no agent of this env \(agents are {agents}\)") as caught:
            _, _, _, _, infos = env.step({live: sent, bad: "x"})
        assert len(caught) == 1 and caught[0].filename == __file__  # said where the step was called
        assert env.unwrapped.step_count == step + 1
        assert live not in infos or infos[live]["last_action"].get("kind") != "missing"  # its own action was received
        if not env.agents:
            break
    with pytest.warns(UnknownAgentWarning, match=r"for 'ghost_0', 'ghost_1', 'ghost_2' and 9,997 more: ") as caught:
        env.reset(seed=0)
        env.step({f"ghost_{i}": "x" for i in range(10_000)})  # named in a message of bounded length
    assert len(str(caught[0].message)) < 200 + len(agents)
    with warnings.catch_warnings():  # (in the job fair some agents are not asked to act at some steps)
        warnings.simplefilter("error")
        env.reset(seed=0)
        for _ in range(50):
            if not env.agents:
                break
            env.step({a: 0 if action_type == "discrete" else "wait" for a in env.possible_agents})
