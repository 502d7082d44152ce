"""The shared view helpers: read-only facts that views share, and thawing them into plain dicts."""

import pytest


def test_thaw_copies_shared_facts_into_plain_dicts_wherever_they_are():
    from teamenvs.core.view import SharedFacts, thaw

    facts = SharedFacts(victim=3, cell=(1, 2))
    view = {"here": (facts, facts), "notes": [SharedFacts(room="A")], "cell": (1, 2), "n": 4, "none": None}
    thawed = thaw(view)
    assert thawed == view  # the same values
    assert type(thawed["here"]) is tuple and type(thawed["notes"]) is list
    for part in (*thawed["here"], *thawed["notes"]):
        assert type(part) is dict
    assert thawed["here"][0] is not facts and thawed["here"][0] is not thawed["here"][1]
    thawed["here"][0]["victim"] = 9  # a plain dict of its own: changing it changes nothing shared
    assert facts["victim"] == 3
    with pytest.raises(TypeError, match="read-only"):
        facts["victim"] = 9
