"""One messaging layer for every paradigm: broadcast and direct messages, inboxes, bandwidth conditions.

Messages sent during a step are delivered when the step ends, so they appear in the
recipients' next observation and nobody reads a message before acting in the step it was
sent. The communication conditions of the team-science literature are configuration:
`communication` (on/off, or a paradigm's named modes such as radio range), `max_words` per message (a longer message is
refused with the reason, as CollabSim's controller refuses one: B.3's "limited to a maximum of 15 words"), `min_steps_between_messages` (earlier messages are rejected, and the sender is told).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from itertools import islice
from typing import Any, ClassVar, Sequence

from teamenvs.core.commands import Action, Command, NameArg, TextArg, too_many_words
from teamenvs.core.config import ConfigError, TeamConfig, setting
from teamenvs.core.text import clean_text, excerpt

MAX_MESSAGE_CHARS = 1_000

SAY = Command("say", (TextArg("message", "here is my plan for the next round"),), "send a message to the whole team")
TELL = Command(
    "tell",
    (NameArg("recipient", "agent"), TextArg("message", "can you take the next one?")),
    "send a private message to one teammate",
)


@dataclass(frozen=True)
class MessagingConditions(TeamConfig):
    """Communication conditions; paradigm configs inherit these fields.

    `communication` is true/false, or (for a paradigm that lists `communication_modes`)
    one of those modes, where "none" means off.
    """

    communication_modes: ClassVar[tuple[str, ...]] = ()

    communication: bool | str = setting(True, doc="whether agents may message (or, where the paradigm has modes, which mode)")
    max_words: int | None = setting(None, low=1, doc="the most words a message may hold (longer ones are refused); None: unlimited")
    min_steps_between_messages: int = setting(0, low=0, doc="steps an agent must wait between two messages")
    message_history: int = setting(8, low=0, high=1_000_000, doc="recent messages kept in view")

    def _check(self) -> None:
        modes = self.communication_modes
        if modes and self.communication not in modes:
            raise ConfigError(f"communication must be one of {', '.join(modes)}, got {excerpt(self.communication)}")
        if not modes and not isinstance(self.communication, bool):
            raise ConfigError(f"communication must be true or false, got {excerpt(self.communication)}")

    @property
    def talking_allowed(self) -> bool:
        """Whether messages may be sent at all under this condition."""
        return self.communication not in (False, "none")


@dataclass(frozen=True)
class Message:
    """A delivered message. `to` is None for a broadcast (`say`), else the one recipient (`tell`)."""

    step: int
    sender: str
    text: str
    to: str | None = None

    def render(self, viewer: str) -> str:
        if self.sender == viewer:
            target = "everyone" if self.to is None else self.to
            return f"you -> {target}: {self.text}"
        return f"{self.sender}{' (to you)' if self.to is not None else ''}: {self.text}"

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "sender": self.sender, "to": self.to, "text": self.text}


def word_limits(conditions: "MessagingConditions") -> dict[str, tuple[int, int]]:
    """The `Situation` limits a messaging condition puts on the text of `say` and `tell` (by their argument's name)."""
    return {} if conditions.max_words is None else {"message": (1, conditions.max_words)}


@dataclass(frozen=True)
class SendResult:
    """Outcome of a send: the message, or None and why it was refused (`notice`)."""

    message: Message | None
    notice: str | None = None


class Messenger:
    """Per-episode message routing with inboxes and the bandwidth conditions."""

    def __init__(self, agents: Sequence[str], conditions: MessagingConditions) -> None:
        self.agents = tuple(agents)
        self.conditions = conditions
        self.reset()

    def reset(self) -> None:
        history = self.conditions.message_history
        self._pending: list[tuple[Message, tuple[str, ...]]] = []
        self.last_delivery: tuple[tuple[Message, tuple[str, ...]], ...] = ()
        self._inbox: dict[str, tuple[Message, ...]] = {a: () for a in self.agents}
        self._history: dict[str, deque[Message]] = {a: deque(maxlen=history) for a in self.agents}
        self._appended: dict[str, int] = {a: 0 for a in self.agents}  # messages ever added to each history
        self._last_sent: dict[str, int] = {}
        self._versions: dict[str, int] = {a: 0 for a in self.agents}
        self.sent: dict[str, int] = {a: 0 for a in self.agents}
        self.words: dict[str, int] = {a: 0 for a in self.agents}

    def blocked(self, agent: str, step: int) -> str | None:
        """Why `agent` cannot send a message at `step`, or None if it can."""
        if not self.conditions.talking_allowed:
            return "communication is off in this condition"
        gap = self.conditions.min_steps_between_messages
        last = self._last_sent.get(agent)
        if gap and last is not None and step - last < gap:
            return (
                f"bandwidth limit: one message every {gap} steps; your last message was at step {last}, "
                f"the next is allowed at step {last + gap}"
            )
        return None

    def send(self, step: int, sender: str, text: str, recipients: Sequence[str], to: str | None = None) -> SendResult:
        """Queue a message from `sender` to `recipients` (delivered by `deliver`), applying the conditions."""
        reason = self.blocked(sender, step)
        if reason is not None:
            return SendResult(None, f"message not sent: {reason}")
        if to is not None and to == sender:
            return SendResult(None, "message not sent: you cannot send a message to yourself")
        text = clean_text(text, MAX_MESSAGE_CHARS)
        words = text.split()
        limit = self.conditions.max_words
        if limit is not None and len(words) > limit:  # (a parsed message never is: the limit is in its situation)
            return SendResult(None, f"message not sent: {too_many_words(len(words), limit)}")
        if not text:
            return SendResult(None, "message not sent: it was empty after removing control characters")
        message = Message(step, sender, text, to)
        self._pending.append((message, tuple(r for r in recipients if r != sender)))
        self._last_sent[sender] = step
        self.sent[sender] += 1
        self.words[sender] += len(words)
        return SendResult(message)

    def deliver(self) -> tuple[Message, ...]:
        """Move this step's messages into inboxes; returns what was delivered.

        `last_delivery` keeps each delivered message with its recipients.
        """
        if not self._pending and not any(self._inbox.values()):  # most steps: nothing sent, every inbox empty already
            self.last_delivery = ()
            return ()
        inbox: dict[str, list[Message]] = {a: [] for a in self.agents}
        appended = self._appended
        for message, recipients in self._pending:
            self._history[message.sender].append(message)
            appended[message.sender] += 1
            for r in recipients:
                inbox[r].append(message)
                self._history[r].append(message)
                appended[r] += 1
        self.last_delivery = tuple(self._pending)
        delivered = tuple(m for m, _ in self._pending)
        touched = {m.sender for m in delivered} | {a for a, ms in inbox.items() if ms} | {a for a, ms in self._inbox.items() if ms}
        for agent in touched:
            self._versions[agent] += 1
        self._pending = []
        self._inbox = {a: tuple(ms) for a, ms in inbox.items()}
        return delivered

    def version(self, agent: str) -> int:
        """A counter that changes whenever `agent`'s inbox or history changes (for caching renderings)."""
        return self._versions[agent]

    def inbox(self, agent: str) -> tuple[Message, ...]:
        """Messages delivered to `agent` at the end of the last step."""
        return self._inbox[agent]

    def history(self, agent: str) -> tuple[Message, ...]:
        """The last `message_history` messages `agent` sent or received, oldest first."""
        return tuple(self._history[agent])

    def appended(self, agent: str) -> int:
        """How many messages have been added to `agent`'s history in all (the history keeps the last of them)."""
        return self._appended[agent]

    def added_since(self, agent: str, appended: int) -> tuple[int, list[Message]]:
        """(the history's length, the messages added to `agent`'s history after the first `appended` that it still holds)."""
        history = self._history[agent]
        keep = len(history)
        return keep, list(islice(history, max(0, keep - (self._appended[agent] - appended)), None))


def event(kind: str, text: str, **data: Any) -> dict[str, Any]:
    """An event: a type, the sentence an agent reads, and structured data for metrics."""
    return {"type": kind, "text": text, **data}


class Conversation:
    """The messaging part of a `TeamEnv`: sending `say`/`tell` under the conditions, and the messages
    in a view. Paradigms override `_recipients`, `_send_refusal` and `_on_delivered` to add their rules
    (range limits, bandwidth, who hears what)."""

    def _recipients(self, sender: str, to: str | None) -> list[str]:
        """Who receives a message: everyone else for `say`, the named agent for `tell`."""
        return [a for a in self.agents if a != sender] if to is None else [to]

    def _send_refusal(self, sender: str, to: str | None, text: str) -> str | None:
        """Why the message `text` from `sender` (to `to`, or to all) cannot be sent now, or None."""
        return None

    def _on_delivered(self, delivery: tuple[tuple[Any, tuple[str, ...]], ...]) -> None:
        """Called after this step's messages reach their recipients (message, recipients)."""

    def _send(self, agent: str, action: Action) -> None:
        to = action.args.get("recipient")
        refusal = self._send_refusal(agent, to, action.args["message"])
        if refusal is not None:
            self.reject(agent, f"message not sent: {refusal}")
            return
        result = self.messenger.send(self.step_count, agent, action.args["message"], self._recipients(agent, to), to)
        if result.message is None:
            self.reject(agent, result.notice or "message not sent")
            return
        message = result.message
        self.global_events.append(
            event("message", f"{agent} sent a message", sender=agent, to=message.to, words=len(message.text.split()), message=message.text)
        )

    def messages_view(self, agent: str) -> dict[str, tuple[str, ...]]:
        """The messaging part of a view: new messages and the recent conversation, as lines."""
        messenger = self.messenger
        version = messenger.version(agent)
        cached = self._messages_cache.get(agent)
        if cached is None or cached[0] != version:
            # the recent conversation is the lines rendered before plus the messages added to the history since, cut to
            # the history's length: each message is rendered for a viewer once, not at every step that adds one
            appended = messenger.appended(agent)
            recent, rendered_upto = (cached[1]["recent_messages"], cached[2]) if cached is not None else ((), 0)
            if appended != rendered_upto:
                keep, added = messenger.added_since(agent, rendered_upto)
                recent = (*recent, *(m.render(agent) for m in added))[-keep:] if keep else ()
            rendered = {"new_messages": tuple(m.render(agent) for m in messenger.inbox(agent)), "recent_messages": recent}
            cached = (version, rendered, appended)
            self._messages_cache[agent] = cached
        return cached[1]
