"""The `Policy` protocol every agent implements, and the base class for synchronous policies.

Both are defined at the env layer (`teamenvs.core.policy`), where each paradigm's scripted
baselines live; this module is where agent code imports them from.
"""

from teamenvs.core.policy import Policy, SyncPolicy

__all__ = ["Policy", "SyncPolicy"]
