"""Search and rescue (ASIST / VIRT-LAB): a medic, an engineer and transporters evacuate victims from a building."""

from teamenvs.core.paradigm import Paradigm

PARADIGM = Paradigm(
    env_id="search_rescue_v0",
    env_class="teamenvs.search_rescue.env:SearchRescueEnv",
    gym_name="SearchRescue",
    title="Search and rescue",
    summary="ASIST / VIRT-LAB search and rescue: medic, engineer and transporter evacuate 35 victims from a grid of rooms",
    baselines="teamenvs.search_rescue.baselines",
    drawing="teamenvs.search_rescue.drawing",
    smoke_conditions=("easy",),
    order=30,
    # The episode ends once every victim is rescued or after `max_steps` env steps, whichever is
    # first (env._is_over): at most SearchRescueConfig().max_steps = 2000 steps under the default config.
    max_episode_steps=2000,
)
