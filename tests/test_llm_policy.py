"""`LLMPolicy` (agents/llm/policy.py) in real episodes against the built-in server, and `teamenvs run --policy llm`.

Covers: `split_reply` on the reply shapes models produce; a full episode of every
registered env with `random-valid` (the log's per-step rationale, reply and usage, the end
record's usage, calls = acting agent-steps + repairs); the repair loop (re-prompts with
the env's exact error up to `max_repairs`, then the env rejects the action and says so in
the next observation); an action well-formed but refused by the rules; the per-episode
call budget stopping `run_episode` with an `error` line; teams mixing models; the prompt;
memory (a fresh stream each episode unless kept, `make_llm_policies(memory=...)`, suites'
`memory`); the CLI with the built-in server. Nothing leaves 127.0.0.1, and no test writes outside
its tmp_path.
"""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import re
import statistics
import time

import numpy as np
import pytest

import agents
import teamenvs
from agents.llm.client import LLMClient
from agents.llm.policy import (
    ANSWER_FORMAT,
    LLMPolicy,
    make_llm_policies,
    split_reply,
    team_part_first,
    valid_block,
)
from teamenvs.cli import main
from teamenvs.core.config import ConfigError
from teamenvs.core.recorder import read_log, step_records

RATIONALE = "I weighed the options I have now and picked one."  # random-valid's reasoning line
LONG_ENVS = {"search_rescue_v0": 40, "map_task_v0": 40}  # natural lengths 2000 and 120 steps


def policies_for(env, server, model="random-valid", **options):
    options.setdefault("cache", False)
    options.setdefault("backoff_base", 0.001)
    options.setdefault("timeout", 10.0)
    return make_llm_policies(env, model, base_url=server.url, **options)


def acted(entry) -> bool:
    action = entry["action"]
    return action is not None and not action.get("ignored")


# ---------------------------------------------------------------------------- split_reply


@pytest.mark.parametrize(
    "reply, action, rationale",
    [
        ("We should trust each other.\nThe pool pays.\nACTION: invest group 40", "invest group 40", "We should trust each other.\nThe pool pays."),
        ("Reasoning first.\nACTION:\ninvest group 40", "invest group 40", "Reasoning first."),
        ("Here is my move:\n```\nACTION: invest group 40\n```", "invest group 40", "Here is my move:"),
        ("```\ninvest group 40\n```", "invest group 40", ""),
        ("<think>maybe ACTION: wait\nor not</think>\nGroup it is.\nACTION: invest group 40", "invest group 40", "Group it is."),
        ("<THINK>hidden</THINK>invest group 40", "invest group 40", ""),
        # a template that opens <think> in the prompt: the reply holds the reasoning and its closing tag only
        ("Option A:\nACTION: invest group 100\nToo risky.\n</think>\nI will hold.\nACTION: wait", "wait", "I will hold."),
        ('ok\nACTION: "invest group 40"', "invest group 40", "ok"),
        ("ok\nACTION: `invest group 40`", "invest group 40", "ok"),
        ("ok\nAction: 'invest group 40'", "invest group 40", "ok"),
        ("ok\n**ACTION:** invest group 40", "invest group 40", "ok"),
        ("The action: maybe wait.\nACTION: invest group 40", "invest group 40", "The action: maybe wait."),
        ("invest group 40", "invest group 40", ""),
        ("`invest group 40`", "invest group 40", ""),
        ("", "", ""),
        ("  \n\t\n", "", ""),
        (None, "", ""),
    ],
)
def test_split_reply(reply, action, rationale):
    assert split_reply(reply) == (action, rationale)


def test_split_reply_json_keeps_the_object_for_the_env_parser():
    env = teamenvs.make("day_trader_v0")
    _, infos = env.reset(seed=0)
    situation = infos["trader_1"]["valid_actions"][0].situation
    for reply, rationale in [
        ('{"action": "invest group 40", "rationale": "trust the team"}', "trust the team"),
        ('```json\n{"action": "invest group 40", "reason": "r"}\n```', "r"),
        ('I answer in JSON. {"action": "invest group 40"}', "I answer in JSON."),
    ]:
        action, got = split_reply(reply)
        assert got == rationale
        assert json.loads(action)["action"] == "invest group 40"
        parsed = env.unwrapped.commands.parse(action, situation)
        assert parsed.ok and parsed.text == "invest group 40", parsed


def test_split_reply_json_whose_rationale_mentions_action():
    # a JSON reply is read as JSON even when its rationale says "action: ..."
    action, rationale = split_reply('{"action": "invest group 40", "rationale": "my action: keep everything"}')
    assert json.loads(action)["action"] == "invest group 40"
    assert rationale == "my action: keep everything"


# ---------------------------------------------------------------------------- full episodes


@pytest.mark.parametrize("env_id", teamenvs.list_envs())
def test_full_episode_of_every_env_with_random_valid(server, env_id):
    env = teamenvs.make(env_id)
    policies = policies_for(env, server)
    result = agents.run_episode(env, policies, seed=0, max_steps=LONG_ENVS.get(env_id))
    assert result.steps >= 1
    if env_id not in LONG_ENVS:
        assert result.records[-1]["type"] == "end" and not env.agents, "the episode should run to its natural end"
    else:
        assert result.steps == LONG_ENVS[env_id]

    acting = repairs = 0
    per_agent = {a: 0 for a in env.possible_agents}
    for record in step_records(result.records):
        for agent, entry in record["agents"].items():
            if not acted(entry):
                assert "rationale" not in entry and "usage" not in entry, (record["step"], agent)
                continue
            acting += 1
            assert entry["rationale"] == RATIONALE, (record["step"], agent, entry.get("reply"))
            assert isinstance(entry["reply"], str) and entry["reply"].startswith(RATIONALE)
            assert "ACTION:" in entry["reply"]
            assert entry["usage"]["calls"] >= 1
            assert entry["usage"]["prompt_tokens"] > 0 and entry["usage"]["completion_tokens"] > 0
            n_repairs = len(entry.get("repairs", []))
            assert entry["usage"]["calls"] == 1 + n_repairs
            repairs += n_repairs
            per_agent[agent] += 1 + n_repairs
    assert acting > 0

    end = result.records[-1]
    assert end["type"] == "end"
    usage = end["usage"]
    assert usage == result.usage
    assert set(usage["agents"]) == set(env.possible_agents)
    for agent, calls in per_agent.items():
        assert usage["agents"][agent]["calls"] == calls, agent
    assert usage["total"]["calls"] == acting + repairs
    assert usage["total"]["calls"] == sum(u["calls"] for u in usage["agents"].values())
    assert usage["total"]["prompt_tokens"] == sum(u["prompt_tokens"] for u in usage["agents"].values()) > 0
    assert usage["total"]["cached"] == 0  # cache=False


# ---------------------------------------------------------------------------- the prompt


def test_valid_block_lists_each_forms_usage_and_example():
    env = teamenvs.make("day_trader_v0")
    _, infos = env.reset(seed=0)
    forms = infos["trader_1"]["valid_actions"]
    assert len(forms) >= 2
    block = valid_block(forms)
    lines = block.splitlines()
    assert lines[0] == "Valid actions now:"
    assert len(lines) == 1 + len(forms)
    for form, line in zip(forms, lines[1:]):
        assert line.startswith(f"- {form.usage}")
        assert form.help in line
        assert line.endswith(f"(e.g. {form.example})")
    assert valid_block(()) == "Valid actions now:\n- wait (e.g. wait)"


def test_the_prompt_the_model_sees(server):
    env = teamenvs.make("day_trader_v0")
    observations, infos = env.reset(seed=0)
    agent = "trader_1"
    policy = policies_for(env, server, model="echo", max_repairs=0)[agent]
    briefing = env.unwrapped.briefing(agent)
    policy.reset(agent, briefing)

    sent = []
    original = policy.client.chat

    async def spy(messages, **kwargs):
        result = await original(messages, **kwargs)
        sent.append(([dict(m) for m in messages], result.text))
        return result

    policy.client.chat = spy
    policy.act(observations[agent], infos[agent])
    assert len(sent) == 1  # max_repairs=0: one call, whatever the answer
    messages, reply = sent[0]
    assert [m["role"] for m in messages] == ["system", "user"]
    system, user = messages[0]["content"], messages[1]["content"]
    # no persona, no theory: the rules, the team's part first; the commands are listed live in the user message
    assert system == "\n\n".join(team_part_first(briefing.rules))
    assert briefing.commands not in system + user
    assert str(observations[agent]) in user
    assert valid_block(infos[agent]["valid_actions"]) in user
    assert user.rstrip().endswith(ANSWER_FORMAT)
    assert reply == user  # echo answers the user message verbatim
    assert policy.last_extras["reply"] == user[:4000]
    assert policy.last_extras["usage"]["calls"] == 1
    assert "repairs" not in policy.last_extras


def test_the_prompt_carries_persona_theory_and_the_earlier_observation(server):
    env = teamenvs.make("day_trader_v0")
    observations, infos = env.reset(seed=0)
    agent = "trader_2"
    policy = LLMPolicy("echo", base_url=server.url, cache=False, commands=env.unwrapped.commands,
                       persona="You are cautious.", theory="Teams need trust.", max_repairs=0)
    policy.reset(agent, env.unwrapped.briefing(agent))
    # what the team shares first (theory, the rules), then the agent's own sentences, the persona last; the commands only in the user message
    shared, own = team_part_first(env.unwrapped.briefing(agent).rules)
    assert own.startswith("You are trader_2, one of 3 traders") and "trader_2" not in shared
    assert policy.system_prompt() == f"Teams need trust.\n\n{shared}\n\n{own}\n\nYou are cautious."
    first = str(observations[agent])
    policy.act(observations[agent], infos[agent])
    observations, _, _, _, infos = env.step({a: "wait" for a in env.agents})
    policy.act(observations[agent], infos[agent])
    reply = policy.last_extras["reply"]
    assert reply.startswith("Earlier observations (oldest first):\n" + first[:200])


# ---------------------------------------------------------------------------- repairs


def _malformed_episode(server, tmp_path, max_repairs):
    env = teamenvs.make("day_trader_v0")
    policies = policies_for(env, server, model="random-valid+malformed", max_repairs=max_repairs)
    client = next(iter(policies.values())).client
    before = server.requests
    result = agents.run_episode(env, policies, seed=0, max_steps=2, log_dir=tmp_path)
    return env, policies, client, server.requests - before, result


def test_repairs_reprompt_with_the_env_error_then_the_env_rejects(server, tmp_path):
    env, policies, client, sent, result = _malformed_episode(server, tmp_path, max_repairs=2)
    steps = list(step_records(result.records))
    decisions = sum(acted(e) for s in steps for e in s["agents"].values())
    assert decisions == 2 * len(env.possible_agents)
    assert sent == client.requests == decisions * (1 + 2)
    assert result.usage["total"]["calls"] == decisions * 3
    for record in steps:
        for entry in record["agents"].values():
            assert entry["usage"]["calls"] == 3
            assert len(entry["repairs"]) == 2
            action = entry["action"]
            assert action["ok"] is False and action["kind"] != "rejected"  # the parser, not the rules
            # the policy re-prompted with exactly the error the env gives
            assert entry["repairs"] == [action["error"], action["error"]]
            # and the env says so in the agent's next observation
            assert action["error"] in entry["observation"], entry["observation"]
    for policy in policies.values():
        assert len(policy.last_extras["repairs"]) == 2
        assert policy.last_extras["rationale"] == ""
    assert result.metrics["invalid_action_rate"] == 1.0
    # the written log says the same
    logged = read_log(result.log_path)
    assert logged[-1]["type"] == "end"
    assert [s["agents"] for s in step_records(logged)] == [s["agents"] for s in steps]


def test_repair_messages_quote_the_error(server):
    env = teamenvs.make("day_trader_v0")
    observations, infos = env.reset(seed=0)
    agent = "trader_1"
    policy = policies_for(env, server, model="random-valid+malformed", max_repairs=1)[agent]
    policy.reset(agent, env.unwrapped.briefing(agent))
    sent = []
    original = policy.client.chat

    async def spy(messages, **kwargs):
        sent.append([dict(m) for m in messages])
        return await original(messages, **kwargs)

    policy.client.chat = spy
    action = policy.act(observations[agent], infos[agent])
    assert len(sent) == 2
    error = policy.last_extras["repairs"][0]
    assert sent[1][:2] == sent[0]
    assert sent[1][2]["role"] == "assistant" and "weather" in sent[1][2]["content"]
    assert sent[1][3] == {"role": "user", "content": f"That action was rejected: {error}\n{ANSWER_FORMAT}"}
    _, _, _, _, infos = env.step({a: (action if a == agent else "wait") for a in env.agents})
    assert infos[agent]["last_action"]["ok"] is False
    assert infos[agent]["last_action"]["error"] == error


def test_no_repairs_means_one_request_per_decision(server, tmp_path):
    env, policies, client, sent, result = _malformed_episode(server, tmp_path, max_repairs=0)
    steps = list(step_records(result.records))
    decisions = sum(acted(e) for s in steps for e in s["agents"].values())
    assert decisions == 2 * len(env.possible_agents)
    assert sent == client.requests == decisions
    assert result.usage["total"]["calls"] == decisions
    for record in steps:
        for entry in record["agents"].values():
            assert entry["usage"]["calls"] == 1
            assert "repairs" not in entry
            assert entry["action"]["ok"] is False
            assert entry["action"]["error"] in entry["observation"]


# ---------------------------------------------------------------------------- refused by the rules


def test_a_well_formed_action_refused_by_the_rules(server):
    env = teamenvs.make("search_rescue_v0")
    policies = policies_for(env, server)
    result = agents.run_episode(env, policies, seed=0, max_steps=5)
    refused = [
        (record["step"], agent, entry)
        for record in step_records(result.records)
        for agent, entry in record["agents"].items()
        if acted(entry) and entry["action"]["ok"] is False and entry["action"]["kind"] == "rejected"
    ]
    assert refused, "random-valid should pick at least one example the rules refuse (e.g. 'pick up victim 1')"
    for step, agent, entry in refused:
        assert "repairs" not in entry, (step, agent)  # the policy's check accepted it
        assert entry["usage"]["calls"] == 1
        assert entry["rationale"] == RATIONALE
        assert entry["action"]["command"] and entry["raw_action"].lower().startswith(entry["action"]["command"])
        assert entry["action"]["error"] in entry["observation"]
    assert any(entry["raw_action"] == "pick up victim 1" for _, _, entry in refused)


# ---------------------------------------------------------------------------- the budget


def test_the_call_budget_stops_the_episode_cleanly_with_its_metrics_so_far(server, tmp_path):
    env = teamenvs.make("day_trader_v0")
    policies = make_llm_policies(env, "random-valid", base_url=server.url, cache=False, max_calls=4)
    client = next(iter(policies.values())).client
    before = server.requests
    result = agents.run_episode(env, policies, seed=0, log_dir=tmp_path)
    assert result.status == "budget" and "budget of 4 model calls" in result.warning
    assert result.steps == 1  # 3 traders decide in step 1; the 5th call of step 2 is refused
    assert server.requests - before <= 4 and client.requests <= 4
    records = read_log(next(tmp_path.glob("*.jsonl")))
    last = records[-1]
    assert last["type"] == "end" and last["status"] == "budget" and "budget" in last["warning"]
    assert last["steps"] == 1 and last["metrics"] == result.metrics and "mean_final_wealth" in last["metrics"]
    assert last["usage"]["total"]["calls"] == 4  # every call made, the step that ran out included
    assert not any(r["type"] == "error" for r in records)


def test_a_budget_stopped_episode_is_reported_but_not_counted(server, tmp_path):
    from benchmarks.report import read_episode

    env = teamenvs.make("commons_v0")
    agents.run_episode(env, make_llm_policies(env, "random-valid", base_url=server.url, cache=False, max_calls=6),
                       seed=0, log_dir=tmp_path)
    row = read_episode(next(tmp_path.glob("*.jsonl")))
    assert row.status == "budget" and "budget of 6 model calls" in row.error and not row.metrics
    from benchmarks.report import build_report

    build_report(tmp_path, plots=False)
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    # a rerun with the same budget stops at the same place: the report says how to finish them instead
    assert "Rerun the same" not in report and "raise the budget and rerun into a new `--out`" in report


class _Arriving(LLMClient):
    """A client (no server) whose replies cost 100 tokens each and land in the order given: `late`'s after the others'.
    trader_1 first answers with an action the env rejects, and its repair turn with a valid one."""

    def __init__(self, late: str):
        super().__init__("arriving-replies", cache=False)
        self.late = late

    async def chat(self, messages, *, budget=None, ledger=None, **kwargs):
        from agents.llm.client import ChatResult, Usage

        budget.check()
        budget.calls += 1
        repair = messages[-1]["content"].startswith("That action was rejected")
        await asyncio.sleep(0.2 if self.late in messages[0]["content"] and not repair else 0)
        budget.tokens += 100
        usage = Usage(calls=1, prompt_tokens=90, completion_tokens=10)
        ledger.add(usage)
        rejected = "trader_1" in messages[0]["content"] and not repair
        return ChatResult("ACTION: invest group 999" if rejected else "ACTION: wait", usage, self.model)


def test_the_token_budget_stops_at_the_same_step_whatever_order_replies_arrive_in():
    """Found by review: a repair call was checked against however many of the other agents' replies had landed, so one
    seed stopped at step 0 or 1 depending on network timing. The token budget is decided at step boundaries now: the
    same replies, the same episode."""
    results = {}
    for late in ("trader_1", "trader_2"):
        env = teamenvs.make("day_trader_v0")
        policies = make_llm_policies(env, "arriving-replies", client=_Arriving(late), token_budget=250)
        results[late] = agents.run_episode(env, policies, seed=0)
    assert {r.status for r in results.values()} == {"budget"}
    assert [r.steps for r in results.values()] == [1, 1]  # step 0 began within the budget and is played whole
    assert results["trader_1"].usage == results["trader_2"].usage


# ---------------------------------------------------------------------------- mixed teams


@pytest.mark.parametrize("budget", [{"max_calls": 10}, {"token_budget": 3000}])
def test_a_budgeted_episode_plays_alike_with_the_cache_cold_or_warm(server, tmp_path, budget):
    # found by review: cache hits were free, so the warm rerun of a budgeted episode played twice as far (6 steps
    # against 3 under 10 calls); a hit now counts as the call it stands for, with its tokens
    def play(name):
        env = teamenvs.make("day_trader_v0")
        policies = make_llm_policies(env, "random-valid", base_url=server.url, cache_dir=tmp_path / "cache", **budget)
        return agents.run_episode(env, policies, seed=0, log_dir=tmp_path / name)

    cold, warm = play("cold"), play("warm")
    assert cold.status == warm.status == "budget" and cold.steps == warm.steps
    assert warm.usage["total"]["cached"] == warm.usage["total"]["calls"] > 0
    for key in ("calls", "prompt_tokens", "completion_tokens"):
        assert warm.usage["total"][key] == cold.usage["total"][key]
    actions = [[{a: d["raw_action"] for a, d in s["agents"].items()} for s in step_records(read_log(next((tmp_path / name).glob("*.jsonl"))))]
               for name in ("cold", "warm")]
    assert actions[0] == actions[1]


def test_a_team_mixing_models(server):
    env = teamenvs.make("day_trader_v0")
    fast = LLMClient("random-valid", base_url=server.url, cache=False)
    slow = LLMClient("random-valid+latency=1", base_url=server.url, cache=False)
    commands = env.unwrapped.commands
    models = {}
    policies = {}
    for i, agent in enumerate(env.possible_agents):
        client = fast if i == 0 else slow
        models[agent] = client.model
        policies[agent] = LLMPolicy(client=client, commands=commands)
    result = agents.run_episode(env, policies, seed=0)
    assert result.records[-1]["type"] == "end" and not env.agents
    calls = {a: 0 for a in env.possible_agents}
    for record in step_records(result.records):
        for agent, entry in record["agents"].items():
            if acted(entry):
                assert entry["rationale"] == RATIONALE
                calls[agent] += entry["usage"]["calls"]
    usage = result.usage
    assert set(usage["agents"]) == set(env.possible_agents)
    for agent in env.possible_agents:
        assert usage["agents"][agent]["calls"] == calls[agent] > 0
    assert usage["total"]["calls"] == sum(calls.values())
    first = env.possible_agents[0]
    assert fast.requests == calls[first]
    assert slow.requests == sum(c for a, c in calls.items() if a != first)
    assert repr(policies[first]) == f"LLMPolicy(model='random-valid', agent={first!r})"


# ---------------------------------------------------------------------------- the CLI


def test_cli_runs_llm_policy_on_the_builtin_server(tmp_path, capsys):
    code = main(["run", "day_trader_v0", "--policy", "llm", "--model", "random-valid", "--log-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "built-in offline server" in err and "127.0.0.1" in err
    assert not any((tmp_path / "default-cache").rglob("*.json"))  # its port is new each run: replies are not cached
    assert "model usage" in out
    assert "llm-random-valid" in out
    logs = list(tmp_path.glob("*.jsonl"))
    assert len(logs) == 1
    records = read_log(logs[0])
    assert records[-1]["type"] == "end" and records[-1]["usage"]["total"]["calls"] > 0
    steps = list(step_records(records))
    assert steps and all(e["rationale"] == RATIONALE for s in steps for e in s["agents"].values() if acted(e))


def test_cli_caches_an_endpoint_it_is_given_at_temperature_0(tmp_path, capsys, server):
    code = main(["run", "commons_v0", "--policy", "llm", "--model", "random-valid", "--base-url", server.url,
                 "--max-steps", "1", "--log-dir", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    assert list((tmp_path / "default-cache" / "llm").glob("*.json")), "the CLI caches at temperature 0, under TEAMENVS_CACHE"


def test_cli_llm_policy_needs_a_model(tmp_path, capsys):
    code = main(["run", "day_trader_v0", "--policy", "llm", "--log-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--policy llm needs --model" in err


def test_cli_refuses_a_model_the_builtin_server_does_not_have(tmp_path, capsys):
    code = main(["run", "day_trader_v0", "--policy", "llm", "--model", "gpt-4o", "--log-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "gpt-4o" in err and "random-valid" in err and "--base-url https://api.openai.com/v1" in err
    assert not list(tmp_path.glob("*.jsonl"))  # refused before any episode started


def test_cli_unknown_model_at_an_endpoint_exits_1_with_its_reason(server, tmp_path, capsys):
    code = main(["run", "day_trader_v0", "--policy", "llm", "--model", "gpt-4o", "--base-url", server.url, "--log-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1
    assert "gpt-4o" in err and "random-valid" in err and "echo" in err


def test_cli_model_without_llm_policy(tmp_path, capsys):
    code = main(["run", "day_trader_v0", "--model", "random-valid", "--log-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--policy llm" in err


def test_cli_max_calls_stops_cleanly_with_a_warning(tmp_path, capsys):
    code = main(["run", "day_trader_v0", "--policy", "llm", "--model", "random-valid", "--max-calls", "2",
                 "--log-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0
    assert "warning: seed 0: stopped after 0 step(s)" in err and "budget of 2 model calls" in err
    assert "model usage (all episodes): calls 2" in out  # a call the budget refuses is never sent
    records = read_log(next(tmp_path.glob("*.jsonl")))
    assert records[-1]["type"] == "end" and records[-1]["status"] == "budget"


def test_cli_run_takes_max_steps_timeout_concurrency_and_constrain(tmp_path, capsys):
    # DayTrader: 30 rounds, so the episode lasts past 3 steps whatever the draws (a commons lake may collapse in month 1)
    code = main(["run", "day_trader_v0", "--policy", "llm", "--model", "random-valid", "--max-steps", "3", "--timeout", "5",
                 "--concurrency", "1", "--constrain", "json", "--log-dir", str(tmp_path)])
    assert code == 0
    records = read_log(next(tmp_path.glob("*.jsonl")))
    assert records[-1]["steps"] == 3
    sources = {e["source"] for r in step_records(records) for e in r["agents"].values() if acted(e)}
    assert sources == {"constrained json"}
    capsys.readouterr()
    assert main(["run", "commons_v0", "--constrain", "json"]) == 2  # a usage error
    assert re.search(r"--constrain .*goe?s? with --policy llm", capsys.readouterr().err)


# ---------------------------------------------------------------------------- constrained decoding


@pytest.mark.parametrize("env_id", teamenvs.list_envs())
def test_constrained_json_replies_always_parse(server, env_id):
    """With `constrain="json"` every call carries the JSON schema of the agent's valid commands now;
    the built-in server answers an instance of it (as a constraining server does), so no reply is
    ever a parse error and no repair is needed; the log says where each action came from."""
    env = teamenvs.make(env_id)
    policies = policies_for(env, server, constrain="json", max_repairs=0)
    result = agents.run_episode(env, policies, seed=1, max_steps=25)
    acting = 0
    for record in step_records(result.records):
        for entry in record["agents"].values():
            if not acted(entry):
                continue
            acting += 1
            assert entry["source"] == "constrained json"
            assert json.loads(entry["reply"])["action"]["command"]
            assert entry["action"]["ok"] or entry["action"]["kind"] == "rejected", entry  # the rules may still refuse
    assert acting > 0


def test_constrained_requests_take_each_server_familys_field():
    from agents.llm.policy import constrained_request
    from teamenvs.core.constrain import constraint_for

    env = teamenvs.make("commons_v0")
    _, infos = env.reset(seed=0)
    forms = infos[env.agents[0]]["valid_actions"]
    constraint = constraint_for(forms)
    assert constrained_request("off", forms) == {}
    assert constrained_request("json", forms) == {"response_format": constraint.response_format()}
    assert constrained_request("json_object", forms) == {"response_format": {"type": "json_object", "schema": constraint.json_schema}}
    assert constrained_request("grammar", forms) == {"extra_body": {"grammar": constraint.gbnf}}
    assert constrained_request("regex", forms) == {"extra_body": {"guided_regex": constraint.regex}}
    assert constrained_request("json", ()) == {}  # nothing to decide: an unconstrained call
    with pytest.raises(ValueError, match="constrain must be one of"):
        LLMPolicy("random-valid", constrain="yes")


def test_a_grammar_constrained_call_sends_the_grammar_and_logs_its_source(server):
    sent = []

    class Recording(LLMClient):
        async def chat(self, messages, **kwargs):
            sent.append(kwargs)
            return await super().chat(messages, **kwargs)

    env = teamenvs.make("commons_v0")
    client = Recording("random-valid", base_url=server.url, cache=False)
    policies = make_llm_policies(env, "random-valid", client=client, constrain="grammar")
    result = agents.run_episode(env, policies, seed=0, max_steps=3)
    assert sent and all("root ::= reasoning" in kw["extra_body"]["grammar"] for kw in sent)
    sources = {e["source"] for r in step_records(result.records) for e in r["agents"].values() if acted(e)}
    assert sources == {"constrained action line"}


@pytest.mark.parametrize(
    "reply, source",
    [
        ('{"reasoning": "my action: wait", "action": {"command": "harvest", "args": {"amount": 3}}}', "json"),
        ('{"action": "wait"}', "json"),
        ("thinking\nACTION: wait", "action line"),
        ("wait", "single line"),
        ("I would wait.\nYes, wait.", "prose"),
    ],
)
def test_read_reply_says_where_the_action_came_from(reply, source):
    from agents.llm.policy import read_reply

    assert read_reply(reply)[2] == source


OBSERVATION = ("Fishery, month 1/12, harvest phase. You are fisher_1 (5 fishers).\n"
               "Your last action: harvest 10 (accepted).\nNow: harvest <amount 0-100> | wait")


@pytest.mark.parametrize(
    "reply, action, source",
    [
        # copies of the observation are not the model's choice: nothing of its own, no action
        ("Your last action: harvest 10 (accepted).", "", "echo"),
        ("  your LAST action: harvest 10 (accepted)  \n**Now: harvest <amount 0-100> | wait**", "", "echo"),
        # its own words beside the copies are read alone
        ("Your last action: harvest 10 (accepted).\nI will harvest 4 this time.", "I will harvest 4 this time.", "single line"),
        ("Your last action: harvest 10 (accepted).\nI think so.\nLet me wait.", "I think so.\nLet me wait.", "prose"),
        # short replies are never taken for copies, even when the prompt holds them; an ACTION line is always read
        ("wait", "wait", "single line"),
        ("Your last action: harvest 10 (accepted).\nACTION: harvest 3", "harvest 3", "action line"),
    ],
)
def test_read_reply_leaves_out_lines_copied_from_the_prompt(reply, action, source):
    from agents.llm.policy import PromptLines, read_reply

    echoed = PromptLines("Valid actions now:\n- wait: do nothing this turn (e.g. wait)", OBSERVATION)
    assert read_reply(reply, echoed)[0::2] == (action, source)
    assert read_reply(reply)[2] != "echo"  # without the prompt nothing is a copy


def test_an_echoing_model_gets_no_action_and_is_told_why(server):
    """A model that repeats its observation is not credited with the command in it: the env sees no
    action (counted invalid), the repair turn says why, and the log's source says "echo"."""
    from agents.llm.client import ChatResult, Usage

    class Echo(LLMClient):
        async def chat(self, messages, **kwargs):
            observation = messages[1]["content"].split("Your observation now:\n", 1)[1]
            line = next(l for l in observation.splitlines() if l.startswith("Lake:"))
            if kwargs.get("ledger") is not None:
                kwargs["ledger"].add(Usage(calls=1))
            return ChatResult(line, Usage(calls=1), self.model, finish_reason="stop")

    env = teamenvs.make("commons_v0")
    policies = make_llm_policies(env, "echo", client=Echo("echo", base_url=server.url, cache=False), max_repairs=1)
    result = agents.run_episode(env, policies, seed=0, max_steps=1)
    entries = [e for r in step_records(result.records) for e in r["agents"].values() if acted(e)]
    assert entries and all(e["source"] == "echo" for e in entries)
    assert all(e["repairs"] == ["your reply only repeated lines of your prompt: write your own action"] for e in entries)
    assert all(not e["action"]["ok"] for e in entries)


def test_a_suite_llm_policy_can_be_constrained(server, tmp_path):
    from benchmarks.bench import run_bench
    from benchmarks.suite import load_suite

    path = tmp_path / "constrained.yaml"
    path.write_text("name: constrained\nseeds: 1\nmax_steps: 2\ngroups:\n  - title: commons\n    env: commons_v0\n"
                    "    conditions: [baseline]\n    policies: [{label: llm-json, policy: llm, constrain: json}]\n", encoding="utf-8")
    outcome = run_bench(load_suite(str(path)), tmp_path / "out", model="random-valid", base_url=server.url, progress=False,
                        report=False, timeout=5)
    assert not outcome.failed
    records = read_log(next((tmp_path / "out" / "logs").glob("*.jsonl.gz")))
    assert records[0]["run"]["policy"]["constrain"] == "json"
    assert {e["source"] for r in step_records(records) for e in r["agents"].values() if acted(e)} == {"constrained json"}


def test_queue_time_is_reported_apart_from_latency_and_a_cut_reply_is_logged(server):
    import asyncio

    client = LLMClient("random-valid+latency=100", base_url=server.url, cache=False, concurrency=1)

    async def two_at_once():
        try:
            return await asyncio.gather(*(client.chat([{"role": "user", "content": f"q{i}"}]) for i in range(2)))
        finally:
            await client.aclose()

    first, second = sorted(asyncio.run(two_at_once()), key=lambda r: r.usage.queue_s)
    assert first.usage.queue_s < 0.05 and second.usage.queue_s >= 0.09  # it waited for the first call's slot
    assert second.usage.latency_s < 0.5 and "queue_s" in second.usage.to_json()
    env = teamenvs.make("commons_v0")
    short = LLMClient("random-valid", base_url=server.url, cache=False, max_tokens=3)  # the per-call output limit
    result = agents.run_episode(env, make_llm_policies(env, "random-valid", client=short, max_repairs=0), seed=0, max_steps=1)
    entries = [e for r in step_records(result.records) for e in r["agents"].values() if acted(e)]
    assert entries and all(e["finish_reason"] == "length" and len(e["reply"]) <= 12 for e in entries)


# ---------------------------------------------------------------------------- memory


def acted_steps(result) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in step_records(result.records):
        for agent, entry in record["agents"].items():
            counts[agent] = counts.get(agent, 0) + acted(entry)
    return counts


@pytest.mark.parametrize("keep", [False, True])
def test_reusing_policies_over_seeds_starts_each_episode_with_a_fresh_memory_unless_kept(server, keep):
    env = teamenvs.make("commons_v0")
    policies = policies_for(env, server, memory=True, keep_memory=keep, max_repairs=0)
    lead = env.possible_agents[0]
    policies[lead].memory.add("I am the team's treasurer.", 0, pinned=True)  # stored before any episode: it stays
    first = agents.run_episode(env, policies, seed=0, max_steps=3)
    after_first = {a: len(p.memory) for a, p in policies.items()}
    assert all(after_first[a] == (a == lead) + 2 * n for a, n in acted_steps(first).items())  # an observation and an action a step
    second = agents.run_episode(env, policies, seed=1, max_steps=3)
    for agent, n in acted_steps(second).items():
        carried = after_first[agent] if keep else int(agent == lead)
        assert len(policies[agent].memory) == carried + 2 * n, (agent, keep)
    assert any(m.text == "I am the team's treasurer." and m.pinned for m in policies[lead].memory.memories())
    before = len(policies[lead].memory)
    policies[lead].reset(lead, "briefing")  # a third episode begins
    texts = [m.text for m in policies[lead].memory.memories()]
    if keep:
        assert len(texts) == before
    else:
        assert texts == ["I am the team's treasurer."]


def test_a_kept_memory_ages_its_earlier_episodes_memories(server):
    # found by review: the step restarted at 0 each episode, so the memories of the episode before (stored at later
    # steps) counted as newer than this episode's and were retrieved first
    env = teamenvs.make("commons_v0")
    policies = policies_for(env, server, memory=True, keep_memory=True, max_repairs=0)
    lead = env.possible_agents[0]
    first = agents.run_episode(env, policies, seed=0, max_steps=6)
    played = acted_steps(first)[lead]
    first_steps = {m.step for m in policies[lead].memory.memories()}
    assert max(first_steps) == played - 1
    agents.run_episode(env, policies, seed=1, max_steps=2)
    second_steps = {m.step for m in policies[lead].memory.memories()} - first_steps
    assert second_steps and min(second_steps) == played  # this episode's memories come after the last one's


def test_memory_is_retrieved_into_the_prompt(server):
    sent = []

    class Recording(LLMClient):
        async def chat(self, messages, **kwargs):
            sent.append(messages[-1]["content"])
            return await super().chat(messages, **kwargs)

    env = teamenvs.make("commons_v0")
    client = Recording("random-valid", base_url=server.url, cache=False)
    policies = make_llm_policies(env, "random-valid", client=client, memory={"capacity": 3, "decay": 0.9})
    agents.run_episode(env, policies, seed=0, max_steps=4)
    streams = [p.memory for p in policies.values()]
    assert len({id(s) for s in streams}) == len(streams)  # one stream per agent
    assert all(s.config.capacity == 3 and s.config.decay == 0.9 and len(s) == 3 for s in streams)
    assert any("Things you remember:\n- " in prompt for prompt in sent)


def test_a_long_prose_reply_is_remembered_by_its_start_only():
    # found by review: a reply with no ACTION line is its own action, and memory kept it whole ("I did: <1 MB>"), so
    # every later prompt that retrieved it carried it
    from agents.llm.client import ChatResult, Usage
    from agents.llm.policy import REPAIR_ECHO_CHARS, LLMPolicy
    from agents.memory import MemoryStream

    class Prose:
        max_tokens = 512

        async def chat(self, messages, **kwargs):
            return ChatResult("I think it over. " * 6_000 + "So I will wait.", Usage(calls=1), "fake", finish_reason="stop")

    env = teamenvs.make("day_trader_v0")
    observations, infos = env.reset(seed=0)
    agent = env.agents[0]
    policy = LLMPolicy(client=Prose(), commands=env.unwrapped.commands, memory=MemoryStream(), max_repairs=0)
    policy.reset(agent, env.unwrapped.briefing(agent))
    action = policy.act(observations[agent], infos[agent])
    assert len(action) > 100_000  # the env reads its command from the whole reply
    [did] = [m.text for m in policy.memory.retrieve("I did", 1, k=10) if m.text.startswith("I did: ")]
    assert did == "I did: " + action[:REPAIR_ECHO_CHARS]


def test_make_llm_policies_memory_option_and_its_errors(server):
    env = teamenvs.make("commons_v0")
    assert all(p.memory is None and not p.keep_memory for p in policies_for(env, server).values())
    assert all(p.memory is None for p in policies_for(env, server, memory=False).values())
    assert all(p.keep_memory for p in policies_for(env, server, memory=True, keep_memory=True).values())
    with pytest.raises(TypeError, match="memory must be True, False, None or a mapping"):
        policies_for(env, server, memory="yes")
    with pytest.raises(TypeError, match="unknown MemoryStream option"):
        policies_for(env, server, memory={"capacty": 3})

    class Notes:  # a memory without get_state/set_state cannot be put back each episode
        async def aadd(self, *args, **kwargs): ...
        async def aretrieve(self, *args, **kwargs): return []

    with pytest.raises(TypeError, match="pass keep_memory=True"):
        LLMPolicy("random-valid", memory=Notes())
    assert LLMPolicy("random-valid", memory=Notes(), keep_memory=True).keep_memory


def test_a_suite_llm_policy_can_have_memory(server, tmp_path, monkeypatch):
    from agents.llm import policy as policy_module
    from benchmarks.bench import run_bench
    from benchmarks.suite import load_suite

    made, original = [], policy_module.make_llm_policies

    def recording(*args, **kwargs):
        made.append(original(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(policy_module, "make_llm_policies", recording)
    path = tmp_path / "memory.yaml"
    path.write_text("name: remembering\nseeds: 1\nmax_steps: 2\ngroups:\n  - title: commons\n    env: commons_v0\n"
                    "    conditions: [baseline]\n    policies:\n      - llm\n      - {label: llm-memory, policy: llm, memory: {capacity: 50}}\n",
                    encoding="utf-8")
    outcome = run_bench(load_suite(str(path)), tmp_path / "out", model="random-valid", base_url=server.url, progress=False,
                        report=False, timeout=5)
    assert not outcome.failed and len(made) == 2
    with_memory = [p for p in made if all(q.memory is not None for q in p.values())]
    assert len(with_memory) == 1 and all(q.memory.config.capacity == 50 and len(q.memory) > 0 for q in with_memory[0].values())
    headers = {records[0]["run"]["policy"]["label"]: records[0]["run"]["policy"]
               for records in map(read_log, (tmp_path / "out" / "logs").glob("*.jsonl.gz"))}
    assert headers["llm-memory"]["memory"] == {"capacity": 50}
    assert "memory" not in headers["llm"]  # a run without memory keeps the header it had


# ---------------------------------------------------------------------------- prompts that fit


class _Scripted(LLMClient):
    """A client whose replies are given in advance (no server): records every prompt it is sent."""

    def __init__(self, replies, **kwargs):
        super().__init__("scripted-replies", cache=False, **kwargs)
        self.replies, self.sent = list(replies), []

    async def chat(self, messages, **kwargs):
        from agents.llm.client import ChatResult, Usage

        self.sent.append([dict(m) for m in messages])
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        ledger = kwargs.get("ledger")
        if ledger is not None:
            ledger.add(Usage(calls=1))
        return ChatResult(reply, Usage(calls=1), self.model)


def test_a_repair_turn_repeats_the_action_read_not_the_whole_reply():
    env = teamenvs.make("day_trader_v0")
    observations, infos = env.reset(seed=0)
    rambling = "Let me think. " * 300 + "\nACTION: invest group 999"
    client = _Scripted([rambling, "ACTION: invest group 40"])
    policy = LLMPolicy(client=client, max_repairs=1)
    policy.reset("trader_1", env.unwrapped.briefing("trader_1"))
    assert policy.act(observations["trader_1"], infos["trader_1"]) == "invest group 40"
    second = client.sent[1]
    assert second[2] == {"role": "assistant", "content": "ACTION: invest group 999"}
    assert "from 15 to 100" in second[3]["content"]


def test_prompts_are_cut_to_the_context_window_newest_error_and_observation_kept():
    from agents.llm.policy import CUT_MARK, estimated_tokens, fit_messages

    messages = [{"role": "system", "content": "rules " * 200}, {"role": "user", "content": "old " * 3000 + "OBSERVATION NOW"}]
    for k in range(3):
        messages += [{"role": "assistant", "content": f"ACTION: bad {k} " + "x" * 800}, {"role": "user", "content": f"rejected {k}"}]
    fitted = fit_messages(messages, 1500)
    assert estimated_tokens(fitted) <= 1500
    assert fitted[0] == messages[0]  # the system message is whole
    assert fitted[1]["content"].startswith(CUT_MARK) and fitted[1]["content"].endswith("OBSERVATION NOW")
    assert [m["content"] for m in fitted[2:]] == [messages[-2]["content"], "rejected 2"]  # only the newest repair
    assert fit_messages(messages[:2], 10**6) == messages[:2]  # nothing to cut


def test_a_policy_with_a_context_window_never_sends_a_longer_prompt_and_retries_a_context_400():
    from agents.llm.client import LLMError
    from agents.llm.policy import estimated_tokens

    env = teamenvs.make("search_rescue_v0", preset="hard")
    observations, infos = env.reset(seed=0)
    agent = env.agents[0]
    client = _Scripted(["ACTION: wait"] * 3, max_tokens=128)
    policy = LLMPolicy(client=client, context_window=1100, window=3)  # the prompts grow: about 740, 890, 1030 tokens
    policy.reset(agent, env.unwrapped.briefing(agent))
    for _ in range(3):
        policy.act(observations[agent], infos[agent])
    assert all(estimated_tokens(sent) <= 1100 - 128 for sent in client.sent)
    assert any(m["content"].startswith("[... earlier part") for m in client.sent[-1])  # the third prompt had to be cut
    refusing = _Scripted([LLMError("HTTP 400: This model's maximum context length is 2048 tokens", status=400,
                                   server_message="This model's maximum context length is 2048 tokens"), "ACTION: wait"])
    unbounded = LLMPolicy(client=refusing)
    unbounded.reset(agent, env.unwrapped.briefing(agent))
    assert unbounded.act(observations[agent], infos[agent]) == "wait"
    assert estimated_tokens(refusing.sent[1]) < estimated_tokens(refusing.sent[0])
    with pytest.raises(ValueError, match="context_window"):
        LLMPolicy(client=client, context_window=10)


# ---------------------------------------------------------------------------- synchronous act()


def _one_policy(server, **options):
    env = teamenvs.make("day_trader_v0")
    observations, infos = env.reset(seed=0)
    agent = "trader_1"
    policy = policies_for(env, server, window=1, **options)[agent]  # window 1: the same prompt every call
    policy.reset(agent, env.unwrapped.briefing(agent))
    return policy, observations[agent], infos[agent]


def _pools(client):
    """The client's connection pools, by event loop."""
    return {loop: pools for loop, (pools, _) in client._per_loop.items()}


def test_act_reuses_one_loop_and_one_connection_and_closes_them(server):
    policy, observation, info = _one_policy(server)
    actions = [policy.act(observation, info) for _ in range(6)]
    assert len(set(actions)) == 1 and actions[0]  # the same request, the same answer
    pools = _pools(policy.client)
    assert len(pools) == 1, "every act() must run on the same loop"
    [[pool]] = pools.values()
    assert pool.opened == 1, f"{pool.opened} connections for 6 calls"
    assert policy.client.requests == 6
    policy.close()
    assert not _pools(policy.client)
    assert policy.act(observation, info) == actions[0]  # usable again after close
    policy.close()


def test_act_works_inside_a_running_loop_and_from_threads(server):
    from concurrent.futures import ThreadPoolExecutor

    policy, observation, info = _one_policy(server)
    expected = policy.act(observation, info)

    async def in_a_notebook():  # a running loop in this thread: the call goes to the background loop
        return policy.act(observation, info)

    assert asyncio.run(in_a_notebook()) == expected
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(lambda _: policy.act(observation, info), range(8))) == [expected] * 8
    policy.close()


def test_act_costs_about_the_cpu_of_aact(server):
    """Issue 20: act() costs at most 1.5x the CPU of an awaited aact(), the same policy and prompt.

    The clock is this thread's CPU time: act() runs its loop on the calling thread, and the in-process
    server's threads (whose CPU process_time would add to both, and whose accounting on a busy VM jumps
    by more than the difference measured here) are left out, as the benchmark leaves out its server
    process. Calls alternate one by one and each side's median is compared, so a burst of load from the
    other test workers falls on both sides alike and an outlier call on either side decides nothing.
    Measured on 2 cores: 1.1-1.3x idle, 0.9-1.45x with both cores busy; a fresh loop per call is ~4x."""
    policy, observation, info = _one_policy(server)
    loop = asyncio.new_event_loop()

    def synchronous():
        started = time.thread_time()
        policy.act(observation, info)
        return time.thread_time() - started

    async def awaited():
        started = time.thread_time()
        await policy.aact(observation, info)
        return time.thread_time() - started

    sync, asynchronous = [], []
    try:
        for round_ in range(310):
            cpu_sync, cpu_async = synchronous(), loop.run_until_complete(awaited())
            if round_ >= 10:  # warm-up: connections opened, caches filled
                sync.append(cpu_sync)
                asynchronous.append(cpu_async)
        loop.run_until_complete(policy.aclose())
    finally:
        loop.close()
        policy.close()
    act_ms, aact_ms = statistics.median(sync) * 1e3, statistics.median(asynchronous) * 1e3
    assert act_ms < 1.5 * aact_ms, f"act() {act_ms:.3f} ms against aact() {aact_ms:.3f} ms of CPU per call"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_act_in_a_forked_child_leaves_the_parents_connections_alone(server):
    import multiprocessing

    policy, observation, info = _one_policy(server)
    expected = policy.act(observation, info)  # the parent has a loop and a kept connection
    context = multiprocessing.get_context("fork")  # as AsyncVectorEnv's default on Linux
    answers = context.Queue()
    child = context.Process(target=lambda: answers.put([policy.act(observation, info) for _ in range(2)]))
    child.start()
    child.join(20)
    assert child.exitcode == 0 and answers.get(timeout=5) == [expected] * 2
    assert policy.act(observation, info) == expected  # the parent's loop and connection still work
    [[pool]] = _pools(policy.client).values()
    assert pool.opened == 1
    policy.close()


def test_one_command_list_per_prompt_with_live_examples_and_the_rules_shared_by_the_team(server):
    """The briefing's command list (the commands of the whole game) is not sent: each user message lists
    the commands valid now, with examples from the live situation, once."""
    from teamenvs.core.text import COMMANDS_HEADING, Briefing

    env = teamenvs.make("commons_v0")
    observations, infos = env.reset(seed=0)
    briefing = env.unwrapped.briefing("fisher_1")
    assert isinstance(briefing, Briefing) and str(briefing).startswith(briefing.rules)
    assert COMMANDS_HEADING in briefing and briefing.commands in briefing  # a plain-text policy still reads it all
    assert pickle.loads(pickle.dumps(briefing)).commands == briefing.commands
    policy = LLMPolicy("echo", base_url=server.url, cache=False, commands=env.unwrapped.commands, max_repairs=0)
    policy.reset("fisher_1", briefing)
    policy.act(observations["fisher_1"], infos["fisher_1"])
    user = policy.last_extras["reply"]  # echo: the user message (its action is read from none of it: all copied)
    assert policy.last_extras["source"] == "echo"
    prompt = policy.system_prompt() + "\n" + user
    assert COMMANDS_HEADING not in prompt and "Valid actions now" not in policy.system_prompt()
    assert prompt.count("Valid actions now:") == 1
    assert prompt.count("- harvest <amount 0-100>:") == 1 and "(e.g. harvest " in user
    assert "say <message>" not in prompt  # no messages in the harvest phase: not offered


def test_a_plain_text_briefing_is_used_whole():
    client = _Scripted(["ACTION: wait"])
    policy = LLMPolicy(client=client, theory="T.")
    policy.reset("a", "You are a. Commands: wait")
    assert policy.system_prompt() == "T.\n\nYou are a. Commands: wait"


def test_context_window_auto_asks_the_server_and_no_request_is_refused(server):
    env = teamenvs.make("search_rescue_v0")
    policies = make_llm_policies(env, "random-valid+ctx=700", server.url, cache=False, max_tokens=64, context_window="auto")
    before = server.requests
    result = agents.run_episode(env, policies, seed=0, max_steps=4)
    assert result.status == "done" and result.steps == 4
    assert asyncio.run(policies["medic"].client.context_window()) == 700
    calls = result.usage["total"]["calls"]
    assert calls == sum(p.step for p in policies.values())  # one call per decision: none was refused
    assert server.requests - before == calls


def test_a_window_stated_in_a_refusal_is_learned_for_the_next_calls(server):
    """Without a window, the first too-long prompt is refused; the retry and every later call fit the window
    the refusal stated."""
    env = teamenvs.make("search_rescue_v0")
    policies = make_llm_policies(env, "random-valid+ctx=600", server.url, cache=False, max_tokens=64)
    result = agents.run_episode(env, policies, seed=0, max_steps=4)
    assert result.status == "done" and result.steps == 4
    calls = result.usage["total"]["calls"]
    decisions = sum(p.step for p in policies.values())
    assert 0 < calls - decisions <= len(env.possible_agents)  # at most one refusal per agent, at its first call
    assert {p._stated_window for p in policies.values()} <= {600, None}


def test_only_a_servers_own_too_long_refusal_cuts_the_prompt():
    """Found by review: the whole error's text was searched, model name and endpoint included, so a model named
    "long-context-model" refused with a 429 "Rate limit exceeded" had its prompt cut and sent again. Only the server's
    message of a 400, 413 or 422 is read now."""
    from agents.llm.client import LLMError
    from agents.llm.policy import context_exceeded

    env = teamenvs.make("day_trader_v0")
    observations, infos = env.reset(seed=0)
    limited = LLMError("model 'long-context-model' at http://h/v1 failed: HTTP 429: Rate limit exceeded, retry later",
                       status=429, server_message="Rate limit exceeded, retry later")
    client = _Scripted([limited, "ACTION: wait"])
    policy = LLMPolicy(client=client)
    policy.reset("trader_1", env.unwrapped.briefing("trader_1"))
    with pytest.raises(LLMError, match="Rate limit exceeded"):
        policy.act(observations["trader_1"], infos["trader_1"])
    assert len(client.sent) == 1  # not sent again cut
    too_long = "This model's maximum context length is 2048 tokens"
    assert context_exceeded(LLMError(too_long, status=400, server_message=too_long))
    assert context_exceeded(LLMError("", status=413, server_message="prompt exceeds the context window"))
    assert not context_exceeded(LLMError(too_long, status=500, server_message=too_long))
    assert not context_exceeded(LLMError(f"model 'max-context-length' failed: HTTP 400: bad temperature", status=400,
                                         server_message="bad temperature"))


def test_a_window_with_no_room_for_a_prompt_beside_the_output_limit_is_a_clear_error(server):
    """Found by review: a window stated by the server (`context_window="auto"`) or by its too-long refusal that was not
    128 tokens larger than the output limit cut every prompt to nothing, without a word. The rule the command line
    applies to a window given there (`check_token_options`) now holds for those too."""
    from agents.llm.client import LLMError

    env = teamenvs.make("day_trader_v0")
    observations, infos = env.reset(seed=0)
    policy = LLMPolicy("random-valid+ctx=300", base_url=server.url, cache=False, max_tokens=200, context_window="auto")
    policy.reset("trader_1", env.unwrapped.briefing("trader_1"))
    with pytest.raises(ConfigError, match="context window of 300 tokens leaves no room for a prompt beside the output "
                                          "limit of 200 tokens"):
        policy.act(observations["trader_1"], infos["trader_1"])
    assert policy.client.requests == 0
    too_long = "This model's maximum context length is 600 tokens"
    client = _Scripted([LLMError(too_long, status=400, server_message=too_long), "ACTION: wait"], max_tokens=512)
    refused = LLMPolicy(client=client)
    refused.reset("trader_1", env.unwrapped.briefing("trader_1"))
    with pytest.raises(ConfigError, match=r"refusal states it \(600\).* leaves no room for a prompt"):
        refused.act(observations["trader_1"], infos["trader_1"])
    assert len(client.sent) == 1  # not sent again cut to nothing


def test_stated_windows_are_read_from_each_server_family():
    from agents.llm.client import LLMError
    from agents.llm.policy import stated_window

    assert stated_window(LLMError("HTTP 400: This model's maximum context length is 4096 tokens. However, you requested")) == 4096
    assert stated_window(LLMError("Requested tokens (3000) exceed context window of 2048")) == 2048
    assert stated_window(LLMError("the request exceeds the available context size (8192 tokens)")) == 8192
    assert stated_window(LLMError("context length exceeded")) is None


def test_cli_token_options_say_what_they_bound(tmp_path, capsys):
    """--token-budget bounds an episode, --max-output-tokens each reply; --max-tokens, ambiguous, is refused."""
    with pytest.raises(SystemExit) as stop:
        main(["run", "day_trader_v0", "--policy", "llm", "--model", "random-valid", "--max-tokens", "100"])
    assert stop.value.code == 2 and "--token-budget N bounds the tokens of a whole episode" in capsys.readouterr().err
    code = main(["run", "day_trader_v0", "--policy", "llm", "--model", "random-valid", "--token-budget", "3000",
                 "--max-output-tokens", "32", "--log-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0 and "budget of 3,000 tokens is spent" in err and "--token-budget ***" not in out + err
    records = read_log(next(tmp_path.glob("*.jsonl")))
    assert records[-1]["status"] == "budget"
    replies = [e["reply"] for r in step_records(records) for e in r["agents"].values() if acted(e)]
    assert replies and all(len(reply) <= 4 * 32 for reply in replies)  # cut at 32 tokens (the server counts 4 characters each)
    for bad, why in ((["--context-window", "300", "--max-output-tokens", "256"], "leaves no room for a prompt"),
                     (["--context-window", "lots"], "expected a number of tokens or 'auto'"),
                     (["--max-output-tokens", "0"], "argument --max-output-tokens: expected a whole number >= 1")):
        try:
            code = main(["run", "day_trader_v0", "--policy", "llm", "--model", "random-valid", *bad])
        except SystemExit as exc:
            code = exc.code
        assert code == 2 and why in capsys.readouterr().err


@pytest.mark.parametrize("env_id", teamenvs.list_envs())
def test_a_teams_system_prompts_share_their_rules_prefix(env_id, server):
    """A server's prefix cache can serve the rules to every agent of a team: the prompts of agents of one role
    agree up to their own sentences, and nothing of the rules is lost or changed in the reordering."""
    env = teamenvs.make(env_id)
    env.reset(seed=0)
    prompts, roles = {}, {}
    for agent in env.possible_agents:
        policy = LLMPolicy("echo", base_url=server.url, cache=False, theory="Teams need trust.")
        briefing = env.unwrapped.briefing(agent)
        policy.reset(agent, briefing)
        prompts[agent] = policy.system_prompt()
        shared, own = team_part_first(briefing.rules)
        assert prompts[agent] == f"Teams need trust.\n\n{shared}\n\n{own}"
        assert sorted((shared + " " + own).split()) == sorted(briefing.rules.split())  # the same words, reordered
        assert own.startswith("You")
        roles.setdefault(shared, []).append(agent)
    # one shared part for the whole team where every agent has the same kind of role; the guide and the follower,
    # and the job fair's recruiters (each with its company's description) and seekers, still share the opening rules
    if env_id in ("map_task_v0", "job_fair_v0"):
        common = os.path.commonprefix(list(prompts.values()))
        assert len(common) >= len("Teams need trust.\n\n") + 400
    else:
        assert len(roles) == 1, f"{env_id}: {len(roles)} different shared parts"


@pytest.mark.parametrize("env_id", ["search_rescue_v0", "shape_factory_v0"])
def test_run_episode_gives_constrained_decoding_the_rules(server, env_id):
    """`agents.run_episode` binds each LLM policy to the env's rules, so a constrained team never names a victim
    it has not found, nor offers shapes it does not hold (unbound, the command language alone admits them: a
    third of the search-and-rescue team's actions and a tenth of the shape factory's were refused in these
    episodes)."""
    env = teamenvs.make(env_id)
    policies = make_llm_policies(env, "random-valid", server.url, constrain="json", cache=False)
    result = agents.run_episode(env, policies, seed=0, max_steps=25)
    assert result.metrics["invalid_action_rate"] == 0.0
    assert all(p.rules_accept is not None for p in policies.values())
    agent, policy = next(iter(policies.items()))
    policy.reset(agent, env.unwrapped.briefing(agent))
    assert policy.rules_accept is None  # a new episode binds its own env's rules


@pytest.mark.parametrize("env_id", teamenvs.list_envs())
def test_no_prompt_line_is_a_bare_command(env_id):
    """`read_reply` takes a reply line equal to a prompt line for a copy, however short: that must never drop a
    genuine command, so no line of any agent's prompt (first steps of random play) is a command by itself."""
    from agents.llm.policy import _echo_key
    from teamenvs.core.commands import Action, CommandSet

    env = teamenvs.make(env_id)
    observations, infos = env.reset(seed=0)
    rng = np.random.default_rng(0)
    policies = make_llm_policies(env, "random-valid", base_url="http://127.0.0.1:9/v1")
    checked = 0
    for _ in range(4):
        for agent in env.agents:
            forms = infos[agent]["valid_actions"]
            if not forms:
                continue
            policies[agent].reset(agent, env.unwrapped.briefing(agent))
            commands = CommandSet([f._command for f in forms])
            prompt = policies[agent].system_prompt() + "\n" + policies[agent].user_prompt(observations[agent], infos[agent])
            for line in filter(_echo_key, prompt.splitlines()):
                parsed = commands.parse(line.strip(), forms[0].situation)
                assert not (isinstance(parsed, Action) and _echo_key(parsed.text) == _echo_key(line)), (agent, line)
                checked += 1
        actions = {a: infos[a]["valid_actions"][int(rng.integers(len(infos[a]["valid_actions"])))].sample(rng)
                   for a in env.agents if infos[a]["needs_action"] and infos[a]["valid_actions"]}
        observations, _, _, _, infos = env.step(actions)
        if not env.agents:
            break
    assert checked > 20


@pytest.mark.parametrize("option, value, says", [
    ("window", 0, "window must be >= 1, got 0"),
    ("window", "3", "window must be an integer, got '3'"),  # was a TypeError from `<`
    ("max_repairs", -1, "max_repairs must be >= 0, got -1"),
    ("memories", 2.5, "memories must be an integer, got 2.5"),
    ("keep_memory", "no", "keep_memory must be true or false, got 'no'"),  # truthy: it kept the memory
    ("persona", ["cautious"], "persona must be text or None"),
    ("theory", 5, "theory must be text or None"),
])
def test_a_policy_option_it_could_not_use_is_refused_by_name(option, value, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        LLMPolicy("random-valid", base_url="http://127.0.0.1:9/v1", cache=False, **{option: value})
    policy = LLMPolicy("random-valid", base_url="http://127.0.0.1:9/v1", cache=False, window=1, max_repairs=0, memories=0,
                       keep_memory=False, persona="You are cautious.", theory=None)
    assert policy.window == 1 and policy.max_repairs == 0
    swept = LLMPolicy("random-valid", base_url="http://127.0.0.1:9/v1", cache=False, window=np.int64(3), max_repairs=np.int64(1),
                      memories=np.int64(0))  # a sweep's values, kept as Python ints
    assert (swept.window, swept.max_repairs, swept.memories) == (3, 1, 0) and type(swept.window) is int


def test_llm_policies_refuse_a_persona_for_no_agent_and_options_beside_a_client():
    """A persona for a misspelt agent was left out without a word (the team played without it), and client options
    given beside a client were dropped; both are errors now that name what is wrong."""
    env = teamenvs.make("day_trader_v0")
    offline = {"base_url": "http://127.0.0.1:9/v1", "cache": False}
    with pytest.raises(ValueError, match=r"personas for agents the env does not have: 'trader1'; agents are trader_1, trader_2, trader_3"):
        make_llm_policies(env, "random-valid", personas={"trader1": "You are cautious."}, **offline)
    with pytest.raises(ValueError, match="personas must be a dict agent -> persona text"):
        make_llm_policies(env, "random-valid", personas=["You are cautious."], **offline)
    client = LLMClient("random-valid", **offline)
    for extra in ({"cache": True}, {"base_url": "http://127.0.0.1:8/v1"}, {"temperature": 0.5}):
        with pytest.raises(ValueError, match=r"pass client options \(.+\) to the LLMClient, not beside an existing client"):
            make_llm_policies(env, "random-valid", client=client, **extra)
    policies = make_llm_policies(env, "random-valid", client=client, window=3, personas={"trader_2": "You are cautious."})
    assert policies["trader_2"].persona == "You are cautious." and policies["trader_1"].persona is None
    assert all(p.client is client and p.window == 3 for p in policies.values())


def test_one_memory_for_two_agents_or_two_episodes_is_refused(server):
    """One MemoryStream given to every trader's policy: each retrieved what the others saw (18 memories in one stream
    after 3 steps), private messages included. Refused, for the team, in the single-agent view's teammates, and across
    episodes run at once; a memory of its own for each agent plays."""
    import gymnasium

    from agents.memory import MemoryStream

    def team(env, memory):
        return {a: LLMPolicy("random-valid", base_url=server.url, cache=False, memory=memory(a)) for a in env.possible_agents}

    env, other = teamenvs.make("day_trader_v0"), teamenvs.make("day_trader_v0")
    shared = MemoryStream()
    with pytest.raises(ValueError, match="the policies of 'trader_1' and 'trader_2' share one memory object: each would "
                                         "retrieve what the other saw"):
        agents.run_episode(env, team(env, lambda a: shared), seed=0, max_steps=2)
    assert len(shared) == 0  # refused before the episode began
    with pytest.raises(ValueError, match="the policies of 'trader_2' and 'trader_3' share one memory object"):
        gymnasium.make("teamenvs/DayTrader-v0", agent="trader_1", teammates={
            a: LLMPolicy("random-valid", base_url=server.url, cache=False, memory=shared) for a in ("trader_2", "trader_3")})
    first = team(env, lambda a: MemoryStream())
    second = {**team(other, lambda a: MemoryStream()), "trader_2": LLMPolicy("random-valid", base_url=server.url, cache=False,
                                                                              memory=first["trader_2"].memory)}
    with pytest.raises(ValueError, match=r"jobs\[1\]'s memory of the policy of 'trader_2' is also in jobs\[0\]"):
        agents.run_episodes([{"env": env, "policies": first, "max_steps": 2}, {"env": other, "policies": second, "max_steps": 2}])
    result = agents.run_episode(env, first, seed=0, max_steps=3)  # a memory of its own for each: plays, each remembering its own
    assert result.steps == 3 and all(len(p.memory) > 0 for p in first.values())


def test_policies_made_for_another_command_language_are_refused(server):
    """LLM policies made for one env and run in another whose actions read otherwise (another paradigm, or a config
    with other amounts or agents): each checked its replies in the wrong language; DayTrader's policies in the commons
    refused 'harvest 10' ("unknown command ... Valid now: invest individual ...", sent to the model as a repair). A
    fresh env of the same config reads alike and plays."""
    baseline = teamenvs.make("day_trader_v0")
    policies = make_llm_policies(baseline, "random-valid", base_url=server.url, cache=False)
    commons = teamenvs.make("commons_v0", n_agents=3)
    with pytest.raises(ValueError, match=re.escape("the policy of 'fisher_1' reads actions in another command language "
                                                   "(invest individual, invest group, wait, say, tell) where this env's is "
                                                   "(harvest, wait, say, tell)")):
        agents.run_episode(commons, dict(zip(commons.possible_agents, policies.values())), seed=0, max_steps=2)
    with pytest.raises(ValueError, match=re.escape("the same commands with other arguments")):
        agents.run_episode(teamenvs.make("day_trader_v0", max_investment=50), policies, seed=0, max_steps=2)
    import gymnasium  # the single-agent view's teammates, made for the 6-agent factory, in one of 8

    small, larger = teamenvs.make("shape_factory_v0"), teamenvs.make("shape_factory_v0", preset="group_size_8")
    with pytest.raises(ValueError, match=re.escape("the policy of 'agent_2' reads actions in another command language (the same "
                                                   "commands with other arguments")):
        gymnasium.make("teamenvs/ShapeFactory-v0", agent="agent_1", preset="group_size_8", teammates={
            a: LLMPolicy("random-valid", base_url=server.url, cache=False, commands=small.unwrapped.commands)
            for a in larger.possible_agents[1:]})
    assert agents.run_episode(teamenvs.make("day_trader_v0"), policies, seed=0, max_steps=2).steps == 2


def test_the_single_agent_view_gives_llm_teammates_the_rules(server, tmp_path):
    """The single-agent view reset its LLM teammates without binding them to the env's rules, as run_episode does: their
    constrained decoding had the command language alone, and named victims they had not found (refused by the rules)."""
    import gymnasium

    from teamenvs.core.recorder import EpisodeRecorder

    view = gymnasium.make("teamenvs/SearchRescue-v0", agent="medic", obs_type="vector", action_type="discrete", teammates={
        a: LLMPolicy("random-valid", base_url=server.url, cache=False, constrain="json") for a in ("engineer", "transporter")})
    rng = np.random.default_rng(0)
    with EpisodeRecorder(tmp_path / "view.jsonl") as recorder, view.unwrapped.team_env.recording(recorder):
        _, info = view.reset(seed=0)
        assert all(p.rules_accept is not None for p in view.unwrapped._teammates.values())
        for _ in range(25):
            _, _, terminated, truncated, info = view.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            if terminated or truncated:
                break
    refused = [entry["action"] for record in step_records(read_log(tmp_path / "view.jsonl"))
               for agent, entry in record["agents"].items() if agent != "medic" and entry["action"].get("ok") is False]
    acted = sum(1 for record in step_records(read_log(tmp_path / "view.jsonl"))
                for agent, entry in record["agents"].items() if agent != "medic" and entry["raw_action"] is not None)
    assert acted > 20 and refused == []


def test_a_failed_question_still_counts_its_calls_and_retries(server):
    # found by review: `ask` (probes, interviews) added its usage only after a reply, where `aact` counts a failed step
    import asyncio

    from agents.llm.client import LLMError

    env = teamenvs.make("commons_v0")
    policies = policies_for(env, server, model="random-valid+p500=1", max_retries=2)
    policy = policies[env.possible_agents[0]]
    policy.reset(env.possible_agents[0], env.briefing(env.possible_agents[0]))
    with pytest.raises(LLMError, match="after 3 attempts"):
        asyncio.run(policy.ask("How is it going?"))
    assert (policy.usage.calls, policy.usage.retries) == (1, 2)


def test_a_reply_cut_off_inside_its_reasoning_plays_no_command_it_names():
    # found by review: a reply stopped at the output limit inside <think> had its action read from the reasoning
    from agents.llm.client import ChatResult, Usage
    from agents.llm.policy import CUT_IN_THINKING

    class Cut(_Scripted):
        async def chat(self, messages, **kwargs):
            result = await super().chat(messages, **kwargs)
            cut = result.text.startswith("<think>") and "</think>" not in result.text
            return ChatResult(result.text, result.usage, self.model, finish_reason="length" if cut else "stop")

    env = teamenvs.make("commons_v0")
    observations, infos = env.reset(seed=0)
    agent = env.possible_agents[0]
    client = Cut(["<think>The lake is full. ACTION: harvest 50 would be greedy, maybe harvest", "ACTION: harvest 10"])
    policy = LLMPolicy(client=client, max_repairs=1)
    policy.reset(agent, env.unwrapped.briefing(agent))
    assert policy.act(observations[agent], infos[agent]) == "harvest 10"
    assert client.sent[1][3]["content"].startswith(f"That action was rejected: {CUT_IN_THINKING}")
    # no repair left: no action at all, not the reasoning's
    client = Cut(["<think>ACTION: harvest 50 or"])
    policy = LLMPolicy(client=client, max_repairs=0)
    policy.reset(agent, env.unwrapped.briefing(agent))
    assert policy.act(observations[agent], infos[agent]) == "" and policy.last_extras["source"] == "cut"
    # a closed block, or a reply that simply ended, reads as before
    client = Cut(["<think>maybe 50</think>\nACTION: harvest 12"])
    policy = LLMPolicy(client=client, max_repairs=0)
    policy.reset(agent, env.unwrapped.briefing(agent))
    assert policy.act(observations[agent], infos[agent]) == "harvest 12"
