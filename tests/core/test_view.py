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


def test_a_part_worked_out_once_per_step_is_shared_within_the_step_only():
    """`TeamEnv.once_per_step`: every view of a step holds one object (built once, `None` included), the next step and
    the first step of a new episode (step 0 again) build their own."""
    import teamenvs

    env = teamenvs.make("commons_v0")
    env.reset(seed=0)
    made = []

    def make():
        made.append(env.step_count)
        return None if len(made) == 1 else object()

    assert env.once_per_step("x", make) is None and env.once_per_step("x", make) is None and made == [0]
    env.step({a: "harvest 1" for a in env.agents})
    first = env.once_per_step("x", make)
    assert env.once_per_step("x", make) is first and made == [0, 1]
    env.renew_step_parts()  # what they show changed within the step
    second = env.once_per_step("x", make)
    assert second is not first and made == [0, 1, 1]
    env.reset(seed=1)  # step 0 again: a new episode's parts
    assert env.once_per_step("x", make) is not second and made == [0, 1, 1, 0]
    _, _, _, _, infos = env.step({a: "harvest 1" for a in env.agents})
    views = [info["view"] for info in infos.values()]
    assert views[0]["last_month"] is not None and all(v["last_month"] is views[0]["last_month"] for v in views)
