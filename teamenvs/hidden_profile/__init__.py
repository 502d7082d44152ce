"""Hidden Profile (Stasser and Titus 1985; CollabSim): three members pool privately held facts to pick the best candidate."""

from teamenvs.core.paradigm import Paradigm

PARADIGM = Paradigm(
    env_id="hidden_profile_v0",
    env_class="teamenvs.hidden_profile.env:HiddenProfileEnv",
    gym_name="HiddenProfile",
    title="Hidden profile",
    summary="CollabSim Hidden Profile: members vote, discuss their partial candidate documents, and vote again",
    baselines="teamenvs.hidden_profile.baselines",
    drawing="teamenvs.hidden_profile.drawing",
    smoke_conditions=("baseline",),
    order=45,
    # len(rules.schedule(HiddenProfileConfig())): the initial vote, 30 discussion steps, the final vote
    max_episode_steps=32,
)
