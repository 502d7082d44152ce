"""Scripted baselines and `make_policies`: one policy per agent for any registered env.

Each paradigm ships its baselines in its own folder (`teamenvs/<paradigm>/baselines.py`,
named by its declaration); `random` is available for every env. This module is the agent
layer's entry point to them.
"""

from teamenvs.core.policy import RandomPolicy, ScriptedPolicy, agent_seed, baselines, default_baseline, make_policies

__all__ = ["RandomPolicy", "ScriptedPolicy", "agent_seed", "baselines", "default_baseline", "make_policies"]
