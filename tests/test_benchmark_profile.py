"""benchmarks/profile.py: compiled functions are named from their C symbols, `perf script` stacks go to their innermost
teamenvs function, the source profile names teamenvs functions by module and line, and the compiled engine's profile
says what it lacks (`perf`, a build) with exit status 2."""

from __future__ import annotations

import pytest

from benchmarks import profile

MODULES = frozenset({"teamenvs.core.env", "teamenvs.core.messaging", "teamenvs.core.commands", "teamenvs.day_trader.rules",
                     "teamenvs.search_rescue.view"})


@pytest.mark.parametrize("symbol, name", [
    ("__pyx_pw_8teamenvs_4core_3env_7TeamEnv_57step", "teamenvs.core.env.TeamEnv.step"),
    # the counter (8) equals the length of "messages": the class is what tells the counter from a name
    ("__pyx_pw_8teamenvs_4core_9messaging_12Conversation_8messages_view", "teamenvs.core.messaging.Conversation.messages_view"),
    ("__pyx_pw_8teamenvs_10day_trader_5rules_15money_json", "teamenvs.day_trader.rules.money_json"),
    ("__pyx_gb_8teamenvs_4core_8commands_10ActionForm_6sample_2generator5", "teamenvs.core.commands.ActionForm.sample.<genexpr>"),
    ("__pyx_pw_8teamenvs_13search_rescue_4view_17_rubble_elsewhere___pyx_lambda_funcdef_lambda18",
     "teamenvs.search_rescue.view._rubble_elsewhere.<lambda>"),
    ("__pyx_pf_8teamenvs_4core_8commands_7TextArg_4sample", "teamenvs.core.commands.TextArg.sample"),
    ("PyDict_New", None),
    ("__pyx_pw_5numpy_6random_10_generator_9Generator_23integers", None),
])
def test_a_compiled_function_is_named_from_its_symbol(symbol, name):
    assert profile.function_name(symbol, MODULES) == name


def test_each_sample_goes_to_its_innermost_teamenvs_function():
    text = (
        "python 1 1.0: 2500000 cpu-clock:ppp:\n"
        "\t  1c25f9 _Py_dg_dtoa+0x3b9 (/lib/libpython3.11.so)\n"
        "\t  1a9f80 __pyx_pw_8teamenvs_10day_trader_5rules_15money_json+0x50 (/c/rules.so)\n"
        "\t  1a9f90 __pyx_pw_8teamenvs_4core_3env_7TeamEnv_57step+0x50 (/c/env.so)\n"
        "\n"
        "python 1 1.1: 2500000 cpu-clock:ppp:\n"
        "\t  1c25f9 _PyObject_Malloc+0x3 (/lib/libpython3.11.so)\n"
        "\t  1a9f90 __pyx_pw_8teamenvs_4core_3env_7TeamEnv_57step+0x50 (/c/env.so)\n"
        "\n"
        "python 1 1.2: 2500000 cpu-clock:ppp:\n"
        "\t  1c25f9 _PyObject_Malloc+0x3 (/lib/libpython3.11.so)\n"
        "\t  1c2600 __pyx_pw_5numpy_6random_10_generator_9Generator_23integers+0x3 (/numpy.so)\n"
        "\n"
        "python 1 1.3: 2500000 cpu-clock:ppp:\n"
        "\t  1a9f80 __pyx_pw_8teamenvs_10day_trader_5rules_15money_json+0x50 (/c/rules.so)\n"
    )
    stacks = profile.perf_stacks(text)
    assert len(stacks) == 4 and stacks[0][0] == "_Py_dg_dtoa+0x3b9"
    counts = profile.attribute([[s.split("+")[0] for s in stack] for stack in stacks])
    assert counts == {"teamenvs.day_trader.rules.money_json": 2, "teamenvs.core.env.TeamEnv.step": 1, profile.OUTSIDE: 1}


def test_the_source_profile_names_teamenvs_functions_and_sums_to_the_whole():
    rows = profile.profile_source("day_trader_v0", 0.3)
    assert abs(sum(share for share, _ in rows) - 1.0) < 1e-6
    names = [name for _, name in rows]
    assert any(name.startswith("teamenvs.core.env:") and name.endswith(" step") for name in names)
    assert any(name.startswith("teamenvs.day_trader.view:") and name.endswith(" render") for name in names)


def test_the_source_profile_runs_in_a_new_process_where_this_one_runs_compiled_modules(monkeypatch):
    # cProfile sees no compiled function: a process running the compiled engine profiles the source in a new one
    monkeypatch.setattr(profile.compiled, "loaded", lambda: {"teamenvs.core.env": "/compiled/env.so"})
    rows = profile.profile_source("commons_v0", 0.3)
    assert abs(sum(share for share, _ in rows) - 1.0) < 1e-6
    assert any(name.startswith("teamenvs.core.env:") and name.endswith(" step") for _, name in rows)


def test_the_compiled_profile_says_what_it_lacks(monkeypatch, capsys):
    monkeypatch.setattr(profile.shutil, "which", lambda name: None)
    assert profile.main(["day_trader_v0", "--engine", "compiled", "--seconds", "0.1"]) == 2
    assert "`perf` is not installed" in capsys.readouterr().err
    monkeypatch.setattr(profile.shutil, "which", lambda name: "/usr/bin/perf")
    monkeypatch.setattr(profile.compiled, "status", lambda: type("S", (), {"current": 0})())
    assert profile.main(["day_trader_v0", "--engine", "compiled", "--seconds", "0.1"]) == 2
    assert "teamenvs compile" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["--seconds", "0"], ["--seconds", "nan"], ["--seconds", "x"], ["--top", "0"], ["no_such_env_v0"],
                                  ["--interface", "vector"]])
def test_bad_arguments_are_clear_errors(args, capsys):
    argv = args if args == ["no_such_env_v0"] else ["day_trader_v0", *args]
    with pytest.raises(SystemExit) as exit_:
        profile.main(argv)
    assert exit_.value.code == 2 and "error:" in capsys.readouterr().err


def test_samples_in_the_garbage_collector_are_its_own_row():
    # the collector set off by an allocation in `step` is not `step`'s time; teamenvs code the collector runs (a
    # finaliser) is that code's
    stacks = [
        ["visit_decref", "gc_collect_main", "gc_collect_with_callback", "_PyObject_GC_Link", "PyDict_New",
         "__pyx_pw_8teamenvs_4core_3env_7TeamEnv_57step"],
        ["gc_collect_main+0x40", "__pyx_pw_8teamenvs_4core_3env_7TeamEnv_57step+0x50"],
        ["__pyx_pw_8teamenvs_10day_trader_5rules_15money_json", "gc_collect_main", "__pyx_pw_8teamenvs_4core_3env_7TeamEnv_57step"],
        ["_PyObject_Malloc", "__pyx_pw_8teamenvs_4core_3env_7TeamEnv_57step"],
    ]
    counts = profile.attribute(stacks)
    assert counts == {profile.COLLECTOR: 2, "teamenvs.day_trader.rules.money_json": 1, "teamenvs.core.env.TeamEnv.step": 1}


def test_the_collector_share_is_timed_from_its_callbacks():
    found = profile.collector_share("job_fair_v0", 0.5, "source")
    young, middle, full = found["collections"]
    assert young > 0 and middle >= 0 and full >= 0  # the job fair's play makes objects enough for young collections
    assert 0.0 < found["share"] < 1.0
    line = profile.collector_line(found, "source")
    assert line.startswith("Garbage collector: ") and f"{young:,} young" in line and "inside the rows" in line
    assert f"`{profile.COLLECTOR}` row" in profile.collector_line(found, "compiled")


def test_a_timing_run_that_prints_no_result_is_a_clear_error(monkeypatch):
    done = type("Done", (), {"returncode": 0, "stdout": "", "stderr": ""})()
    monkeypatch.setattr(profile.subprocess, "run", lambda *args, **kwargs: done)
    with pytest.raises(RuntimeError, match="printed no result"):
        profile.collector_share("commons_v0", 0.1, "source")
    done.stdout = '{"share": 0.1}\n'  # no collections
    with pytest.raises(RuntimeError, match="printed no result"):
        profile.collector_share("commons_v0", 0.1, "source")


def test_the_profile_prints_the_collector_line_or_why_it_is_missing(monkeypatch, capsys):
    assert profile.main(["commons_v0", "--seconds", "0.2", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "| share | function |" in out and "\nGarbage collector: " in out and "% of the same play" in out

    def failed(*args, **kwargs):
        raise RuntimeError("the garbage collector's timing run failed: boom")
    monkeypatch.setattr(profile, "collector_share", failed)
    assert profile.main(["commons_v0", "--seconds", "0.2", "--top", "3"]) == 0  # the table stands without the line
    assert "Garbage collector: not measured (the garbage collector's timing run failed: boom)" in capsys.readouterr().out


def test_the_numeric_interface_profiles_the_rl_play():
    # vector observations and masked-in discrete actions: the encoder and the masks are rows, which text play has not
    rows = profile.profile_source("day_trader_v0", 0.3, "numeric")
    assert abs(sum(share for share, _ in rows) - 1.0) < 1e-6
    names = [name for _, name in rows]
    encoder = (" encode", " _step_pool")  # DayTrader's encoder and its per-step pool
    assert any(name.startswith("teamenvs.day_trader.view:") and name.endswith(encoder) for name in names)
    assert any(name.startswith("teamenvs.core.rl:") and name.endswith(" _mask") for name in names)
    text_rows = profile.profile_source("day_trader_v0", 0.3, "text")
    assert not any(name.startswith("teamenvs.day_trader.view:") and name.endswith(encoder) for _, name in text_rows)  # text play encodes nothing
    episode = profile.play("commons_v0", "numeric")
    turns, spent = episode(3)
    assert turns > 0 and spent > 0
    with pytest.raises(ValueError, match="interface must be one of text, numeric"):
        profile.play("commons_v0", "vector")
