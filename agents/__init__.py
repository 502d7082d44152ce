"""Policies and the standard agent-env step loop.

    import teamenvs, agents
    env = teamenvs.make("day_trader_v0")
    result = agents.run_episode(env, agents.make_policies(env, "scripted", seed=0), seed=0)
    result.metrics, result.returns, result.log_path
"""

from agents.loop import EpisodeResult, EpisodeTimeout, arun_episode, arun_episodes, claim_log_name, run_episode, run_episodes
from agents.policy import Policy, SyncPolicy
from agents.scripted import make_policies

__all__ = ["EpisodeResult", "EpisodeTimeout", "Policy", "SyncPolicy", "arun_episode", "arun_episodes", "claim_log_name", "make_policies",
           "run_episode", "run_episodes"]
