"""A paradigm declares itself once: `PARADIGM = Paradigm(...)` in its package's `__init__.py`.

The registry (`teamenvs.make`, Gymnasium ids), the scripted baselines (`make_policies`), the
smoke suite, the single-agent view and the replay viewer all read these declarations, so
adding a paradigm is adding a folder `teamenvs/<paradigm>/` (or an installed package that
names its declaration under the `teamenvs.paradigms` entry-point group).

Discovery imports each sub-package's `__init__` only, which holds the declaration and no
heavy imports; the env class, baselines and drawing are named by import path and loaded
when first used.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Mapping

ENTRY_POINT_GROUP = "teamenvs.paradigms"


def load_object(path: str) -> Any:
    """The object named by `"package.module:Name"`."""
    module, _, name = path.partition(":")
    found = importlib.import_module(module)
    return getattr(found, name) if name else found


@dataclass(frozen=True)
class Paradigm:
    """Everything the rest of the suite needs to know about one environment.

    `env_class` and `baselines` are import paths (`"teamenvs.commons.env:CommonsEnv"`,
    `"teamenvs.commons.baselines"`); the baselines module exposes `BASELINES` (name ->
    policy class) and `DEFAULT` (the name `kind="scripted"` stands for). `smoke_conditions`
    are the presets the smoke suite runs; `title` names the paradigm in reports; `drawing`
    is the module that draws its replay frames (optional); `order` places it in listings;
    `max_episode_steps` bounds the env steps of an episode under the default config (Gymnasium's
    time limit for the single-agent view).
    """

    env_id: str
    env_class: str
    gym_name: str
    title: str
    summary: str
    baselines: str
    smoke_conditions: tuple[str, ...] = ("baseline",)
    drawing: str | None = None
    order: int = 100
    max_episode_steps: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if "_v" not in self.env_id or not self.env_id.rsplit("_v", 1)[1].isdigit():
            raise ValueError(f"env ids end with a version, like 'commons_v0'; got {self.env_id!r}")
        if ":" not in self.env_class:
            raise ValueError(f"env_class is 'module:Class', got {self.env_class!r}")

    @property
    def version(self) -> str:
        return self.env_id.rsplit("_v", 1)[1]

    @property
    def gym_id(self) -> str:
        return f"teamenvs/{self.gym_name}-v{self.version}"

    def load_env_class(self) -> type:
        return load_object(self.env_class)

    def load_baselines(self) -> Any:
        """The baselines module (`BASELINES`, `DEFAULT`)."""
        return load_object(self.baselines)


def discover() -> list[Paradigm]:
    """Every paradigm: the sub-packages of `teamenvs` that declare `PARADIGM`, then installed
    packages naming one under the `teamenvs.paradigms` entry-point group; by `order`, then id."""
    import teamenvs

    found: dict[str, Paradigm] = {}
    for info in pkgutil.iter_modules(teamenvs.__path__, "teamenvs."):
        if not info.ispkg:
            continue
        declared = getattr(importlib.import_module(info.name), "PARADIGM", None)
        if isinstance(declared, Paradigm):
            found[declared.env_id] = declared
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        declared = entry.load()
        if isinstance(declared, Paradigm):
            found.setdefault(declared.env_id, declared)
    return sorted(found.values(), key=lambda p: (p.order, p.env_id))
