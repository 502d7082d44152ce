"""Meeting point's rules as pure functions: start cells, moves on the ring, and the goal."""

from __future__ import annotations

import numpy as np

STEPS = {"left": -1, "right": 1}


def start_cells(rng: np.random.Generator, n_agents: int, cells: int) -> tuple[int, ...]:
    """Distinct start cells, drawn uniformly."""
    return tuple(int(c) for c in rng.choice(cells, size=n_agents, replace=False))


def moved(cell: int, direction: str, cells: int) -> int:
    """The cell one step `direction` of `cell` on a ring of `cells`."""
    return (cell + STEPS[direction]) % cells


def met(positions: dict[str, int]) -> bool:
    """Whether every agent stands on the same cell."""
    return len(set(positions.values())) == 1
