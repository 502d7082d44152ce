"""Malicious suite files must fail fast with a clear error naming the file, never hang or crash.

Hardening issue, item 5: YAML alias bombs (plain, through merge keys, through one long string),
self-referencing aliases, nesting 100,000 deep (JSON, YAML flow and block), numbers too long to
convert, a billion seeds (in the file or on the command line), files too large and files that
are not UTF-8 each give a `SuiteError` naming the file in well under a second, and
`teamenvs bench --suite FILE` prints one `error:` line for each, with no traceback.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from benchmarks.suite import MAX_EPISODES, MAX_SUITE_BYTES, SuiteError, load_suite
from teamenvs.cli import main

GROUP = "groups: [{env: commons_v0, conditions: [baseline], policies: [random]}]"
JSON_GROUP = [{"env": "commons_v0", "conditions": ["baseline"], "policies": ["random"]}]


def alias_bomb(levels: int = 10, width: int = 10) -> str:
    """YAML whose last anchor expands to width**levels strings ("billion laughs")."""
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def merge_bomb(levels: int = 12, width: int = 8) -> str:
    """YAML whose merge keys (`<<`) copy each level's pairs `width` times into the next."""
    lines = ["m0: &m0 {k: v, l: w}"]
    lines += [f"m{i}: &m{i} {{<<: [" + ", ".join([f"*m{i - 1}"] * width) + "]}" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


# name: (file content, what the error must say). Each would hang, exhaust memory, crash the
# interpreter or end in a traceback without the limits.
CORPUS: dict[str, tuple[str | bytes, str]] = {
    "bomb_in_name.yaml": (alias_bomb() + f"name: *a9\nseeds: 1\n{GROUP}\n", "YAML alias"),
    "bomb_in_unknown_field.yaml": (alias_bomb(), "YAML alias"),
    "bomb_in_condition.yaml": (alias_bomb() + "seeds: 1\ngroups: [{env: commons_v0, conditions: [{set: {x: *a9}}], policies: [random]}]\n", "YAML alias"),
    "bomb_in_seeds.yaml": (alias_bomb() + f"seeds: *a9\n{GROUP}\n", "YAML alias"),
    "merge_bomb.yaml": (merge_bomb(), "YAML alias"),
    "string_bomb.yaml": ("s: &s " + "x" * 50_000 + "\nname: [" + ", ".join(["*s"] * 1000) + "]\n", "YAML alias"),
    "self_reference.yaml": ("name: &a [*a]\n", "refers to a value that contains it"),
    "deep.json": ('{"name": ' + "[" * 100_000, "nested too deeply"),  # 100,000 levels fit the size limit only unclosed
    "deep_closed.json": ('{"name": ' + "[" * 60_000 + "]" * 60_000 + "}", "nested too deeply"),
    "deep_objects.json": ('{"a": ' * 15_000 + "1" + "}" * 15_000, "nested too deeply"),
    "deep_flow.yaml": ("name: " + "[" * 100_000, "nested too deeply"),
    "deep_flow_closed.yaml": ("name: " + "{a: [" * 10_000 + "]}" * 10_000 + "\n", "nested too deeply"),
    "deep_block.yaml": ("name:\n" + "- " * 50_000 + "x\n", "nested too deeply"),
    "deep_indent.yaml": ("".join(" " * i + "-\n" for i in range(400)), "nested too deeply"),
    "deep_mappings.yaml": ("".join(" " * i + f"k{i}:\n" for i in range(300)), "nested too deeply"),
    "billion_seeds.yaml": (f"seeds: 1000000000\n{GROUP}\n", "too many seeds (1000000000); a suite may hold at most 100,000"),
    "billion_seeds.json": (json.dumps({"seeds": 10**9, "groups": JSON_GROUP}), "too many seeds (1000000000)"),
    "group_seeds.json": (json.dumps({"groups": [{**JSON_GROUP[0], "seeds": 10**9}]}), "groups[0].seeds: too many seeds"),
    "huge_seed_count.json": (json.dumps({"seeds": 10**4000, "groups": JSON_GROUP}), "too many seeds (a 13288-bit integer)"),
    "huge_seed.json": (json.dumps({"seeds": [10**30], "groups": JSON_GROUP}), "seeds[0]: a seed must be at most 2**63 - 1"),
    "many_cells.json": (json.dumps({"seeds": 50, "groups": [{"env": "commons_v0", "conditions": [{"name": f"c{i}"} for i in range(700)],
                                                             "policies": ["random", "greedy", "scripted"]}]}), "105,000 episodes"),
    "repeated_seeds.json": (json.dumps({"seeds": [0] * 20_000, "groups": JSON_GROUP}), "seeds repeat: 0 is listed twice"),
    "repeated_conditions.json": (json.dumps({"seeds": 1, "groups": [{**JSON_GROUP[0], "conditions": ["baseline"] * 10_000}]}),
                                 "two conditions share the name 'baseline'"),
    "hex_number.yaml": ("seeds: 0x" + "f" * 50_000 + "\n", "a number of 50,002 characters (at most 100)"),
    "base60_number.yaml": ("seeds: " + ":".join(["1"] * 30_000) + "\n", "a number of 59,999 characters"),
    "infinite_config.yaml": ("seeds: 1\ngroups: [{env: commons_v0, conditions: [{set: {n_agents: .inf}}], policies: [random]}]\n", "n_agents"),
    "bad_date.yaml": ("seeds: 2024-13-45\n", "is not valid YAML: month must be in 1..12"),
    "python_tag.yaml": ("seeds: !!python/object/apply:os.system [echo hi]\n", "is not valid YAML: could not determine a constructor"),
    "add_policies.json": (json.dumps({"seeds": 1, "add_policies": 5, "groups": JSON_GROUP}), "add_policies: expected a list, got 5"),
    "latin1.json": ('{"name": "caf\xe9", "seeds": 1}'.encode("latin-1"), "is not UTF-8 text (byte 13"),
    "latin1.yaml": ("name: caf\xe9\nseeds: 1\n".encode("latin-1"), "is not UTF-8 text"),
    "too_large.json": ('{"description": "' + "x" * (MAX_SUITE_BYTES + 10) + '"}', f"larger than {MAX_SUITE_BYTES:,} bytes"),
    "escape_codes.json": (json.dumps({"seeds": 1, "groups": [{**JSON_GROUP[0], "env": "\x1b]0;PWNED\x07" * 5000}]}), "unknown environment"),
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("suites")
    paths = {}
    for name, (content, _) in CORPUS.items():
        paths[name] = folder / name
        if isinstance(content, bytes):
            paths[name].write_bytes(content)
        else:
            paths[name].write_text(content, encoding="utf-8")
    return paths


@pytest.mark.parametrize("name", list(CORPUS))
def test_hostile_suite_gives_a_clear_error_naming_the_file_quickly(corpus, name):
    path = corpus[name]
    start = time.perf_counter()
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    took = time.perf_counter() - start
    message = str(info.value)
    assert str(path) in message, message
    assert CORPUS[name][1] in message, message
    assert len(message) < 1000
    assert took < 1.0, f"{name}: {took:.2f} s"


@pytest.mark.parametrize("name", ["bomb_in_name.yaml", "merge_bomb.yaml", "deep_flow.yaml", "deep.json", "billion_seeds.yaml",
                                  "latin1.json", "hex_number.yaml", "escape_codes.json"])
def test_bench_prints_one_error_line_without_traceback(corpus, tmp_path, capsys, name):
    assert main(["bench", "--suite", str(corpus[name]), "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: suite") and str(corpus[name]) in captured.err
    assert "Traceback" not in captured.err and captured.err.count("\n") == 1
    assert "\x1b" not in captured.err and "\x07" not in captured.err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("seeds", [str(MAX_EPISODES + 1), "1000000000", str(10**30)])
def test_seeds_flag_is_bounded(tmp_path, capsys, seeds):
    start = time.perf_counter()
    assert main(["bench", "--suite", "smoke", "--seeds", seeds, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --seeds {seeds}: too many seeds; a suite may hold at most 100,000 episodes")
    assert time.perf_counter() - start < 1.0


def test_seeds_flag_that_overflows_the_suite_total_names_it(tmp_path):
    # 20,000 seeds is allowed by itself, but not over the smoke suite's cells
    with pytest.raises(SuiteError, match=r"suite 'smoke': \d[\d,]* episodes .* more than the 100,000 a suite may hold; use fewer seeds \(--seeds\)"):
        load_suite("smoke", seeds=20_000)


def test_yaml_aliases_within_the_limits_still_work(tmp_path):
    path = tmp_path / "anchors.yaml"
    path.write_text("seeds: 2\ngroups:\n"
                    "  - {title: a, env: commons_v0, conditions: [baseline], policies: &p [random, greedy]}\n"
                    "  - {title: b, env: commons_v0, conditions: [baseline], policies: *p}\n", encoding="utf-8")
    suite = load_suite(path)
    assert [p.label for g in suite.groups for p in g.policies] == ["random", "greedy", "random", "greedy"]
    assert len(suite.episodes()) == 8
