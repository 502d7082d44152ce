"""Configs and the registry: `build_config` (presets, overrides, string coercion, clear errors) and `make`.

Uses the DayTrader config (a real paradigm config inheriting the messaging conditions) and
a small local dataclass for the coercion of types DayTrader does not have.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Optional

import numpy as np
import pytest

import teamenvs
from agents.personas import Persona, sample_personas
from teamenvs.core.config import ConfigError, build_config, check_int, config_to_json
from teamenvs.core.policy import make_policies
from teamenvs.core.recorder import EpisodeRecorder
from teamenvs.wrappers.single_agent import SingleAgentEnv
from teamenvs.day_trader.config import PRESETS, DayTraderConfig


def day_trader(preset=None, **overrides) -> DayTraderConfig:
    return build_config(DayTraderConfig, PRESETS, preset, overrides)


def test_defaults_are_the_baseline_condition():
    config = day_trader()
    assert config == DayTraderConfig()
    assert (config.n_agents, config.rounds, config.starting_money) == (3, 30, 200)
    assert (config.min_investment, config.max_investment, config.bonus) == (15, 100, 90)
    assert day_trader("baseline") == config


@pytest.mark.parametrize(
    "preset, field, value",
    [
        ("group_size_6", "n_agents", 6),
        ("group_size_9", "n_agents", 9),
        ("no_communication", "communication", False),
        ("communication_bandwidth", "min_steps_between_messages", 5),
    ],
)
def test_presets(preset, field, value):
    config = day_trader(preset)
    assert getattr(config, field) == value
    # every other field keeps its default
    default = DayTraderConfig()
    for f in dataclasses.fields(DayTraderConfig):
        if f.name != field:
            assert getattr(config, f.name) == getattr(default, f.name), f.name


def test_overrides_apply_on_top_of_a_preset():
    config = day_trader("group_size_6", rounds=4)
    assert (config.n_agents, config.rounds) == (6, 4)
    assert day_trader("group_size_6", n_agents=4).n_agents == 4


def test_configs_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        day_trader().rounds = 3  # type: ignore[misc]


def test_unknown_key_names_the_nearest_key():
    with pytest.raises(ConfigError, match=r"unknown config key 'n_agent' for DayTraderConfig\. Did you mean 'n_agents'\?") as info:
        day_trader(n_agent=4)
    assert "Valid keys:" in str(info.value) and "show_balances" in str(info.value)


def test_unknown_preset_names_the_nearest_preset():
    with pytest.raises(ConfigError, match=r"unknown preset 'group_size6'\. Did you mean 'group_size_6'\?") as info:
        day_trader("group_size6")
    assert "no_communication" in str(info.value)


def test_close_match_skips_only_words_that_cannot_reach_the_cutoff(monkeypatch):
    """`close_match` answers as `difflib.get_close_matches` does for every word that could reach the cutoff, and does
    not match a word too long to (a ratio is at most 2 * min(len) / (sum of lengths)), whatever its length."""
    import difflib

    from teamenvs.core.text import close_match

    names = ["n_agents", "rounds", "show_balances"]
    for cutoff in (0.5, 0.6, 0.8):
        for length in range(1, 60):
            word = ("show_balances" * 5)[:length] + "!"
            expected = difflib.get_close_matches(word, names, n=1, cutoff=cutoff)
            assert close_match(word, names, cutoff) == (expected[0] if expected else None), (word, cutoff)
    assert close_match("x", []) is None
    calls = []
    monkeypatch.setattr(difflib, "get_close_matches", lambda *a, **k: calls.append(a) or [])
    assert close_match("show_balances" * 1000, names) is None and calls == []


LAYOUT = "\n".join(["##########", "#hh+..+..#", "#hh#..#..#", "##########"])  # the Hospital and two rooms
PERSONA = sample_personas(1, 0)[0].to_dict()


@pytest.mark.parametrize("make", [
    lambda huge: teamenvs.make(huge),
    lambda huge: teamenvs.make("day_trader_v0", preset=huge),
    lambda huge: teamenvs.make("day_trader_v0", **{huge: 1}),
    lambda huge: make_policies(teamenvs.make("day_trader_v0"), huge),
    lambda huge: teamenvs.make("day_trader_v0", n_agents=huge),
    lambda huge: teamenvs.make("day_trader_v0", show_balances=huge),
    lambda huge: teamenvs.make("day_trader_v0", communication=huge),
    lambda huge: teamenvs.make("search_rescue_v0", team=[huge] * 1000),
    lambda huge: teamenvs.make("job_fair_v0", scenario=huge),
    lambda huge: teamenvs.make("hidden_profile_v0", profile=huge),
    lambda huge: teamenvs.make("day_trader_v0", obs_type=huge),
    lambda huge: teamenvs.make("day_trader_v0", action_type=huge),
    lambda huge: teamenvs.make("day_trader_v0", render_mode=huge),
    lambda huge: teamenvs.make("day_trader_v0", obs_type="vector", learners=[huge]),
    lambda huge: EpisodeRecorder(keep=huge),
    lambda huge: SingleAgentEnv("day_trader_v0", agent=huge),
    lambda huge: teamenvs.make("search_rescue_v0", team=[huge] * 5),
    lambda huge: teamenvs.make("search_rescue_v0").reset(seed=0, options={"layout": "#" + "".join(map(chr, range(0x4E00, 0x9FFF)))}),
    lambda huge: teamenvs.make("search_rescue_v0").reset(seed=0, options={"layout": LAYOUT, "room_names": [huge, huge]}),
    lambda huge: Persona.from_dict({huge: 1, 5: 2}),
    lambda huge: Persona(**{**PERSONA, "big_five": {**PERSONA["big_five"], "openness": huge}}),
    lambda huge: Persona(**{**PERSONA, "big_five": {huge: "high"}}),
    lambda huge: sample_personas(huge, 0),
])
def test_an_unknown_name_or_bad_value_of_any_length_gets_a_short_error(make):
    """An unknown env id, preset, config key or baseline, or a config value that cannot be read, is quoted in its
    error cut short, not echoed whole (it may come from a suite file or the command line)."""
    huge = "day_trader_v0" * 20_000
    with pytest.raises((KeyError, ConfigError, ValueError)) as info:
        make(huge)
    message = str(info.value)
    assert len(message) < 1_000 and "..." in message and ("unknown" in message or "got" in message or "cannot read" in message)


@pytest.mark.parametrize("env_id, key, value, message", [
    ("search_rescue_v0", "critical_fraction", 10**400, "critical_fraction must be a number a float can hold, got a 1329-bit integer"),
    ("search_rescue_v0", "critical_fraction", -10**5000, "critical_fraction must be a number a float can hold, got a 16610-bit integer"),
    ("search_rescue_v0", "max_steps", 10**400, "max_steps must be from 1 to 1000000, got a 1329-bit integer"),
    ("search_rescue_v0", "width", 10**5000, "width must be from 10 to 100, got a 16610-bit integer"),  # beyond int -> str's limit
    ("map_task_v0", "blocked_fraction", 10**400, "blocked_fraction must be a number a float can hold"),
    ("job_fair_v0", "skill_overlap", 10**400, "skill_overlap must be from 0 to 1, got a 1329-bit integer"),  # float | None
    ("day_trader_v0", "n_agents", -10**400, "n_agents must be from"),
], ids=lambda v: f"{v.bit_length()}-bit" if isinstance(v, int) else None)
def test_a_huge_integer_for_a_number_gets_a_config_error_that_says_so(env_id, key, value, message):
    """An integer too large for a float (OverflowError) or for `str` (ValueError past 4,300 digits) is a ConfigError
    that names the key and the integer's size, not a traceback or an echo of its digits."""
    with pytest.raises(ConfigError) as info:
        teamenvs.make(env_id, **{key: value})
    assert message in str(info.value) and len(str(info.value)) < 200, str(info.value)[:300]


def test_string_coercion():
    config = day_trader(n_agents="6", show_balances="false", communication="true", max_words="none")
    assert config.n_agents == 6 and isinstance(config.n_agents, int)
    assert config.show_balances is False
    assert config.communication is True
    assert config.max_words is None
    assert day_trader(max_words="12").max_words == 12
    assert day_trader(max_words=" null ").max_words is None
    assert day_trader(show_balances="Yes").show_balances is True


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"n_agents": "six"}, r"n_agents: cannot read 'six' as int"),
        ({"show_balances": "maybe"}, r"show_balances: cannot read 'maybe' as bool"),
        ({"max_words": "many"}, r"max_words: cannot read 'many'"),
    ],
)
def test_uncoercible_strings(overrides, message):
    with pytest.raises(ConfigError, match=message):
        day_trader(**overrides)


@pytest.mark.parametrize("text", [" 5 ", '"Software Company"', '{"a": 1}', "[" * 100_000])
def test_a_string_for_a_list_must_be_a_json_array(text):
    """A string for a list field is read as JSON and must be an array: a number, a string or an object is not
    (they once raised TypeError), nor is JSON nested past the parser's limit (once a RecursionError)."""
    with pytest.raises(ConfigError, match=r"businesses: cannot read '.*' as tuple\[str, \.\.\.\] \| None"):
        teamenvs.make("job_fair_v0", scenario="generated", businesses=text)


@pytest.mark.parametrize("businesses", [[{"a": 1}], [["x"]], "[1, 2]"])
def test_business_names_must_be_strings(businesses):
    with pytest.raises(ConfigError, match="businesses must be a non-empty list of business names, got"):
        teamenvs.make("job_fair_v0", scenario="generated", businesses=businesses)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"n_agents": 1}, r"n_agents must be from 2 to 100, got 1"),
        ({"n_agents": "1"}, r"n_agents must be from 2 to 100, got 1"),
        ({"max_investment": 10}, r"max_investment must be from 15 to 1000000000000000000, got 10"),
        ({"min_investment": 50, "max_investment": 40}, r"max_investment must be from 50 to 1000000000000000000, got 40"),
        ({"rounds": 0}, r"rounds must be from 1 to 10000, got 0"),
        ({"starting_money": -1}, r"starting_money must be from 0 to 1000000000000000000, got -1"),
        ({"rounds": 2.5}, r"rounds must be an integer, got 2\.5"),
        ({"n_agents": True}, r"n_agents must be an integer, got True"),
        ({"show_balances": 1}, r"show_balances must be true or false"),
    ],
)
def test_invalid_values_name_the_field(overrides, message):
    with pytest.raises(ConfigError, match=message):
        day_trader(**overrides)


def test_invalid_values_through_make():
    with pytest.raises(ConfigError, match="n_agents"):
        teamenvs.make("day_trader_v0", n_agents=1)
    with pytest.raises(ConfigError, match="Did you mean 'rounds'"):
        teamenvs.make("day_trader_v0", round=3)
    env = teamenvs.make("day_trader_v0", preset="group_size_6", rounds="2")
    assert env.config.n_agents == 6 and env.config.rounds == 2
    assert env.possible_agents == [f"trader_{i}" for i in range(1, 7)]


def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError)
    assert teamenvs.ConfigError is ConfigError


@dataclass(frozen=True)
class Toy:
    rate: float = 0.5
    size: Optional[int] = 3
    name: str = "x"
    pair: tuple = (1, 2)

    def __post_init__(self) -> None:
        if self.rate < 0:
            raise ValueError("rate must be >= 0")


def test_coercion_of_other_types():
    toy = build_config(Toy, {}, None, {"rate": "0.25", "size": "None", "name": "  spaced ", "pair": "[3, 4]"})
    assert toy == Toy(0.25, None, "  spaced ", (3, 4))
    assert build_config(Toy, {}, None, {"rate": 2}).rate == 2.0
    assert isinstance(build_config(Toy, {}, None, {"rate": 2}).rate, float)


def test_plain_value_errors_become_config_errors():
    with pytest.raises(ConfigError, match=r"invalid Toy: rate must be >= 0"):
        build_config(Toy, {}, None, {"rate": -1.0})


def test_config_to_json_is_plain():
    data = config_to_json(day_trader("group_size_6"))
    assert data["n_agents"] == 6 and data["max_words"] is None and data["communication"] is True


def test_config_to_json_gives_a_new_dict_each_call_from_the_text_made_once():
    import json

    config = day_trader("group_size_6")
    first = config_to_json(config)
    first["n_agents"] = 99
    first["payoffs"] = "changed"
    again = config_to_json(config)  # from the kept text: the change to the first dict is not in it
    assert again == json.loads(json.dumps(dataclasses.asdict(config), default=str)) and again["n_agents"] == 6
    assert again is not config_to_json(config)
    # an equal config that is another object has its own entry (equal is not enough: 1 == 1.0, their JSON differs)
    assert config_to_json(dataclasses.replace(config)) == again


def test_config_to_json_of_a_config_that_can_change_is_made_each_time():
    @dataclass(frozen=True)
    class Listed:
        items: list

    @dataclass(eq=False)  # hashable (by identity), and not frozen
    class Open:
        n: int

    listed, opened = Listed([1]), Open(1)
    assert config_to_json(listed) == {"items": [1]} and config_to_json(opened) == {"n": 1}
    listed.items.append(2)
    opened.n = 2
    assert config_to_json(listed) == {"items": [1, 2]} and config_to_json(opened) == {"n": 2}


def test_check_int():
    assert check_int("k", 3, 1, 5) == 3
    with pytest.raises(ConfigError, match="k must be <= 5, got 6"):
        check_int("k", 6, None, 5)
    # a numpy integer is the number it holds, returned as a Python int (json.dumps refuses np.int64); bools are not
    taken = check_int("k", np.int64(4), 1, 5)
    assert taken == 4 and type(taken) is int
    with pytest.raises(ConfigError, match="k must be <= 5, got 6"):
        check_int("k", np.int32(6), None, 5)
    for bad in (True, np.bool_(True), 2.0, np.float64(2.0), "2"):
        with pytest.raises(ConfigError, match="k must be an integer"):
            check_int("k", bad)


def test_make_unknown_id_names_registered_ids():
    with pytest.raises(KeyError) as info:
        teamenvs.make("nope_v0")
    message = str(info.value)
    assert "unknown env id 'nope_v0'" in message
    for env_id in teamenvs.list_envs():
        assert env_id in message


def test_make_close_id_suggests_it():
    with pytest.raises(KeyError, match="Did you mean 'day_trader_v0'"):
        teamenvs.make("day_trader_v1")


def test_list_envs_and_render_mode():
    assert "day_trader_v0" in teamenvs.list_envs()
    with pytest.raises(ValueError, match="render_mode"):
        teamenvs.make("day_trader_v0", render_mode="human")


@pytest.mark.parametrize("key", ["starting_money", "max_investment", "individual_multiplier", "group_multiplier", "bonus"])
def test_daytrader_money_is_bounded_below_what_a_float_holds(key):
    """Money is written as float: 10**400 dollars raised OverflowError mid-episode; the tops (10**18 dollars, a
    multiplier of 1,000) are refused above, and the largest of them all together play a whole episode."""
    with pytest.raises(ConfigError, match=f"{key} must be from .* got a 1329-bit integer"):
        teamenvs.make("day_trader_v0", **{key: 10**400})
    top = {"starting_money": 10**18, "max_investment": 10**18, "individual_multiplier": 1000, "group_multiplier": 1000, "bonus": 10**18}
    env = teamenvs.make("day_trader_v0", **top, min_investment=10**18)
    observations, infos = env.reset(seed=0)
    while env.agents:
        observations, rewards, _, _, infos = env.step({a: f"invest group {10**18}" if infos[a]["needs_action"] else "wait" for a in env.agents})
        assert all(math.isfinite(r) for r in rewards.values())


@pytest.mark.parametrize("env_id", teamenvs.list_envs())
def test_a_huge_message_history_is_refused_by_the_range_check(env_id):
    """`message_history` sizes a deque: past what a C size holds it raised OverflowError at reset; a million is
    its top (more messages than any episode has steps is no limit at all)."""
    teamenvs.make(env_id, message_history=1_000_000).reset(seed=0)
    with pytest.raises(ConfigError, match="message_history must be from 0 to 1000000, got a 1329-bit integer"):
        teamenvs.make(env_id, message_history=10**400)


def test_numpy_scalars_are_the_values_they_hold():
    """A parameter sweep's values are numpy scalars (np.arange, np.linspace, a DataFrame's cells): "n_agents must be an
    integer, got np.int64(6)" refused the very number asked for. The config holds the plain Python value, so the env,
    its log header and its episode are those of the Python value; a numpy value that breaks a rule is refused as the
    Python value would be."""
    from teamenvs.core.config import config_to_json

    given = {"n_agents": np.int64(6), "rounds": np.int32(12), "show_balances": np.bool_(True), "max_words": np.array(20)}
    plain = {"n_agents": 6, "rounds": 12, "show_balances": True, "max_words": 20}
    env, same = teamenvs.make("day_trader_v0", **given), teamenvs.make("day_trader_v0", **plain)
    assert env.config == same.config and config_to_json(env.config) == config_to_json(same.config)
    assert all(type(getattr(env.config, k)) is type(v) for k, v in plain.items())
    assert env.reset(seed=3)[0] == same.reset(seed=3)[0]
    assert teamenvs.make("search_rescue_v0", critical_fraction=np.float64(0.25)).config.critical_fraction == 0.25
    for key, value, says in (("n_agents", np.int64(1), "n_agents must be from 2 to 100, got 1"),
                             ("starting_money", np.float64(200.5), "starting_money must be an integer, got 200.5")):
        with pytest.raises(ConfigError, match=says):
            teamenvs.make("day_trader_v0", **{key: value})


def test_check_number_takes_finite_numbers_in_range_only():
    from teamenvs.core.config import check_number

    check_number("t", 0.5, 0, above=True)
    check_number("t", 0, 0)
    check_number("t", 10**400, 0)  # a huge int is finite (math.isfinite would overflow on it)
    for value, says in ((float("nan"), "t must be a finite number, got nan"), (float("inf"), "a finite number, got inf"),
                        ("1", "a finite number, got '1'"), (True, "a finite number, got True"), (0, "t must be > 0, got 0"),
                        (3, "t must be from 0 to 2, got 3")):
        with pytest.raises(ConfigError, match=re.escape(says)):
            check_number("t", value, 0, 2 if value == 3 else None, above=value == 0)
