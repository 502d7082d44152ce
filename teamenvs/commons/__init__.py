"""A GovSim-style commons: fishers harvest a shared, regrowing lake month by month (a social dilemma)."""

from teamenvs.core.paradigm import Paradigm

PARADIGM = Paradigm(
    env_id="commons_v0",
    env_class="teamenvs.commons.env:CommonsEnv",
    gym_name="Commons",
    title="Commons",
    summary="GovSim-style fishery: a shared, regrowing stock harvested over 12 months (social dilemma)",
    baselines="teamenvs.commons.baselines",
    smoke_conditions=("baseline",),
    order=20,
    # len(rules.schedule(CommonsConfig())): 12 harvest steps (one per month) plus a discussion of 3
    # turns after every month but the last: 12 + 11 * 3 = 45 (a collapse only ends an episode sooner)
    max_episode_steps=45,
)
