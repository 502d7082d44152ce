"""The hidden profile's encoder caches give what working each vector out afresh gives.

A member's document is found again by its object (`view._DOCUMENTS`, records kept per document by `_document_record`), its
slots given the facts discussed so far are worked out, clipped, once per document and set of facts (`_discussed`,
with the first line not yet discussed that masks read), the chats read lately are known again by their object and a
grown chat is read from the chat it extends (`_CHATS`), and the slots written per view are clipped as they are
written (`teamenvs.core.rl.clipped`). At every step of random masked-in play in every preset, each member's vector equals its view
encoded with every cache emptied and the view packed plainly (`encode_values`), and the first line not yet discussed
equals the one read line by line; views with values out of their scale, chats that only look like extensions and
other documents and facts of the same sizes, and documents held as lists are checked by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

import teamenvs
from teamenvs.core.rl import pack
from teamenvs.core.view import thaw
from teamenvs.hidden_profile import view as hp_view
from teamenvs.hidden_profile.config import PRESETS
from teamenvs.hidden_profile.view import _FACT_LINE, discussed_facts, encode, encode_values, fact_message, features, first_fresh
from teamenvs.testing import masked_play


def forget_everything():
    """Empty every cache of the encoder, so that what it gives next is worked out from the view alone."""
    hp_view._CHATS.clear()
    hp_view._DOCUMENTS.clear()
    hp_view._document_record.cache_clear()
    hp_view._discussed_tally.cache_clear()


def plain_discussed(lines) -> frozenset:
    """The facts shared in a chat, read line by line with no cache."""
    found = set()
    for line in lines:
        match = _FACT_LINE.fullmatch(line.split(": ", 1)[1] if ": " in line else "")
        if match is not None:
            found.add(match.groups())
    return frozenset(found)


def fresh_vector(view, config):
    forget_everything()
    return encode(view, config)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_vectors_with_the_caches_equal_vectors_worked_out_afresh(preset):
    env = teamenvs.make("hidden_profile_v0", preset=preset, obs_type="vector", action_type="discrete")
    config = env.config
    table = features(config)
    rng = np.random.default_rng(11)
    compared = 0
    for seed, obs, infos in masked_play(env, (0, 1, 2), rng):
        for agent in obs:
            view = infos[agent]["view"]
            vector = obs[agent]["observation"]
            assert vector.tobytes() == pack(table, encode_values(view, config)).tobytes(), (preset, seed, env.step_count, agent)
            assert vector.tobytes() == fresh_vector(view, config).tobytes(), (preset, seed, env.step_count, agent)
            lines = view["recent_messages"]
            said = plain_discussed(lines)
            assert discussed_facts(lines) == said
            assert first_fresh(view["document"], lines) == next((item for item in view["document"] if item not in said), None)
            compared += 1
    assert compared > 100


def test_views_that_share_parts_with_a_view_encoded_before_are_read_for_what_they_hold():
    env = teamenvs.make("hidden_profile_v0", obs_type="vector", action_type="discrete")
    config, table = env.config, features(env.config)
    _, infos = env.reset(seed=0)
    _, _, _, _, infos = env.step({a: "decide A" for a in env.agents})
    view = infos["member_1"]["view"]
    assert view["phase"] == "discussion"
    for changed in ({**view, "new_messages": ("member_2: hello",) * 15}, {**view, "discussion_turn": 3 * view["discussion_turns"]}):
        encode(view, config)  # the view's own document and chat are kept
        assert encode(changed, config).tobytes() == pack(table, encode_values(changed, config)).tobytes()
    assert encode({**view, "new_messages": ("x",) * 15}, config)[hp_view._NEW] == 1.0
    # another document of the same length, and chats that share as many facts but other ones, each read for what it holds
    document, lines = view["document"], view["recent_messages"]
    others = [{**view, "document": tuple(reversed(document))},
              {**view, "recent_messages": (*lines, f"member_2: {fact_message(document[0])}")},
              {**view, "recent_messages": (*lines, "member_2: Candidate A strength: Not in any document.")}]
    for changed in others:
        encode(view, config)
        assert encode(changed, config).tobytes() == pack(table, encode_values(changed, config)).tobytes()
    listed = thaw({**view, "document": [list(item) for item in view["document"]]})  # (as a copy sent over JSON reads)
    assert encode(listed, config).tobytes() == encode(view, config).tobytes() == fresh_vector(view, config).tobytes()


def test_chats_known_by_their_object_or_grown_from_another_are_the_chats_read_line_by_line():
    fact_a = "member_2: Candidate A strength: Calm under pressure."
    fact_b = "member_3: Candidate B weakness: Late to briefings."
    hello = "member_3: hello"
    chats = [
        (fact_a, hello),
        (fact_a, hello, "you -> everyone: Candidate A strength: Calm under pressure."),  # grows by a fact known already
        (fact_a, hello, "you -> everyone: Candidate A strength: Calm under pressure.", fact_b),  # grows by a new fact
        (fact_b, hello, "member_2: more"),  # its second line is the first chat's last, but it does not extend it
        (hello, "member_2: more"),  # the history dropped its oldest line
        (),
    ]
    forget_everything()
    for lines in chats:
        assert discussed_facts(lines) == plain_discussed(lines), lines
        assert discussed_facts(lines) == plain_discussed(lines), lines  # known again by its object
        assert discussed_facts(list(lines)) == plain_discussed(lines), lines
