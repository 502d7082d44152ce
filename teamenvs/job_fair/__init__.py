"""Job fair paradigm (MetaAgents): team assembly through applications, interviews, decisions and offers."""

from teamenvs.core.paradigm import Paradigm

PARADIGM = Paradigm(
    env_id="job_fair_v0",
    env_class="teamenvs.job_fair.env:JobFairEnv",
    gym_name="JobFair",
    title="Job fair",
    summary="MetaAgents job fair: seekers apply and interview, recruiters hire, design a workflow and assign roles (S1-S4)",
    baselines="teamenvs.job_fair.baselines",
    smoke_conditions=("S1",),
    order=50,
    # rules.episode_step_bound(JobFairConfig()): 3 phases with a deadline x phase_steps (10) + at most
    # seekers (10) x min(application limit 1, companies 3) interviews x 2 x interview_turns (3) steps each
    max_episode_steps=90,
)
