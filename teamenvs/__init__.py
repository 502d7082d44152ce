"""teamenvs: multi-agent team-science environments with text observations and text actions.

    import teamenvs
    env = teamenvs.make("day_trader_v0", preset="group_size_6")
    observations, infos = env.reset(seed=0)
"""

from teamenvs._version import __version__
from teamenvs.core.config import ConfigError
from teamenvs.registry import list_envs, make, spec

__all__ = ["__version__", "ConfigError", "list_envs", "make", "spec"]
