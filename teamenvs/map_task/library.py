"""A fixed library of Map Task map pairs, stored as data so that results stay comparable across releases.

`data/library.json` holds `LIBRARY_SIZE` entries made once by `build_library()` from seeds
1..8 with the default map settings (20x20, 12 landmarks, half of them blocked, 4 waypoints).
Each entry keeps its seed and the full map pair for every mismatch level 0-3, so a change to
the generator never changes a library map. `MapTaskConfig(library_map=k)` plays entry k
(its size and landmarks replace the generator settings; `mismatch` picks the follower's map).

Rebuild (only when deliberately making a new library): `python -m teamenvs.map_task.library`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from teamenvs.core.config import ConfigError
from teamenvs.map_task.config import LIBRARY_SIZE, MapTaskConfig
from teamenvs.map_task.maps import KINDS, MapPair, generate_map_pair

_FILE = "library.json"


def build_library(size: int = LIBRARY_SIZE) -> list[dict]:
    """Entries for seeds 1..size: {"seed", "pairs": {mismatch: map pair JSON}}."""
    entries = []
    for seed in range(1, size + 1):
        pairs = {str(m): generate_map_pair(MapTaskConfig(mismatch=m), np.random.default_rng(seed), seed).to_json() for m in range(len(KINDS) + 1)}
        entries.append({"id": seed, "seed": seed, "pairs": pairs})
    return entries


@lru_cache(maxsize=1)
def _entries() -> tuple[dict, ...]:
    text = resources.files("teamenvs.map_task").joinpath("data", _FILE).read_text(encoding="utf-8")
    return tuple(json.loads(text)["maps"])


def library_size() -> int:
    return len(_entries())


def load_library_pair(index: int, mismatch: int) -> MapPair:
    """Map pair `index` (1-based) of the library with the follower's map for `mismatch`."""
    entries = _entries()
    if not 1 <= index <= len(entries):
        raise ConfigError(f"library_map must be from 1 to {len(entries)}, got {index}")
    return MapPair.from_json(entries[index - 1]["pairs"][str(mismatch)])


if __name__ == "__main__":
    path = Path(__file__).with_name("data") / _FILE
    path.write_text(json.dumps({"version": 1, "maps": build_library()}, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {LIBRARY_SIZE} map pairs to {path}")
