"""Map Task (HCRC / CollabSim): a guide talks a follower along a route on maps that differ."""

from teamenvs.core.paradigm import Paradigm

PARADIGM = Paradigm(
    env_id="map_task_v0",
    env_class="teamenvs.map_task.env:MapTaskEnv",
    gym_name="MapTask",
    title="Map task",
    summary="HCRC Map Task (CollabSim): a guide describes a route, a follower draws it on a map whose landmarks differ",
    baselines="teamenvs.map_task.baselines",
    drawing="teamenvs.map_task.drawing",
    smoke_conditions=("baseline",),
    order=40,
    # every step is one env step for both players; the episode is truncated at MapTaskConfig.max_steps
    # (default 120) and may end sooner by the follower's 'say done'
    max_episode_steps=120,
)
