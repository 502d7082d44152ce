"""Map Task configuration: map size and landmarks, discrepancies, episode length and the CollabSim conditions, with the presets."""

from __future__ import annotations

from dataclasses import dataclass

from teamenvs.core.config import setting
from teamenvs.core.messaging import MessagingConditions
from teamenvs.map_task.maps import KINDS, LANDMARK_NAMES

LIBRARY_SIZE = 8  # map pairs in data/library.json
MIN_SIDE, MAX_SIDE = 10, 60


def _most_landmarks(config: MapTaskConfig) -> int:
    """Half the landmark names (the rest are spare names for discrepancies), and room on the map."""
    return min(len(LANDMARK_NAMES) // 2, config.width * config.height // 8)


@dataclass(frozen=True)
class MapTaskConfig(MessagingConditions):
    """Map size and landmarks, discrepancies, episode length and the CollabSim conditions."""

    width: int = setting(20, low=MIN_SIDE, high=MAX_SIDE, doc="map columns (x)")
    height: int = setting(20, low=MIN_SIDE, high=MAX_SIDE, doc="map rows (y)")
    n_landmarks: int = setting(12, low=2, high=_most_landmarks, doc="landmarks on the guide's map")
    blocked_fraction: float = setting(0.5, low=0, high=1, doc="share of landmarks that are obstacles no route may cross")
    waypoints: int = setting(4, low=0, high=20, doc="landmarks the route is laid past")
    mismatch: int = setting(1, low=0, high=len(KINDS), doc="kinds of discrepancy between the maps (one_map_only, renamed, moved)")
    per_kind: int = setting(2, low=1, high=10, doc="landmarks changed per kind of discrepancy")
    library_map: int | None = setting(None, low=1, high=LIBRARY_SIZE, doc="play this stored library map pair; None: generate one")
    max_steps: int = setting(120, low=1, high=100_000, doc="steps before the episode is truncated")
    canvas_visibility: bool = setting(False, doc="whether the guide sees the follower's drawing")
    allow_coordinates: bool = setting(False, doc="whether the guide may refer to grid coordinates")


PRESETS: dict[str, dict[str, object]] = {
    # CollabSim B.4: the three conditions.
    "baseline": {},
    "communication_bandwidth": {"max_words": 6},
    "canvas_visibility": {"canvas_visibility": True},
    **{f"mismatch_{m}": {"mismatch": m} for m in range(len(KINDS) + 1)},
}


@dataclass(frozen=True)
class Sizes:
    """The largest map and landmark lists an episode under one config can show (for fixed-shape vectors
    and catalogues): the map's columns and rows, the guide's landmarks, the most landmarks on the
    follower's map (the guide's plus `one_map_only` extras, at most `per_kind // 2`)."""

    width: int
    height: int
    guide_landmarks: int
    follower_landmarks: int

    @property
    def landmarks(self) -> int:
        return max(self.guide_landmarks, self.follower_landmarks)


def sizes(config: MapTaskConfig) -> Sizes:
    """`Sizes` of `config`: a library map's own (its size and landmarks replace the generator settings), else the config's."""
    if config.library_map is not None:
        from teamenvs.map_task.library import load_library_pair

        pair = load_library_pair(config.library_map, config.mismatch)
        return Sizes(pair.width, pair.height, len(pair.guide), len(pair.follower))
    extras = config.per_kind // 2 if config.mismatch else 0
    return Sizes(config.width, config.height, config.n_landmarks, config.n_landmarks + extras)
