"""Meeting point: a toy paradigm showing what adding one takes (one folder, nothing else edited).

Agents stand on a ring of cells, each knowing only its own cell; they must all stand on the
same cell. They may say where they are. Copy this folder into `teamenvs/` and it is registered,
has baselines, is in the smoke suite and passes `teamenvs.testing.check_team_env`.
"""

from teamenvs.core.paradigm import Paradigm

PARADIGM = Paradigm(
    env_id="meeting_point_v0",
    env_class="teamenvs.meeting_point.env:MeetingPointEnv",
    gym_name="MeetingPoint",
    title="Meeting point",
    summary="Toy coordination game: agents on a ring, each knowing only its own cell, must meet on one cell",
    baselines="teamenvs.meeting_point.baselines",
    smoke_conditions=("baseline",),
    max_episode_steps=40,  # the default config's max_steps: the episode is cut off there
)
