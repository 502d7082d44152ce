"""Search-and-rescue configuration: the team's roles, the frozen `SearchRescueConfig` and its presets.

The defaults are the ASIST Study 3 scenario of VIRT-LAB; the presets are the conditions of
its experiments (map sizes and layout complexities of 4.2.2, transporter-only teams of 4.2.1,
knowledge and communication conditions, and the ablations of 4.3: `no_navigation`,
`round_robin`, `no_communication`).

What an agent knows of the team's progress follows `communication`: the radio reports every
rescue to everyone under `global` (so the "Team: N/35 rescued" tally is the team's); under
`same_room` and `none` an agent knows of the rescues it made, saw (everything rescued lies in
the Hospital, so standing in the Hospital shows the whole tally, and a drop there is seen by
everyone in it) or was told of by a message naming the victim. Rewards follow the same
knowledge: each agent is paid the rise of the team's points it knows of (its view's score) when
it learns of them, and at the episode's last step the rest of the team's points, so its return
is the team's points. Under `global` that is every rescue's points for everyone in the step it
happens (the shared team reward).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from teamenvs.core.config import ConfigError, setting
from teamenvs.core.messaging import MessagingConditions
from teamenvs.core.text import excerpt

MEDIC, ENGINEER, TRANSPORTER = "medic", "engineer", "transporter"
ROLES = (MEDIC, ENGINEER, TRANSPORTER)
MIN_SIDE, MAX_SIDE = 10, 100


@dataclass(frozen=True)
class SearchRescueConfig(MessagingConditions):
    """Map, team, victims, durations and conditions (defaults: the ASIST Study 3 scenario of VIRT-LAB)."""

    communication_modes: ClassVar[tuple[str, ...]] = ("global", "same_room", "none")

    communication: str = setting("global", choices=communication_modes, doc="who hears a message: everyone, the same room only, or nobody")
    width: int = setting(30, low=MIN_SIDE, high=MAX_SIDE, doc="map width in cells")
    height: int = setting(30, low=MIN_SIDE, high=MAX_SIDE, doc="map height in cells")
    complexity: int = setting(5, low=1, high=10, doc="1-10: higher means more, smaller rooms and fewer spare doors")
    map_seed: int | None = setting(None, low=0, doc="seed of a fixed layout (victims still vary by episode); None: a new map per episode")
    team: tuple[str, ...] = setting((MEDIC, ENGINEER, TRANSPORTER), doc="roles of the team, 1 to 10 of medic, engineer, transporter")
    n_victims: int = setting(35, low=1, high=10_000, doc="victims placed outside the Hospital")
    critical_fraction: float = setting(0.2, low=0, high=1, doc="share of victims that are critical")
    rubble_fraction: float = setting(0.15, low=0, high=1, doc="share of doorways blocked by rubble (never the Hospital's)")
    max_steps: int = setting(2000, low=1, high=1_000_000, doc="steps before the mission ends")
    stable_points: int = setting(10, low=0, high=10**6, doc="points for rescuing a stable victim")
    critical_points: int = setting(50, low=0, high=10**6, doc="points for rescuing a critical victim")
    stabilize_steps: int = setting(5, low=1, high=1000, doc="steps the medic needs to stabilize a victim")
    clear_steps: int = setting(3, low=1, high=1000, doc="steps the engineer needs to clear a doorway")
    carry_steps_per_cell: int = setting(2, low=1, high=100, doc="steps per cell for a medic or engineer carrying a victim")
    full_map: bool = setting(False, doc="whether every agent knows the whole floor plan from the start")
    navigation: bool = setting(True, doc="VIRT-LAB's navigation assistance: route cues, distances to known rooms, `go to` route "
                               "following; off (ablation `no_navigation`): agents see only the doorways of their room and walk with `move`")
    scheduling: str = setting("events", choices=("events", "round_robin"),
                              doc="`events`: every idle agent decides each step and actions run in parallel (VIRT-LAB's event "
                                  "scheduler); `round_robin` (ablation): one agent acts per step, in team order, and only its action advances")
    interrupt_to_talk: bool = setting(False, doc="a busy agent that receives a `tell` addressed to it is asked whether to `continue` or "
                                      "to answer with `say`/`tell`, which breaks off its action (VIRT-LAB Alg. 1, Fig. 8E)")

    def _check(self) -> None:
        if not isinstance(self.team, (tuple, list)) or not 1 <= len(self.team) <= 10:
            raise ConfigError(f"team must be a list of 1 to 10 roles out of {', '.join(ROLES)}, got {excerpt(self.team)}")
        bad = [r for r in self.team if r not in ROLES]
        if bad:
            raise ConfigError(f"unknown role(s) {excerpt(bad)} in team; roles are {', '.join(ROLES)}")
        object.__setattr__(self, "team", tuple(self.team))  # a list from JSON or Python becomes the declared tuple
        if MEDIC not in self.team and round(self.n_victims * self.critical_fraction) > 0:
            raise ConfigError(
                "the team has no medic, so critical victims could never be carried: add a medic to the team "
                "or set critical_fraction=0 (the transporters_N presets do)"
            )
        # Victims lie on distinct floor cells outside the Hospital: a fixed map's count is known now; a drawn map has
        # fewer than its interior, and one that still lacks room for them is refused when it is drawn (at reset)
        interior = (self.width - 2) * (self.height - 2)
        if self.n_victims >= interior:
            raise ConfigError(f"n_victims={self.n_victims} cannot fit on a {self.width}x{self.height} map, which has fewer than "
                              f"{interior:,} floor cells: lower n_victims or enlarge the map")
        if self.map_seed is not None:
            from teamenvs.search_rescue.world import fixed_floor_plan, free_cells  # world imports this module

            free = free_cells(fixed_floor_plan(self)[0])
            if self.n_victims > free:
                raise ConfigError(f"n_victims={self.n_victims} does not fit: the map of map_seed={self.map_seed} has {free} floor "
                                  "cells outside the Hospital; lower n_victims")
        if ENGINEER not in self.team and self.rubble_fraction > 0:
            raise ConfigError(
                "the team has no engineer, so rubble could never be cleared: add an engineer to the team "
                "or set rubble_fraction=0 (the transporters_N presets do)"
            )

    @property
    def max_room_side(self) -> int:
        """The largest room side BSP leaves unsplit: 16 cells at complexity 1 down to 5 at 10."""
        return max(5, round(17 - 1.25 * self.complexity))

    @property
    def extra_door_probability(self) -> float:
        """Chance that two adjacent rooms get a door beyond the spanning tree: 0.55 at complexity 1, 0.1 at 10."""
        return 0.6 - 0.05 * self.complexity


def _transporters(n: int) -> dict[str, object]:
    return {"team": (TRANSPORTER,) * n, "critical_fraction": 0.0, "rubble_fraction": 0.0}


PRESETS: dict[str, dict[str, object]] = {
    # VIRT-LAB 4.2.2: size and layout complexity grow together ("Low", "Medium", "High complexity");
    # the same layout in every run of a map, victims placed anew per seed. Each map_seed gives a
    # layout typical of its size and complexity: its mean Hospital-to-floor-cell walk (25.5, 35.5
    # and 51.3 cells, the Hospital's doorways open) is within 1 cell of the median over map seeds 100-129.
    "easy": {"width": 30, "height": 30, "complexity": 4, "map_seed": 30},
    "medium": {"width": 40, "height": 40, "complexity": 6, "map_seed": 41},
    "hard": {"width": 50, "height": 50, "complexity": 8, "map_seed": 58},
    # VIRT-LAB 4.2.1 scalability teams: transporters only, all victims stable, no rubble.
    **{f"transporters_{n}": _transporters(n) for n in range(2, 6)},
    "full_map": {"full_map": True},
    "same_room": {"communication": "same_room"},
    "no_communication": {"communication": "none"},
    # VIRT-LAB 4.3 ablations (run on the easy map in the paper: combine as `easy+no_navigation`)
    "no_navigation": {"navigation": False},
    "round_robin": {"scheduling": "round_robin"},
    "interrupt_to_talk": {"interrupt_to_talk": True},
}


def agent_ids(team: tuple[str, ...]) -> list[str]:
    """Ids naming the role: `medic`, `engineer`, `transporter`, `transporter_2`, ..."""
    seen: dict[str, int] = {}
    ids = []
    for role in team:
        seen[role] = seen.get(role, 0) + 1
        ids.append(role if seen[role] == 1 else f"{role}_{seen[role]}")
    return ids


def role_of(agent: str) -> str:
    """The role in an agent id (`transporter_2` -> `transporter`)."""
    return agent.split("_", 1)[0]
