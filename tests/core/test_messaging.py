"""The shared messaging layer (`teamenvs.core.messaging`) and the text hygiene it relies on.

Covers delivery timing (a message sent during a step reaches inboxes only at `deliver()`,
and inboxes hold one step's messages), broadcast vs direct routing and what third parties
can see, the bandwidth conditions (`max_words` truncation, `min_steps_between_messages`)
with the notices the sender reads, communication off, control characters, messages to
oneself, the history length, and validation of `MessagingConditions`.
"""

from __future__ import annotations

import pytest

from teamenvs.core.config import ConfigError
from teamenvs.core.messaging import Message, MessagingConditions, Messenger
from teamenvs.core.text import clean_text, quote

AGENTS = ("ann", "bob", "cat")


def messenger(**conditions) -> Messenger:
    return Messenger(AGENTS, MessagingConditions(**conditions))


def say(m: Messenger, step: int, sender: str, text: str):
    return m.send(step, sender, text, [a for a in AGENTS if a != sender])


def tell(m: Messenger, step: int, sender: str, to: str, text: str):
    return m.send(step, sender, text, [to], to=to)


def texts(messages) -> list[str]:
    return [m.text for m in messages]


def test_message_is_delivered_by_deliver_not_when_sent():
    m = messenger()
    result = say(m, 0, "ann", "hello team")
    assert result.message == Message(0, "ann", "hello team", None)
    assert result.notice is None
    assert m.inbox("bob") == () and m.inbox("cat") == ()
    assert m.history("bob") == ()
    delivered = m.deliver()
    assert texts(delivered) == ["hello team"]
    assert texts(m.inbox("bob")) == ["hello team"]
    assert texts(m.inbox("cat")) == ["hello team"]
    assert m.inbox("ann") == ()  # the sender does not receive its own broadcast
    assert texts(m.history("ann")) == ["hello team"]  # but it is in the sender's history
    m.deliver()  # next step: nothing new
    assert m.inbox("bob") == () and m.inbox("cat") == ()
    assert texts(m.history("bob")) == ["hello team"]


def test_broadcast_vs_direct():
    m = messenger()
    say(m, 0, "ann", "public note")
    tell(m, 0, "bob", "cat", "secret for cat")
    m.deliver()
    assert texts(m.inbox("cat")) == ["public note", "secret for cat"]
    assert texts(m.inbox("bob")) == ["public note"]
    assert texts(m.inbox("ann")) == []
    # the third party has no trace of the direct message anywhere
    assert all("secret" not in msg.text for msg in m.history("ann"))
    assert [msg.sender for msg in m.history("ann")] == ["ann"]
    assert texts(m.history("bob")) == ["public note", "secret for cat"]  # sender keeps its own


def test_sender_never_receives_its_own_message():
    m = messenger()
    m.send(0, "ann", "to all, me included", AGENTS)
    m.deliver()
    assert m.inbox("ann") == ()
    assert texts(m.history("ann")) == ["to all, me included"]  # once, as its sender
    assert texts(m.inbox("bob")) == ["to all, me included"]


def test_rendering_marks_direct_messages_and_own_messages():
    message = Message(3, "bob", "pool it", "cat")
    assert message.render("cat") == "bob (to you): pool it"
    assert message.render("bob") == "you -> cat: pool it"
    broadcast = Message(3, "ann", "hi", None)
    assert broadcast.render("bob") == "ann: hi"
    assert broadcast.render("ann") == "you -> everyone: hi"
    assert message.to_json() == {"step": 3, "sender": "bob", "to": "cat", "text": "pool it"}


def test_max_words_refuses_a_longer_message_and_says_why():
    m = messenger(max_words=3)
    result = say(m, 0, "ann", "one two three four five")
    assert result.message is None
    assert result.notice == "message not sent: it has 5 words, and a message may hold at most 3 words: say it in fewer"
    assert m.sent["ann"] == 0 and m.words["ann"] == 0
    short = say(m, 1, "ann", "one two three")
    assert short.notice is None and short.message.text == "one two three"
    m.deliver()
    assert texts(m.inbox("bob")) == ["one two three"] and m.words["ann"] == 3


def test_the_word_limit_is_in_the_situation_so_valid_messages_are_exact():
    # the parser refuses what the rules would, so a masked-in or sampled `say` is never refused for its length
    import numpy as np

    from teamenvs.core.commands import CommandSet, Situation
    from teamenvs.core.messaging import SAY, MessagingConditions, word_limits

    commands = CommandSet([SAY])
    limited = Situation(limits=word_limits(MessagingConditions(max_words=4)))
    assert word_limits(MessagingConditions()) == {}
    refused = commands.parse("say one two three four five", limited)
    assert refused.kind == "bad_argument" and "it has 5 words, and a message may hold at most 4 words" in refused.error
    assert commands.parse("say one two three four", limited).args["message"] == "one two three four"
    rng = np.random.default_rng(0)
    [form] = commands.forms(limited)
    assert all(len(form.sample(rng).split()) <= 1 + 4 for _ in range(200))
    assert len(SAY.example_text(limited).split()) <= 1 + 4


def test_min_steps_between_messages_rejects_with_the_next_allowed_step():
    m = messenger(min_steps_between_messages=5)
    assert say(m, 2, "ann", "first").message is not None
    assert m.blocked("ann", 3) is not None
    rejected = say(m, 4, "ann", "second")
    assert rejected.message is None
    assert rejected.notice.startswith("message not sent: bandwidth limit")
    assert "one message every 5 steps" in rejected.notice
    assert "your last message was at step 2" in rejected.notice
    assert "the next is allowed at step 7" in rejected.notice
    assert say(m, 4, "bob", "others are not blocked").message is not None
    assert m.blocked("ann", 6) is not None  # the boundary: one step before the next allowed one
    assert m.blocked("ann", 7) is None
    assert say(m, 7, "ann", "third").message is not None
    m.deliver()
    assert texts(m.inbox("cat")) == ["first", "others are not blocked", "third"]
    assert m.sent == {"ann": 2, "bob": 1, "cat": 0}


def test_communication_off():
    m = messenger(communication=False)
    assert m.blocked("ann", 0) == "communication is off in this condition"
    result = say(m, 0, "ann", "hello")
    assert result.message is None
    assert result.notice == "message not sent: communication is off in this condition"
    m.deliver()
    assert all(m.inbox(a) == () for a in AGENTS)
    assert m.sent == {"ann": 0, "bob": 0, "cat": 0}


def test_control_characters_are_cleaned_from_messages():
    m = messenger()
    result = say(m, 0, "ann", "hi\x00 there\x1b[31m\x07 team\u200b\nnext\tline")
    assert result.message.text == "hi there[31m team next line"
    assert result.message.text.isprintable()
    only_controls = say(m, 0, "bob", "\x00\x01\x02\u200b")
    assert only_controls.message is None
    assert "empty after removing control characters" in only_controls.notice


def test_message_to_self_is_rejected():
    m = messenger()
    result = tell(m, 0, "ann", "ann", "note to self")
    assert result.message is None
    assert result.notice == "message not sent: you cannot send a message to yourself"
    m.deliver()
    assert m.history("ann") == ()
    assert m.sent["ann"] == 0


def test_history_keeps_the_last_messages_only():
    m = messenger(message_history=2)
    for step, text in enumerate(["a", "b", "c"]):
        say(m, step, "ann", text)
        m.deliver()
    assert texts(m.history("bob")) == ["b", "c"]
    m.reset()
    assert m.history("bob") == () and m.sent["ann"] == 0


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"communication": "yes"}, "communication"),
        ({"max_words": 0}, "max_words"),
        ({"max_words": 2.5}, "max_words"),
        ({"min_steps_between_messages": -1}, "min_steps_between_messages"),
        ({"message_history": -3}, "message_history"),
    ],
)
def test_conditions_are_validated(kwargs, field):
    with pytest.raises(ConfigError, match=field):
        MessagingConditions(**kwargs)


def test_clean_text_rules():
    assert clean_text("a \x00 b") == "a b"  # no double space where a control character was
    assert clean_text("a\n\nb  c") == "a b c"
    assert clean_text("a\n\x00\nb", keep_newlines=True) == "a\n\nb"
    assert clean_text("x" * 100, 10) == "x" * 10
    assert quote("y" * 100, 10) == "'yyyyyyy...'"
    assert quote("ok\x00") == "'ok'"


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"communication": 1}, "communication"),
        ({"max_words": -2}, "max_words"),
        ({"min_steps_between_messages": "5"}, "min_steps_between_messages"),
    ],
)
def test_paradigm_configs_validate_the_conditions(kwargs, field):
    from teamenvs.day_trader.config import DayTraderConfig

    with pytest.raises(ConfigError, match=field):
        DayTraderConfig(**kwargs)


@pytest.mark.parametrize("env_id,history", [("day_trader_v0", 3), ("day_trader_v0", 0), ("map_task_v0", 8), ("hidden_profile_v0", 50)])
def test_views_show_the_history_as_rendered_afresh_and_render_each_message_once_per_viewer(env_id, history, monkeypatch):
    """A view's messages are the inbox and the history rendered for the viewer, at every step (the recent lines are
    kept between steps and extended with the messages added since, cut to the history's length), and a message is
    rendered for a viewer about once: at most twice per message added to a history (its history line, and its
    inbox line for a recipient), not once per step it stays in the history."""
    import numpy as np

    import teamenvs

    calls = []
    render = Message.render
    monkeypatch.setattr(Message, "render", lambda self, viewer: calls.append(viewer) or render(self, viewer))
    env = teamenvs.make(env_id, message_history=history)
    rng = np.random.default_rng(0)
    added = 0
    for seed in range(3):
        _, infos = env.reset(seed=seed)
        while env.agents:
            actions = {}
            for a in env.agents:
                if infos[a]["needs_action"]:
                    forms = infos[a]["valid_actions"]
                    say = [f for f in forms if f.command == "say"]
                    actions[a] = (say[0] if say and rng.random() < 0.7 else forms[int(rng.integers(len(forms)))]).sample(rng)
            _, _, _, _, infos = env.step(actions)
            for a in env.agents:
                view = infos[a]["view"]
                expect = tuple(render(m, a) for m in env.messenger.history(a))
                assert view["recent_messages"] == expect
                assert view["new_messages"] == tuple(render(m, a) for m in env.messenger.inbox(a))
        added += sum(env.messenger.appended(a) for a in env.possible_agents)
    assert added > 50  # messages were sent and kept
    assert len(calls) <= 2 * added


def test_added_since_gives_the_messages_a_history_gained_that_it_still_holds():
    m = messenger(message_history=2)
    say(m, 0, "ann", "one")
    m.deliver()
    seen = m.appended("bob")
    say(m, 1, "ann", "two")
    tell(m, 1, "cat", "bob", "three")
    m.deliver()
    assert m.appended("bob") == seen + 2
    keep, added = m.added_since("bob", seen)
    assert keep == 2 and texts(added) == ["two", "three"]
    assert m.added_since("bob", m.appended("bob")) == (2, [])
    keep, added = m.added_since("bob", 0)  # three were added; the history holds the last two
    assert keep == 2 and texts(added) == ["two", "three"]
    assert m.added_since("ann", 0) == (2, list(m.history("ann")))
