"""Constrained decoding from the command language (`teamenvs.core.constrain`).

Both ways, on every env's live situations: what the grammar, the regex and the JSON schema
admit parses in the situation the forms were offered in (soundness), and every valid
command of those forms, in its canonical spelling, is admitted (completeness, for argument
types with an exact grammar). The GBNF text is read back with a small reader of the GBNF
subset we emit and must describe the same language as the regex.
"""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

import teamenvs
from teamenvs.core.commands import Command, CommandSet, IntArg, NameArg, Situation, TextArg
from teamenvs.core.constrain import accepted_commands, command_text, constraint_for, int_range, narrowed_command, sample_text, to_regex

ENV_IDS = teamenvs.list_envs()


@pytest.mark.parametrize("seed", range(6))
def test_integer_ranges_admit_exactly_their_numbers(seed):
    rng = np.random.default_rng(seed)
    ranges = [(0, 0), (0, 9), (15, 100), (-12, 30), (-5, -1), (99, 101)]
    ranges += [tuple(sorted(int(v) for v in rng.integers(-3000, 30_000, size=2))) for _ in range(12)]
    for low, high in ranges:
        pattern = re.compile(to_regex(int_range(low, high)))
        for n in list(range(low - 120, low + 120)) + list(range(high - 120, high + 120)) + [int(v) for v in rng.integers(low - 10**5, high + 10**5, 300)]:
            assert bool(pattern.fullmatch(str(n))) == (low <= n <= high), (low, high, n)
        assert not pattern.fullmatch(f"0{abs(high)}"), "no leading zeros"


# ---------------------------------------------------------------------- a reader of the GBNF we emit
_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|(\[(?:[^\]\\]|\\.)*\])|([()|])|([*+?]|\{\d+(?:,\d*)?\})|([a-z][a-z0-9-]*))')


def gbnf_to_regex(grammar: str) -> str:
    """The regex of a GBNF grammar made of rules, string literals, classes, groups, alternation and counts."""
    rules = {}
    for line in grammar.strip().splitlines():
        name, _, body = line.partition(" ::= ")
        rules[name.strip()] = body

    def expand(body: str) -> str:
        out, pos = [], 0
        while pos < len(body.rstrip()):
            m = _TOKEN.match(body, pos)
            assert m is not None and m.end() > pos, f"unreadable GBNF at {body[pos:]!r}"
            literal, cls, punct, count, ref = m.groups()
            if literal is not None:
                out.append(re.escape(json.loads(literal)))
            elif cls is not None:
                out.append(cls)
            elif punct is not None:
                out.append({"(": "(?:", ")": ")", "|": "|"}[punct])
            elif count is not None:
                out.append(count)
            else:
                out.append(f"(?:{expand(rules[ref])})")
            pos = m.end()
        return "".join(out)

    return expand(rules["root"])


def _forms_seen(env_id: str, steps: int = 60, seed: int = 0):
    """(forms, command set) of every agent asked to act along random valid play."""
    env = teamenvs.make(env_id)
    rng = np.random.default_rng(seed)
    _, infos = env.reset(seed=seed)
    for _ in range(steps):
        if not env.agents:
            _, infos = env.reset(seed=int(rng.integers(2**31)))
        actions = {}
        for agent in env.agents:
            forms = infos[agent]["valid_actions"]
            if infos[agent]["needs_action"] and forms:
                yield forms, env.commands
                actions[agent] = forms[int(rng.integers(len(forms)))].sample(rng)
        _, _, _, _, infos = env.step(actions)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_what_the_constraint_admits_parses_and_every_valid_command_is_admitted(env_id):
    rng = np.random.default_rng(1)
    checked = 0
    for forms, commands in _forms_seen(env_id):
        situation = forms[0].situation
        constraint = constraint_for(forms)
        regex = re.compile(constraint.regex)
        action_node = _action_node(forms)
        for _ in range(4 if constraint.exact else 0):  # soundness: drawn from the grammar, read by the parser
            text = sample_text(action_node, rng)
            reply = f"I think so.\nACTION: {text}"
            assert regex.fullmatch(reply), reply
            parsed = commands.parse(reply, situation)
            assert parsed.ok, (reply, parsed)
            as_json = json.dumps({"reasoning": "because: action: wait", "action": _json_action(parsed, forms)})
            again = commands.parse(as_json, situation)
            assert again.ok and again.text == parsed.text, (as_json, again)
        if constraint.exact:  # completeness: valid samples of every form are admitted
            for form in forms:
                parsed = commands.parse(form.sample(rng), situation)
                if parsed.ok:
                    assert regex.fullmatch(f"ACTION: {parsed.text}"), parsed.text
        checked += 1
        # every argument type has an exact grammar but the job fair's free-text workflow steps,
        # which a grammar cannot keep distinct
        assert constraint.exact or {f.command for f in forms} >= {"workflow"}, [f.command for f in forms]
    assert checked > 20


def _action_node(forms):
    from teamenvs.core.constrain import Alt, _command_node

    nodes = [n for f in forms if (n := _command_node(f)) is not None]
    return nodes[0] if len(nodes) == 1 else Alt(tuple(nodes))


def _json_action(parsed, forms):
    form = next(f for f in forms if f.command == parsed.command)
    def value(arg):  # as the schema has it: integers as numbers, everything else as its canonical text
        v = parsed.args[arg.name]
        return v if isinstance(v, int) and not isinstance(v, bool) else arg.format(v)

    return {"command": parsed.command, "args": {a.name: value(a) for a in form._command.args}}


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_gbnf_grammar_describes_the_same_language_as_the_regex(env_id):
    rng = np.random.default_rng(2)
    for n, (forms, _) in enumerate(_forms_seen(env_id, steps=25)):
        constraint = constraint_for(forms)
        from_gbnf = re.compile(gbnf_to_regex(constraint.gbnf))
        regex = re.compile(constraint.regex)
        node = _action_node(forms)
        for _ in range(4):
            good = f"thinking\nACTION: {sample_text(node, rng)}"
            assert from_gbnf.fullmatch(good) and regex.fullmatch(good)
            for bad in (good.replace("ACTION: ", "ACTION:"), good + "\n", good.replace("ACTION", "action")):
                assert bool(from_gbnf.fullmatch(bad)) == bool(regex.fullmatch(bad)), bad
        if n > 30:
            break


def test_live_bounds_and_names_narrow_the_language():
    commands = CommandSet([Command("harvest", (IntArg("amount", 0, 100),)), Command("tell", (NameArg("agent"), TextArg("message")))])
    situation = Situation(limits={"amount": (0, 37)}, names={"agent": ("Ann", "Bo")})
    constraint = constraint_for(commands.forms(situation))
    regex = re.compile(constraint.regex)
    assert regex.fullmatch("ACTION: harvest 37") and not regex.fullmatch("ACTION: harvest 38")
    assert regex.fullmatch("ACTION: tell Bo meet at the lake") and not regex.fullmatch("ACTION: tell Cy hello")
    # the 'ACTION:' line is read whole, so a message may say anything on it
    assert regex.fullmatch("ACTION: tell Bo my action: harvest 100")
    assert commands.parse("ACTION: tell Bo my action: harvest 100", situation).text == "tell Bo my action: harvest 100"
    schema = constraint.json_schema["properties"]["action"]["anyOf"]
    assert schema[0]["properties"]["args"]["properties"]["amount"] == {"type": "integer", "minimum": 0, "maximum": 37}
    assert schema[1]["properties"]["args"]["properties"]["agent"]["enum"] == ["Ann", "Bo"]
    denied = Situation(denied={"tell": "not now"}, names={"agent": ("Ann",)})
    assert "tell" not in constraint_for(commands.forms(denied)).regex
    with pytest.raises(ValueError, match="nothing to decide"):
        constraint_for(commands.forms(Situation(denied={"harvest": "no", "tell": "no"})))


def test_a_json_reply_is_read_as_json_whatever_its_reasoning_says():
    commands = CommandSet([Command("harvest", (IntArg("amount", 0, 100),)), Command("wait")])
    reply = json.dumps({"reasoning": "Last action: wait. My action: harvest 100", "action": {"command": "harvest", "args": {"amount": 7}}})
    assert commands.parse(reply).text == "harvest 7"


def test_the_reasoning_before_the_action_is_bounded_by_the_output_limit():
    """Unbounded reasoning let a small model (SmolLM2-135M under llama.cpp) echo its observation up to the
    output limit and never write the action; the bound leaves the action its tokens."""
    import re as _re

    from teamenvs.core.constrain import ACTION_RESERVE_TOKENS, REASONING_MAX_CHARS, reasoning_chars_for

    assert reasoning_chars_for(128) == 128 - ACTION_RESERVE_TOKENS
    assert reasoning_chars_for(None) == REASONING_MAX_CHARS and reasoning_chars_for(10) == 0
    env = teamenvs.make("commons_v0")
    _, infos = env.reset(seed=0)
    constraint = constraint_for(infos["fisher_1"]["valid_actions"], 80)
    assert _re.fullmatch(constraint.regex, "x" * 80 + "\nACTION: harvest 7")
    assert not _re.fullmatch(constraint.regex, "x" * 81 + "\nACTION: harvest 7")
    assert not _re.fullmatch(constraint.regex, "one\ntwo\nACTION: wait")  # one line of reasoning at most
    assert "{0,80}" in constraint.gbnf and constraint.json_schema["properties"]["reasoning"]["maxLength"] == 80
    bare = constraint_for(infos["fisher_1"]["valid_actions"], 0)
    assert _re.fullmatch(bare.regex, "ACTION: wait") and not _re.fullmatch(bare.regex, "x\nACTION: wait")


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_with_the_rules_a_form_with_few_commands_admits_exactly_the_accepted_ones(env_id):
    """Given `env.accepts` (as `agents.run_episode` binds it), each form whose concrete commands can be tried
    one by one admits a command iff the rules accept it now; the others keep the command language's grammar."""
    env = teamenvs.make(env_id)
    rng = np.random.default_rng(3)
    _, infos = env.reset(seed=3)
    narrowed = refused = 0
    for _ in range(40):
        if not env.agents:
            _, infos = env.reset(seed=int(rng.integers(2**31)))
        actions = {}
        for agent in env.agents:
            forms = infos[agent]["valid_actions"]
            if not (infos[agent]["needs_action"] and forms):
                continue
            accepts = lambda command, agent=agent: env.unwrapped.accepts(agent, command)  # noqa: E731
            try:
                regex = re.compile(constraint_for(forms, accepts=accepts).regex)
            except ValueError:  # the rules accept none of the commands: nothing to constrain to
                assert all(accepted_commands(f, accepts) == [] for f in forms)
                continue
            plain = re.compile(constraint_for(forms).regex)
            for form in forms:
                if accepted_commands(form, accepts) is None:
                    if narrowed_command(form, accepts) is not None:  # e.g. offers: drawn commands, both ways
                        for _ in range(30):
                            command = form.sample(rng)
                            ok = env.unwrapped.accepts(agent, command)
                            assert bool(regex.fullmatch(f"ACTION: {command}")) == ok, (agent, command)
                            narrowed += 1
                            refused += not ok and bool(plain.fullmatch(f"ACTION: {command}"))
                    continue
                domains = [arg.values(form.situation) for arg in form._command.args]
                for combo in itertools.product(*domains):
                    command = command_text(form.command, combo)
                    ok = env.unwrapped.accepts(agent, command)
                    assert bool(regex.fullmatch(f"ACTION: {command}")) == ok, (agent, command)
                    narrowed += 1
                    if not ok and plain.fullmatch(f"ACTION: {command}"):
                        refused += 1  # the command language alone would have admitted it
            actions[agent] = forms[int(rng.integers(len(forms)))].sample(rng)
        _, _, _, _, infos = env.step(actions)
    assert narrowed > 20
    # victims not found, orders not ready, a submit before any workflow: refused by the rules
    if env_id in ("search_rescue_v0", "shape_factory_v0", "job_fair_v0"):
        assert refused > 0


@pytest.mark.parametrize("allow_coordinates", [False, True])
def test_a_constrained_guide_cannot_send_a_message_the_rule_on_coordinates_refuses(allow_coordinates):
    """Map task: unless `allow_coordinates`, the rules refuse a guide's message that refers to grid coordinates.
    With the rules, the guide's constraint admits no such message (digits only in '<way> <n> step(s)'), and every
    message it admits is sent; the follower (no such rule) and a guide allowed coordinates keep free text."""
    env = teamenvs.make("map_task_v0", allow_coordinates=allow_coordinates)
    _, infos = env.reset(seed=0)
    checked = 0
    for agent in ("guide", "follower"):
        accepts = lambda command, agent=agent: env.unwrapped.accepts(agent, command)  # noqa: E731
        forms = infos[agent]["valid_actions"]
        regex = re.compile(constraint_for(forms, accepts=accepts).regex)
        say = next(f for f in forms if f.command == "say")
        narrowed = narrowed_command(say, accepts)
        ruled = agent == "guide" and not allow_coordinates
        assert (narrowed is not None) == ruled
        for message in ("go east 3 steps", "Go north 10 steps, then west 1 step past the mill", "wait at the old mill"):
            assert regex.fullmatch(f"ACTION: say {message}") and accepts(f"say {message}")
        for message in ("3,4", "go to x 5", "row 3 please", "go east 3,4", "at (12 7) is the mill", "the 2nd row"):
            assert bool(regex.fullmatch(f"ACTION: say {message}")) == (not ruled)
            assert accepts(f"say {message}") == (not ruled)
        # sound, not complete: the rules would send this one, the narrowed grammar keeps digits after a way only
        assert bool(regex.fullmatch("ACTION: say go 3 steps east")) == (not ruled) and accepts("say go 3 steps east")
        if ruled:
            rng = np.random.default_rng(0)
            node = narrowed[0][0]
            for _ in range(300):
                command = sample_text(node, rng)
                assert accepts(command) and regex.fullmatch(f"ACTION: {command}"), command
                checked += 1
    assert checked == (0 if allow_coordinates else 300)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_json_schema_patterns_are_written_as_llama_cpp_reads_them(env_id):
    """llama.cpp's JSON-schema-to-grammar converters (llama-server's and llama-cpp-python's) refuse `(?:` in a
    `pattern`, copy an escaped `\\$` into a grammar literal (an unknown escape), and unroll counts and maxLength
    into nested rules (a grammar of 2,000 is refused): `response_format` patterns use plain groups, special
    characters as one-character classes and no count above JSON_MAX_COUNT, and admit every command the regex
    admits (free text left unbounded still parses: the parser cuts it)."""
    from teamenvs.core.constrain import JSON_MAX_COUNT, JSON_MAX_REASONING, json_pattern

    env = teamenvs.make(env_id)
    _, infos = env.reset(seed=0)
    rng = np.random.default_rng(0)
    checked = 0
    for agent in env.agents:
        forms = infos[agent]["valid_actions"]
        if not forms:
            continue
        schema = constraint_for(forms, accepts=lambda c, agent=agent: env.unwrapped.accepts(agent, c)).json_schema
        assert schema["properties"]["reasoning"]["maxLength"] <= JSON_MAX_REASONING
        text = json.dumps(schema)
        assert "(?:" not in text
        for pattern in map(json.loads, re.findall(r'"pattern": ("(?:[^"\\]|\\.)*")', text)):
            assert pattern.startswith("^(") and pattern.endswith(")$")
            outside_classes = re.sub(r"\[(?:\\.|[^\]\\])*\]", "", pattern)
            assert "\\" not in outside_classes, pattern
            assert all(int(n) <= JSON_MAX_COUNT for counts in re.findall(r"\{(\d+)(?:,(\d*))?\}", pattern) for n in counts if n)
        for form in forms:
            for arg in form._command.args:
                node = arg.grammar(form.situation)
                if node is None:
                    continue
                portable = re.compile(json_pattern(node))
                for _ in range(5):
                    value = sample_text(node, rng)
                    assert portable.fullmatch(value), (json_pattern(node), value)
                    checked += 1
    assert checked > 0
