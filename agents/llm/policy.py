"""`LLMPolicy`: any OpenAI-compatible chat model as a policy for every teamenvs environment.

Prompt: a system message with what a team shares first (the collaboration-theory block,
optional; the rules of the agent's role from the env's briefing) and the persona (optional)
last, so a server's prefix cache serves the shared part to every agent; a user message with
the recent observations (the last `window`), memories retrieved for the current observation
(with a `memory`), the one command list, valid actions now (usage, help and an example from
the live situation each), and the answer format. `context_window` (tokens, or "auto": as the
server states it) fits each prompt and its output limit into the model's window. The reply's last `ACTION:` line (or a JSON
`{"action": ...}`, or a one-line reply) is the action; the text before it is the
rationale; reasoning tags and code fences are tolerated. When the env's own parser
rejects the action (checked against the situation it was offered in), the model is asked
again with that exact error, up to `max_repairs` times; after that the action goes to the
env, which rejects it with the same error next step. Rationale, raw reply, repairs and the
call's usage go into the episode log (`last_extras`), with the action's `source` (a JSON
object, an `ACTION:` line, a single line or the prose fallback, which leaves out lines copied from
the prompt; "echo" when the reply was nothing but such copies; "constrained ..." when the reply
was constrained); per-episode usage is `usage`.

Memory (`memory=MemoryStream(...)`): each step stores the observation and the action taken, and
retrieves the memories most relevant to the observation into the prompt. Each `reset` (a new
episode) puts the stream back as it was when the policy's first episode began, so that what
was stored beforehand (a pinned persona, the task) stays and nothing of one episode reaches the
next; `keep_memory=True` carries memories across episodes instead.

Constrained decoding (`constrain="json"|"json_object"|"grammar"|"regex"`, default "off"): every call carries
a constraint generated from the agent's valid actions now (`teamenvs.core.constrain`), sent
the way the server family takes it (`constrained_request`), so the model can only write a
command that parses.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Callable, Mapping, Sequence

from teamenvs.core.commands import ActionError, CommandSet
from teamenvs.core.constrain import CONSTRAIN_MODES, JSON_MODES, REASONING_MAX_CHARS, constraint_for, reasoning_chars_for
from teamenvs.core.config import ConfigError, check_flag, check_int
from teamenvs.core.text import Briefing, excerpt

from agents.llm.client import Budget, LLMClient, Usage, run_sync

_FENCE = re.compile(r"```[a-zA-Z]*\n?|```")
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_MARKER = re.compile(r"(?i)^[ \t>*_#`-]*action[ \t*_]*:[ \t*_]*(.*)")  # at a line's start: not "Your last action: ..."
MAX_RATIONALE = 4_000
ANSWER_FORMAT = "Think briefly about what to do, then end your answer with one last line: ACTION: <command>"


def strip_thinking(text: str) -> str:
    """`text` with every `<think>...</think>` block replaced by a space (an unclosed one is kept), and before a first
    `</think>` that no `<think>` opened, everything: models whose chat template opens the block in the prompt
    (DeepSeek-R1's distills, QwQ) reply with their reasoning and its closing tag only.

    A lazy `<think>.*?</think>` regex rescans the rest of the reply from every unclosed tag
    (quadratic in a reply of many tags); this scans it once.
    """
    parts, pos = [], 0
    closing = _THINK_CLOSE.search(text)
    if closing is not None and not _THINK_OPEN.search(text, 0, closing.start()):
        parts, pos = [" "], closing.end()
    while (opening := _THINK_OPEN.search(text, pos)) is not None:
        closing = _THINK_CLOSE.search(text, opening.end())
        if closing is None:
            break
        parts += [text[pos:opening.start()], " "]
        pos = closing.end()
    return "".join(parts) + text[pos:]


SOURCES = ("json", "action line", "single line", "prose", "echo", "cut")  # where the action was found ("echo", "cut": none)
CUT_IN_THINKING = ("your reply was cut off inside its reasoning (a <think> never closed) before any action: think more "
                   "briefly, then end with the action")


def cut_in_thinking(text: str, finish_reason: str | None) -> bool:
    """Whether a reply stopped at the output limit inside a `<think>` block: whatever command its unfinished
    reasoning names is no decision (read as one, a model's "maybe harvest 50... no" would be played)."""
    if finish_reason != "length":
        return False
    opening = None
    for opening in _THINK_OPEN.finditer(text):
        pass
    return opening is not None and _THINK_CLOSE.search(text, opening.end()) is None
_ECHO_STRIP = " \t\r`'\"*_>#-."


def _echo_key(line: str) -> str:
    return " ".join(line.split()).strip(_ECHO_STRIP).lower()


class PromptLines:
    """The lines of a prompt a reply may copy (`read_reply`'s `echoed`), compared without case, spacing or
    surrounding punctuation. No prompt line is a bare command (the commands appear inside longer lines: "- wait:
    do nothing ...", "Now: harvest <amount> | wait"), so a reply line equal to one is a copy, however short
    (headings such as "Valid actions now:" included).

    The set is worked out the first time it is read: only a reply without an `ACTION:` line or a JSON action
    reads it, and splitting a whole prompt into keys costs more than the rest of reading a reply."""

    __slots__ = ("_texts", "_keys")

    def __init__(self, *texts: str) -> None:
        self._texts: tuple[str, ...] | None = texts
        self._keys: frozenset[str] = frozenset()

    def _worked_out(self) -> frozenset[str]:
        if self._texts is not None:
            self._keys = frozenset(k for text in self._texts for k in map(_echo_key, text.splitlines()) if k)
            self._texts = None
        return self._keys

    def __contains__(self, line: object) -> bool:
        return line in self._worked_out()

    def __bool__(self) -> bool:
        return bool(self._worked_out())

    def __len__(self) -> int:
        return len(self._worked_out())

    def __iter__(self) -> Any:
        return iter(self._worked_out())


def _json_action(obj: Any) -> bool:
    """Whether a decoded JSON value is an action: `{"action": "<command>"}` or, as constrained
    decoding writes it, `{"reasoning": ..., "action": {"command": ..., "args": {...}}}`."""
    return isinstance(obj, dict) and (isinstance(obj.get("action"), str) or isinstance(obj.get("action"), dict))


def _json_rationale(obj: dict[str, Any], default: str = "") -> str:
    return str(obj.get("reasoning") or obj.get("rationale") or obj.get("reason") or default).strip()[:MAX_RATIONALE]


def read_reply(reply: str, echoed: PromptLines | frozenset[str] = frozenset()) -> tuple[str, str, str]:
    """(action text, rationale, source) from a model reply; the action is '' when none can be
    found, and the source (one of SOURCES) says where it was found.

    Without an `ACTION:` line or a JSON action, the command is searched in the reply's own words:
    lines copied from the prompt (`echoed`, a `PromptLines`) are left out, since a weak model that
    repeats its observation ("Your last action: harvest 10 (accepted).", "Now: harvest <amount> | wait")
    would otherwise be credited with a command it never chose; a reply of nothing but such copies has
    no action (source "echo")."""
    text = strip_thinking(reply or "").strip()
    bare = _FENCE.sub("", text).strip()
    if bare.startswith("{") and bare.endswith("}"):
        try:
            obj = json.loads(bare)
        except (ValueError, RecursionError):
            obj = None
        if _json_action(obj):
            return bare, _json_rationale(obj), "json"
    lines = bare.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        m = _MARKER.match(lines[i])
        if m:
            action = m.group(1).strip().strip("`'\"* ")
            if not action and i + 1 < len(lines):  # "ACTION:" alone, the command on the next line
                action = lines[i + 1].strip().strip("`'\"* ")
            return action, "\n".join(lines[:i]).strip()[:MAX_RATIONALE], "action line"
    body = "\n".join(lines).strip()
    start, end = body.find("{"), body.rfind("}")
    if start >= 0 and end > start:
        try:
            obj = json.loads(body[start : end + 1])
            if _json_action(obj):
                return body[start : end + 1], _json_rationale(obj, body[:start]), "json"
        except (ValueError, RecursionError):
            pass
    non_empty = [line for line in lines if line.strip()]
    if echoed:
        own = [line for line in non_empty if _echo_key(line) not in echoed]
        if non_empty and not own:
            return "", "", "echo"
        if len(own) < len(non_empty):
            non_empty, body = own, "\n".join(own).strip()
    if len(non_empty) == 1:
        return non_empty[0].strip().strip("`'\"* "), "", "single line"
    return body, "", "prose"


def split_reply(reply: str) -> tuple[str, str]:
    """(action text, rationale) from a model reply (`read_reply` without the source)."""
    action, rationale, _ = read_reply(reply)
    return action, rationale


JSON_ANSWER_FORMAT = 'Answer with one JSON object: {"reasoning": "<brief>", "action": {"command": "<command>", "args": {...}}}'


def constrained_request(mode: str, forms: Sequence[Any], reasoning_chars: int = REASONING_MAX_CHARS,
                        accepts: Callable[[str], bool] | None = None) -> dict[str, Any]:
    """The request fields that constrain a reply to the valid commands of `forms`, the way each
    server family takes them: `json` as `response_format` json_schema (OpenAI structured outputs,
    vLLM, SGLang, llama.cpp's llama-server, Ollama), `json_object` as `response_format` json_object with a
    `schema` (llama-cpp-python's server, which refuses the json_schema type), `grammar` as a llama.cpp GBNF
    `grammar`, `regex` as vLLM's `guided_regex`; {} when off or when no command is possible now. The reasoning before the action is
    bounded by `reasoning_chars` (`reasoning_chars_for` the client's output limit); `accepts`, the env's
    rules for the agent, narrows forms with few concrete commands to those the rules accept."""
    if mode == "off" or not forms:
        return {}
    try:
        constraint = constraint_for(forms, reasoning_chars, accepts)
    except ValueError:
        return {}
    if mode == "json":
        return {"response_format": constraint.response_format()}
    if mode == "json_object":
        return {"response_format": {"type": "json_object", "schema": constraint.json_schema}}
    if mode == "grammar":
        return {"extra_body": {"grammar": constraint.gbnf}}
    return {"extra_body": {"guided_regex": constraint.regex}}


# a sentence ends at . ! or ? before the next one's capital (or an opening bracket)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_OWN_SENTENCE = ("You ", "You're ", "Your ")  # the agent's identity, role, holdings and orders: its own


@functools.lru_cache(maxsize=1024)  # every call of an episode asks for the same agent's rules
def team_part_first(rules: str) -> tuple[str, str]:
    """(the sentences every teammate's rules share, the agent's own ones) of an env's rules, each in its order.

    Briefings open with the agent's identity ("You are trader_1, one of 3 traders ..."), so the prompts of
    a team differ from their first words and a server's prefix cache serves none of them; with the
    sentences addressed to the agent ("You ...", "Your orders: ...") moved after the rest, the agents of
    an env share the rules' prefix. No sentence is changed or dropped."""
    sentences = _SENTENCE_BREAK.split(rules.strip())
    own = [s for s in sentences if s.startswith(_OWN_SENTENCE)]
    return " ".join(s for s in sentences if not s.startswith(_OWN_SENTENCE)), " ".join(own)


MIN_PROMPT_TOKENS = 128  # what a context window must leave for the prompt beside a call's output limit
REPAIR_ECHO_CHARS = 500  # what a repair turn repeats of the rejected reply: its action, not its reasoning
CUT_MARK = "[... earlier part of this message cut to fit the context window ...]\n"


def estimated_tokens(messages: Sequence[Mapping[str, str]]) -> int:
    """A server-independent estimate of a prompt's tokens: characters / 4, plus a few per message."""
    return sum(len(m["content"]) // 4 + 4 for m in messages)


def fit_messages(messages: list[dict[str, str]], budget: int) -> list[dict[str, str]]:
    """`messages` cut to about `budget` prompt tokens: the oldest repair turns go first (the newest
    error stays), then the head of the user message (its earlier observations; the observation now,
    the valid actions and the answer format are at its end), and only then the head of the system
    message (a window smaller than the rules themselves)."""
    out = [dict(m) for m in messages]
    while estimated_tokens(out) > budget and len(out) > 4:
        del out[2:4]  # the oldest assistant reply and the error sent back for it
    for index in (1, 0):  # the user message's head, then (a window smaller than the rules) the system's
        over = estimated_tokens(out) - budget
        if over <= 0:
            break
        text = out[index]["content"]
        keep = max(len(text) - 4 * over - len(CUT_MARK), 0)
        out[index] = {**out[index], "content": CUT_MARK + text[len(text) - keep:] if keep else CUT_MARK}
    return out


CONTEXT_REFUSALS = (400, 413, 422)  # the statuses servers refuse a too-long request with


def context_exceeded(error: Exception) -> bool:
    """Whether an endpoint refused a request for being longer than its context window: a 400, 413 or 422 whose
    message (the server's own: the error's text names the model and endpoint too, "long-context-model") says so."""
    if getattr(error, "status", None) not in CONTEXT_REFUSALS:
        return False
    text = str(getattr(error, "server_message", "")).lower()
    return "context" in text and any(w in text for w in ("length", "window", "too long", "exceed", "maximum"))


# the window as servers state it when they refuse: vLLM and OpenAI ("maximum context length is N
# tokens"), llama-cpp-python ("exceed context window of N"), llama.cpp ("available context size (N tokens)")
_STATED_WINDOW = re.compile(r"(?i)(?:maximum context length is|context window of|available context size) \(?(\d{2,8})")


def stated_window(error: Exception) -> int | None:
    """The context window an endpoint's too-long refusal states, else None."""
    match = _STATED_WINDOW.search((getattr(error, "server_message", "") or str(error))[:2000])
    return int(match.group(1)) if match else None


def valid_block(forms: Sequence[Any]) -> str:
    """The 'Valid actions now' block of a prompt: one line per command form, with an example."""
    if not forms:
        return "Valid actions now:\n- wait (e.g. wait)"
    return "Valid actions now:\n" + "\n".join(f"- {f.usage}: {f.help} (e.g. {f.example})" for f in forms)


class LLMPolicy:
    """A policy backed by an OpenAI-compatible chat model (see the module docstring)."""

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        client: LLMClient | None = None,
        commands: CommandSet | None = None,
        window: int = 2,
        max_repairs: int = 2,
        memory: Any | None = None,
        memories: int = 8,
        persona: str | None = None,
        theory: str | None = None,
        budget: Budget | None = None,
        constrain: str = "off",
        keep_memory: bool = False,
        context_window: int | str | None = None,
        **client_options: Any,
    ) -> None:
        if client is None:
            if model is None:
                raise ValueError("LLMPolicy needs a model name (or a client)")
            client = LLMClient(model, base_url=base_url, api_key=api_key, **client_options)
        elif client_options or api_key is not None:
            raise ValueError("pass client options to the LLMClient, not beside an existing client")
        window = check_int("window", window, 1)
        max_repairs = check_int("max_repairs", max_repairs, 0)
        memories = check_int("memories", memories, 0)
        check_flag("keep_memory", keep_memory)
        for name, text in (("persona", persona), ("theory", theory)):
            if text is not None and not isinstance(text, str):
                raise ConfigError(f"{name} must be text or None, got {excerpt(text)}")
        if constrain not in CONSTRAIN_MODES:
            raise ValueError(f"constrain must be one of {', '.join(CONSTRAIN_MODES)}, got {constrain!r}")
        if memory is not None and not keep_memory and not (hasattr(memory, "get_state") and hasattr(memory, "set_state")):
            raise TypeError("a memory restarted each episode needs get_state/set_state (a MemoryStream); "
                            "pass keep_memory=True to keep it across episodes")
        if context_window is not None and context_window != "auto" and (
                not isinstance(context_window, int) or isinstance(context_window, bool) or context_window < 256):
            raise ValueError(f"context_window must be 'auto' or a whole number of tokens >= 256, got {context_window!r}")
        self.context_window = context_window
        self._stated_window: int | None = None  # the window a too-long refusal stated (a property of the model: kept)
        self.constrain = constrain
        self.rules_accept: Callable[[str], bool] | None = None  # the env's rules for this agent (bind_rules), for constraints
        self.client = client
        self.commands = commands
        self.window = window
        self.max_repairs = max_repairs
        self.memory = memory
        self.keep_memory = keep_memory
        self._memory_start: dict[str, Any] | None = None  # the stream as the first episode found it
        self.memories = memories
        self.persona = persona
        self.theory = theory
        self.budget = budget
        self.agent_id = ""
        self.briefing = ""
        self.last_extras: dict[str, Any] = {}
        self.usage = Usage()
        self._recent: list[str] = []
        self.step = 0
        self._memory_clock = 0  # the memory's time: `step`, counted on across the episodes a kept memory spans

    # ------------------------------------------------------------------ Policy protocol
    def bind_rules(self, accepts: Callable[[str], bool]) -> None:
        """Give constrained decoding the env's rules for this agent (`functools.partial(env.accepts, agent)`,
        as `agents.run_episode` does after each reset): a form with few concrete commands then admits only
        those the rules accept now, as an RL action mask does. Without it, the command language alone."""
        self.rules_accept = accepts

    def reset(self, agent_id: str, briefing: str) -> None:
        self.agent_id = agent_id
        self.briefing = briefing
        self.rules_accept = None  # bound again for the new episode's env
        self.usage = Usage()
        self._recent = []
        if self.keep_memory:
            # a kept memory's last episode is in its past: its memories must age, not read as newer than this episode's
            self._memory_clock += self.step
        self.step = 0
        self.last_extras = {}
        if self.budget is not None:
            self.budget.reset()
        if self.memory is not None and not self.keep_memory:
            self._restart_memory()

    @property
    def memory_time(self) -> int:
        """The step the memory is told now: the episode's step, after those of the earlier episodes a kept memory holds."""
        return self._memory_clock + self.step

    def _restart_memory(self) -> None:
        """Put the memory back as the first episode found it (the first call only takes that snapshot)."""
        if self._memory_start is None:
            self._memory_start = self.memory.get_state()
        else:
            self.memory.set_state(self._memory_start)

    def system_prompt(self) -> str:
        """What every call of the episode starts with: the collaboration theory, the rules the team shares,
        the agent's own part of them (who it is, what it holds), then its persona. The parts shared by a
        team come first, so that a server's prefix cache can serve them to every agent. From an env's
        `Briefing` only the rules: the commands are listed once per call, for the situation then, in the
        user message; a plain-text briefing is used whole, as it is."""
        if isinstance(self.briefing, Briefing):
            shared, own = team_part_first(self.briefing.rules)
        else:
            shared, own = self.briefing, ""
        return "\n\n".join(p for p in (self.theory, shared, own, self.persona) if p)

    def user_prompt(self, observation: str, info: Mapping[str, Any], retrieved: Sequence[str] = ()) -> str:
        parts = []
        if self._recent:
            parts.append("Earlier observations (oldest first):\n" + "\n---\n".join(self._recent))
        if retrieved:
            parts.append("Things you remember:\n" + "\n".join(f"- {m}" for m in retrieved))
        parts.append("Your observation now:\n" + str(observation))
        parts.append(valid_block(info.get("valid_actions", ())))
        parts.append(JSON_ANSWER_FORMAT if self.constrain in JSON_MODES else ANSWER_FORMAT)
        return "\n\n".join(parts)

    def _check(self, action: str, info: Mapping[str, Any]) -> str | None:
        """The env's error for `action` in the situation it is offered, or None if the parser accepts it."""
        forms = info.get("valid_actions") or ()
        if not forms:
            return None
        commands = self.commands or CommandSet([f._command for f in forms])
        result = commands.parse(action, forms[0].situation)
        return result.error if isinstance(result, ActionError) else None

    async def aact(self, observation: str, info: Mapping[str, Any]) -> str:
        retrieved: list[str] = []
        if self.memory is not None and self.memories and str(observation).strip():  # (memories=0: stored, never recalled)
            retrieved = [m.text for m in await self.memory.aretrieve(str(observation), self.memory_time, k=self.memories)]
        messages: list[dict[str, str]] = [
            {"role": "system", "content": self.system_prompt()},
            {"role": "user", "content": self.user_prompt(observation, info, retrieved)},
        ]
        echoed = PromptLines(*(m["content"] for m in messages))
        step_usage = Usage()
        repairs: list[str] = []
        constrained = constrained_request(self.constrain, info.get("valid_actions") or (),
                                          reasoning_chars_for(getattr(self.client, "max_tokens", None)), self.rules_accept)
        answer_format = JSON_ANSWER_FORMAT if self.constrain in JSON_MODES else ANSWER_FORMAT
        try:
            while True:
                result = await self._chat(messages, step_usage, constrained)
                action, rationale, source = read_reply(result.text, echoed)
                if cut_in_thinking(result.text, result.finish_reason):
                    action, source = "", "cut"
                error = ("your reply was empty" if not result.text.strip()
                         else "your reply only repeated lines of your prompt: write your own action" if source == "echo"
                         else CUT_IN_THINKING if source == "cut"
                         else self._check(action, info))
                if error is None or len(repairs) >= self.max_repairs:
                    break
                repairs.append(error)
                # the repair turn repeats the action that was read, not the whole reply: a rambling or cut
                # reply sent back in full grows every later prompt by its length
                echo = f"ACTION: {action[:REPAIR_ECHO_CHARS]}" if action else "(an empty reply)"
                messages += [
                    {"role": "assistant", "content": echo},
                    {"role": "user", "content": f"That action was rejected: {error}\n{answer_format}"},
                ]
        finally:  # a step that fails after retries still counts its calls and retries
            self.usage.add(step_usage)
        self.last_extras = {"rationale": rationale, "reply": result.text[:MAX_RATIONALE], "usage": step_usage.to_json(),
                            "source": f"constrained {source}" if constrained else source}
        if result.finish_reason not in (None, "stop"):  # e.g. "length": the reply was cut at the output limit
            self.last_extras["finish_reason"] = result.finish_reason
        if repairs:
            self.last_extras["repairs"] = repairs
        self._recent = (self._recent + [str(observation)])[-(self.window - 1):] if self.window > 1 else []
        if self.memory is not None:
            if str(observation).strip():
                await self.memory.aadd(str(observation), self.memory_time, kind="observation")
            # a prose reply is its own action (the env finds the command in it): memory keeps its start, as a repair
            # turn does, or one long reply would ride along in every later prompt that retrieves it
            done = action[:REPAIR_ECHO_CHARS] if action else "(nothing)"
            await self.memory.aadd(f"I did: {done}" + (f" because {rationale}" if rationale else ""), self.memory_time, kind="action")
        self.step += 1
        return action

    async def _chat(self, messages: list[dict[str, str]], ledger: Usage, constrained: Mapping[str, Any]) -> Any:
        """One call, fitted to the context window when one is known (the reply's output limit included).
        An endpoint refusing the prompt as too long gets it once more, without the repair turns, a quarter
        shorter and within the window its refusal states (kept for later calls)."""
        from agents.llm.client import LLMError

        output = self.client.max_tokens or 0
        window = await self._window()
        budget = None if window is None else self._prompt_room(window, output, "")
        sent = messages if budget is None else fit_messages(messages, budget)
        try:
            return await self.client.chat(sent, budget=self.budget, ledger=ledger, **constrained)
        except LLMError as exc:
            if not context_exceeded(exc):
                raise
            # a quarter shorter than what was refused, and within the window the refusal states (10% spare:
            # the server counts tokens its own way, this policy estimates them)
            retry_budget = min(budget or 10**9, estimated_tokens(sent)) * 3 // 4
            stated = stated_window(exc)
            if stated is not None:
                self._prompt_room(stated * 9 // 10, output, f", as the server's refusal states it ({stated:,}) less 10% spare")
                self._stated_window = stated
                retry_budget = min(retry_budget, (stated - output) * 9 // 10)
            shorter = fit_messages(messages[:2], retry_budget)
            return await self.client.chat(shorter, budget=self.budget, ledger=ledger, **constrained)

    @staticmethod
    def _prompt_room(window: int, output: int, how: str) -> int:
        """The prompt tokens `window` leaves beside the output limit; ConfigError below MIN_PROMPT_TOKENS (the rule
        `check_token_options` applies to a window given on the command line), where every prompt would be cut to nothing."""
        room = window - output
        if room < MIN_PROMPT_TOKENS:
            raise ConfigError(f"the context window of {window:,} tokens{how} leaves no room for a prompt beside the output "
                              f"limit of {output:,} tokens (max_tokens, --max-output-tokens): at least {MIN_PROMPT_TOKENS} "
                              "are needed; lower the output limit or use a model with a larger window")
        return room

    async def _window(self) -> int | None:
        """The context window to fit prompts into: the one given, or with "auto" the one the server
        states (`LLMClient.context_window`; None, no fitting, when it does not say)."""
        if self.context_window == "auto":
            window = await self.client.context_window()
        else:
            window = self.context_window
        # a window a refusal stated: kept, 10% spare, since the server counts tokens its own way
        stated = self._stated_window
        return window if stated is None else min(window or stated, stated * 9 // 10)

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        """Synchronous `aact`, from any thread (one with a running event loop included).

        It runs on an event loop kept from call to call (`agents.llm.client.run_sync`: the calling
        thread's own, or, in a thread that runs a loop already, one on a background thread), so the
        client keeps its connections from one call to the next; `close()` closes them (they are
        also closed at exit)."""
        return run_sync(self.aact(observation, info))

    def close(self) -> None:
        """Close the connections kept by synchronous calls (`act`)."""
        closer = getattr(self.client, "close", None)
        if closer is not None:
            closer()

    async def ask(self, question: str, context: str = "") -> str:
        """A free question to the agent outside the episode (probes, interviews), with its briefing and memory."""
        retrieved = ([m.text for m in await self.memory.aretrieve(question, self.memory_time, k=self.memories, touch=False)]
                     if self.memory is not None and self.memories else [])
        content = "\n\n".join(p for p in (
            "Things you remember:\n" + "\n".join(f"- {m}" for m in retrieved) if retrieved else "",
            "Your latest observations:\n" + "\n---\n".join(self._recent) if self._recent else "",
            context,
            question,
        ) if p)
        messages = [{"role": "system", "content": self.system_prompt()}, {"role": "user", "content": content}]
        ledger = Usage()
        try:
            result = await self.client.chat(messages, budget=self.budget, ledger=ledger)
        finally:  # a question that fails after retries still counts its calls and retries, as `aact` does
            self.usage.add(ledger)
        return result.text

    async def aclose(self) -> None:
        await self.client.aclose()

    def __repr__(self) -> str:
        return f"LLMPolicy(model={self.client.model!r}, agent={self.agent_id!r})"


def make_llm_policies(
    env: Any,
    model: str,
    base_url: str | None = None,
    *,
    client: LLMClient | None = None,
    max_calls: int | None = None,
    token_budget: int | None = None,
    personas: Mapping[str, str] | None = None,
    theory: str | None = None,
    memory: bool | Mapping[str, Any] | None = None,
    **options: Any,
) -> dict[str, LLMPolicy]:
    """One `LLMPolicy` per agent of `env`, sharing one client and one per-episode budget
    (`max_calls` model calls, `token_budget` prompt + completion tokens; `max_tokens`, a client
    option, is each call's output limit, as in the API).

    `memory=True` gives each agent a `MemoryStream()` of its own, a mapping its options
    (`{"capacity": 200, "decay": 0.99}`: `MemoryStream` arguments); None or False, none.
    `options` named `window`, `max_repairs`, `memories`, `constrain`, `context_window` or `keep_memory` go to each
    `LLMPolicy`, the rest to the `LLMClient` made when none is given.
    """
    policy_keys = {"window", "max_repairs", "memories", "constrain", "context_window", "keep_memory"}
    policy_options = {k: v for k, v in options.items() if k in policy_keys}
    client_options = {k: v for k, v in options.items() if k not in policy_keys}
    if client is not None and (client_options or base_url is not None):  # they were dropped without a word
        given = sorted(client_options) + (["base_url"] if base_url is not None else [])
        raise ValueError(f"pass client options ({', '.join(given)}) to the LLMClient, not beside an existing client")
    agents = list(env.possible_agents)
    if personas is not None:
        if not isinstance(personas, Mapping):
            raise ValueError(f"personas must be a dict agent -> persona text, got {excerpt(personas)}")
        unknown = [a for a in personas if a not in agents]
        if unknown:  # a misspelt agent's persona would be left out without a word
            raise ValueError(f"personas for agents the env does not have: {', '.join(map(excerpt, unknown))}; "
                             f"agents are {', '.join(agents)}")
    client = client or LLMClient(model, base_url=base_url, **client_options)
    budget = Budget(max_calls, token_budget)
    commands = env.unwrapped.commands
    return {
        agent: LLMPolicy(client=client, commands=commands, budget=budget, persona=(personas or {}).get(agent), theory=theory,
                         memory=memory_stream(memory), **policy_options)
        for agent in agents
    }


def memory_stream(memory: bool | Mapping[str, Any] | None) -> Any:
    """A new `MemoryStream` for a `memory` option: True (default options), a mapping of its
    options, or None / False (no memory, returned as None)."""
    if memory is None or memory is False:
        return None
    from agents.memory import MemoryStream

    if memory is True:
        return MemoryStream()
    if isinstance(memory, Mapping):
        return MemoryStream(**memory)
    raise TypeError(f"memory must be True, False, None or a mapping of MemoryStream options, got {type(memory).__name__}")
