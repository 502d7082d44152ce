"""Probes (CollabSim) and the post-episode interview (VIRT-LAB): parsing, metrics, and episodes against the built-in server."""

from __future__ import annotations

import numpy as np
import pytest

import agents
import teamenvs
from agents.embedders import HashingEmbedder
from agents.llm.policy import make_llm_policies
from agents.probes import DIMENSIONS, INTERVIEW_ITEMS, Prober, interview_summary, parse_probe, parse_rating, probe_metrics
from teamenvs.core.recorder import read_log, step_records


def test_parse_probe_reads_json_lines_and_percentages():
    got = parse_probe('Sure. {"task_state": "half done", "teammates": "they invest", "plan": "invest too", "confidence": 0.8}')
    assert got == {"task_state": "half done", "teammates": "they invest", "plan": "invest too", "confidence": 0.8}
    lines = parse_probe("Task state: early\nTeammates: cautious\nMy plan: wait\nConfidence: 65")
    assert (lines["task_state"], lines["teammates"], lines["plan"], lines["confidence"]) == ("early", "cautious", "wait", 0.65)
    assert parse_probe("no idea")["confidence"] is None
    assert parse_probe('{"confidence": 7000}')["confidence"] is None
    # a share, a percentage, else nothing: 7 (a 1-10 answer) is not 7%, 1.5 is not 1.5%
    shares = {"Confidence: 0.4": 0.4, "Confidence: 65%": 0.65, "Confidence: 5%": 0.05, '{"confidence": "80%"}': 0.8,
              "Confidence: 7": None, "Confidence: 1.5": None, '{"confidence": 10}': None, '{"confidence": true}': None,
              '{"confidence": 1e400}': None}
    assert {reply: parse_probe(reply)["confidence"] for reply in shares} == shares
    # an answer nested deeper than the JSON parser's stack is no answer, not a crash (found by review)
    assert parse_probe('{"plan": "x", "confidence": ' + "[" * 5000 + "]" * 5000 + "}")["confidence"] is None


def test_parse_rating():
    assert parse_rating("Rating: 7. We talked a lot.") == (7, "We talked a lot.")
    assert parse_rating("8/10 - fine") [0] == 8
    assert parse_rating("Rating: 11. too high")[0] is None
    assert parse_rating("I cannot say")[0] is None
    # found by review: a leading number won over the label, markdown hid the label, a fraction was cut to its whole part
    assert parse_rating("1. Rating: 8. Good communication.")[0] == 8
    assert parse_rating("10/10 would be too generous. Rating: 6.")[0] == 6
    assert parse_rating("**Rating:** 8. good") == (8, "good")
    assert parse_rating("Rating: 8.5. mostly agree") == (None, "Rating: 8.5. mostly agree")
    assert parse_rating("Rating: 100")[0] is None


def records_with(probes_by_step):
    out = [{"type": "header", "env_id": "day_trader_v0", "agents": ["a", "b"]}]
    for step, answers in probes_by_step.items():
        out.append({"type": "step", "step": step, "agents": {a: {"probe": p} for a, p in answers.items()}})
    return out


def test_probe_metrics_alignment_and_confidence_by_thirds():
    same = {"task_state": "we are making steady progress", "teammates": "they cooperate", "plan": "invest in the group"}
    other = {"task_state": "the fish stock collapsed entirely", "teammates": "nobody listens", "plan": "leave"}
    records = records_with({
        1: {"a": {**same, "confidence": 0.2}, "b": {**same, "confidence": 0.4}},     # early: identical answers
        2: {"a": {**same, "confidence": 0.5}, "b": {**other, "confidence": 0.5}},    # mid: different answers
        3: {"a": {**same, "confidence": 1.0}, "b": {**same, "confidence": None}},    # late
    })
    m = probe_metrics(records, HashingEmbedder())
    assert m["probed_steps"] == 3
    assert m["alignment"]["task_state"]["early"] == pytest.approx(1.0, abs=1e-5)
    assert m["alignment"]["task_state"]["mid"] < 0.5
    assert m["confidence"]["early"] == pytest.approx(0.3)
    assert m["confidence"]["late"] == pytest.approx(1.0)
    assert m["confidence"]["all"] == pytest.approx(np.mean([0.2, 0.4, 0.5, 0.5, 1.0]))


def test_alignment_is_the_exact_sum_of_the_rounded_products_the_same_on_every_machine():
    """Found by review: the cosine was a BLAS dot product, whose kernel (picked per CPU) sums in its own order, so the
    logged alignment's last digits moved from machine to machine. Now each product is rounded alone and summed exactly
    (`math.fsum`): the value is the one exact arithmetic rounds to, whatever the machine."""
    from fractions import Fraction

    rng = np.random.default_rng(3)
    words = "the fish we team plan group guide harvest invest trust of to a left room victim".split()
    embedder = HashingEmbedder()
    answers = {step: {agent: {"plan": " ".join(rng.choice(words, size=int(rng.integers(3, 30))))} for agent in "abc"}
               for step in range(1, 40)}
    metrics = probe_metrics(records_with(answers), embedder)

    def exact(texts):
        vectors = np.asarray(embedder.embed(texts), dtype=float)
        sims = [float(sum(Fraction(p) for p in (vectors[i] * vectors[j]).tolist())) for i in range(3) for j in range(i + 1, 3)]
        return float(sum(Fraction(x) for x in sims)) / len(sims)

    per_step = [exact([answers[step][agent]["plan"] for agent in "abc"]) for step in sorted(answers)]
    assert metrics["alignment"]["plan"]["all"] == float(sum(Fraction(x) for x in per_step)) / len(per_step)


def test_interview_summary_per_dimension():
    rows = [{"dimension": d, "item": i, "rating": 4 if d == "trust" else None, "justification": ""} for d, i in INTERVIEW_ITEMS]
    summary = interview_summary({"a": rows, "b": [dict(r, rating=8) for r in rows]})
    assert set(summary["dimensions"]) == set(DIMENSIONS) and len(DIMENSIONS) == 6
    assert summary["dimensions"]["trust"] == 6.0 and summary["dimensions"]["leadership"] == 8.0
    assert summary["agents"]["a"]["leadership"] is None


def test_prober_rejects_bad_period():
    with pytest.raises(ValueError, match="probes every"):
        Prober(every=0)


def test_an_llm_episode_logs_probe_answers_and_interview(server, tmp_path):
    env = teamenvs.make("day_trader_v0")
    policies = make_llm_policies(env, "random-valid", base_url=server.url, cache=False)
    result = agents.run_episode(env, policies, seed=0, max_steps=6, probes=Prober(every=2), interview=True, log_dir=tmp_path)
    records = read_log(result.log_path)
    probed = [s["step"] for s in step_records(records) if any("probe" in e for e in s["agents"].values())]
    assert probed == [1, 3, 5]  # loop steps 0, 2, 4 are recorded as env steps 1, 3, 5
    answer = next(e["probe"] for s in step_records(records) for e in s["agents"].values() if "probe" in e)
    assert answer["task_state"] and 0 <= answer["confidence"] <= 1
    assert result.metrics["probes"]["probed_steps"] == 3 and result.metrics["probes"]["confidence"]["all"] is not None
    end = records[-1]
    assert end["type"] == "end" and len(end["interview"]) == 3
    assert all(len(rows) == len(INTERVIEW_ITEMS) and all(1 <= r["rating"] <= 10 for r in rows) for rows in end["interview"].values())
    assert all(v is not None for v in result.metrics["interview"]["dimensions"].values())
    # probes and interview questions are model calls too
    acted = sum(1 for s in step_records(records) for e in s["agents"].values() if "reply" in e)
    assert result.usage["total"]["calls"] == acted + 3 * 3 + 3 * len(INTERVIEW_ITEMS)
    # and the report shows them (they reached only results.csv before)
    from benchmarks.report import build_report

    build_report(tmp_path, plots=False)
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    table = report[report.index("Probes and interview per episode"):].split("\n\n")[1].splitlines()
    assert table[0].startswith("| condition | policy | probed steps | confidence | alignment: plan |")
    assert all(f"interview: {d}" in table[0] for d in DIMENSIONS)
    confidence = result.metrics["probes"]["confidence"]["all"]
    assert table[2].split(" | ")[2:4] == ["3.00 ± 0.00", f"{confidence:,.2f} ± 0.00"]


def test_scripted_policies_are_not_probed():
    env = teamenvs.make("day_trader_v0")
    result = agents.run_episode(env, agents.make_policies(env, "scripted", seed=0), seed=0, max_steps=4, probes=Prober())
    assert result.metrics["probes"]["probed_steps"] == 0


def test_a_paradigm_can_ship_its_own_wording_of_the_probe_questions():
    from agents.probes import PROBE_QUESTIONS, task_questions

    hidden = task_questions("hidden_profile_v0")  # CollabSim App. D.2's wording for the hidden profile
    assert set(hidden) == set(PROBE_QUESTIONS) and hidden != PROBE_QUESTIONS
    assert "partners" in hidden["teammates"]
    # App. D.1 is one wording for Shape Factory and DayTrader, D.3 the map task's
    assert task_questions("day_trader_v0") == task_questions("shape_factory_v0") != PROBE_QUESTIONS
    assert task_questions("day_trader_v0")["task_state"] == "At this moment, how do you assess the current situation?"
    assert task_questions("map_task_v0")["teammates"] == "At this moment, what do you think your partner is trying to do?"
    assert task_questions("commons_v0") == PROBE_QUESTIONS  # no file (not a CollabSim task): the general wording
    prober = Prober.for_env("hidden_profile_v0", every=3)
    assert prober.every == 3 and hidden["plan"] in prober.prompt()
    with pytest.raises(ValueError, match="keyed"):
        Prober(questions={"plan": "?"})


def test_a_budget_spent_at_a_probe_or_the_interview_stops_cleanly_and_counts_every_call(server, tmp_path):
    """Found by review: a budget spent by a probe or an interview question raised out of the episode, which was
    logged as an error (and a bench counted it failed), with the calls of the questions still running uncounted."""
    env = teamenvs.make("day_trader_v0")
    # 3 action calls, then probes: the budget of 4 runs out at the second probe question; the step is played, then stop
    policies = make_llm_policies(env, "random-valid", base_url=server.url, cache=False, max_calls=4)
    result = agents.run_episode(env, policies, seed=0, max_steps=6, probes=Prober(every=1), log_dir=tmp_path)
    end = read_log(result.log_path)[-1]
    assert (result.status, result.steps, end["type"], end["status"]) == ("budget", 1, "end", "budget")
    assert "budget of 4 model calls is spent" in result.warning
    assert result.usage["total"]["calls"] == 4
    # 6 action calls, then the interview: spent at its third question; the episode is whole, its interview left out
    policies = make_llm_policies(env, "random-valid", base_url=server.url, cache=False, max_calls=8)
    result = agents.run_episode(env, policies, seed=0, max_steps=2, interview=True, log_dir=tmp_path / "interview")
    end = read_log(result.log_path)[-1]
    assert (result.status, result.steps, end["type"]) == ("done", 2, "end") and "status" not in end
    assert end["warning"].startswith("no interview: ") and "interview" not in result.metrics and "interview" not in end
    assert result.usage["total"]["calls"] == 8


def test_probes_leave_the_memory_they_read_as_it_was(server):
    """Found by review: a probe question retrieved memories as a decision does, which moved their last access, so
    the probed episode's later prompts retrieved other memories and played other actions than the same episode
    unprobed (returns 895/565/900 against 855/660/995 over 15 steps)."""
    def play(probes):
        env = teamenvs.make("day_trader_v0")
        policies = make_llm_policies(env, "random-valid", base_url=server.url, cache=False, memory=True)
        result = agents.run_episode(env, policies, seed=0, max_steps=15, probes=probes)
        return result.returns, [{a: e["raw_action"] for a, e in s["agents"].items()} for s in step_records(result.records)]

    assert play(None) == play(Prober(every=1))


def test_probe_answers_given_before_the_budget_ran_out_are_recorded(server, tmp_path):
    # 3 action calls, then the probe: 1 answered, the next question refused; the answer paid for is kept
    env = teamenvs.make("day_trader_v0")
    policies = make_llm_policies(env, "random-valid", base_url=server.url, cache=False, max_calls=4, concurrency=1)
    result = agents.run_episode(env, policies, seed=0, max_steps=6, probes=Prober(every=1), log_dir=tmp_path)
    assert result.status == "budget" and result.usage["total"]["calls"] == 4
    probed = [e["probe"] for s in step_records(read_log(result.log_path)) for e in s["agents"].values() if "probe" in e]
    assert len(probed) == 1 and probed[0]["task_state"]
