"""teamenvs: multi-agent team-science environments with text observations and text actions.

    import teamenvs
    env = teamenvs.make("day_trader_v0", preset="group_size_6")
    observations, infos = env.reset(seed=0)
"""

from teamenvs import compiled as _compiled

_compiled.install()  # before any other module of the package: each loads compiled where `teamenvs compile` built it

from teamenvs._version import __version__  # noqa: E402
from teamenvs.core.config import ConfigError  # noqa: E402
from teamenvs.registry import list_envs, make, spec  # noqa: E402

__all__ = ["__version__", "ConfigError", "list_envs", "make", "spec"]
