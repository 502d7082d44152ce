"""The base class of scripted baselines and the uniform random policy (defined in `teamenvs.core.policy`)."""

from teamenvs.core.policy import RandomPolicy, ScriptedPolicy

__all__ = ["RandomPolicy", "ScriptedPolicy"]
