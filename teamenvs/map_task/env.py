"""`map_task_v0`: the HCRC Map Task as CollabSim plays it (section 3.4, App. B.4), as a text ParallelEnv.

The `guide` holds a map with landmarks, a start, a finish and the target route; the
`follower` holds a map of the same place that differs in some landmarks, shows only the
start, and carries the drawing. They talk (`say`, delivered next step) until the follower
has drawn the route or 120 steps have passed; the follower may `say done` to end early.
Only the follower draws: `draw`, `erase` (straight horizontal or vertical segments, chained
with `->`), `undo`, `reset`. The guide never sees the drawing unless `canvas_visibility`
is on, and under the default `allow_coordinates=False` a guide message that refers to grid
coordinates is refused: the task is grounding through landmarks. The shared reward, the final
route accuracy, is paid when the episode ends (no step before it tells anyone where the route is).

This module is the glue: the rules are in `rules.py`, the maps in `maps.py`, the commands in
`commands.py`, the text in `view.py`.
"""

from __future__ import annotations

from typing import Any, Mapping

from teamenvs.core.commands import Action, ActionError, Situation
from teamenvs.core.env import TeamEnv, event
from teamenvs.core.rl import Feature
from teamenvs.map_task import view as text
from teamenvs.map_task.commands import COMMANDS, DRAWING, candidates, catalogue, command_for, mask_key, parse_in, says_done
from teamenvs.map_task.config import PRESETS, MapTaskConfig
from teamenvs.map_task.library import load_library_pair
from teamenvs.map_task.maps import MapPair, generate_map_pair
from teamenvs.map_task.metrics import METRIC_BOUNDS, METRIC_GOALS, map_task_metrics
from teamenvs.map_task.rules import FOLLOWER, GUIDE, Refusal, change, drawing_json, drawing_segments, edit, message_refused, state_json
from teamenvs.map_task.scoring import Edge, drawn_cells, route_accuracy


class MapTaskEnv(TeamEnv):
    """Map Task: the guide describes its route, the follower draws it on a map that differs."""

    metadata = {"render_modes": ["ansi"], "name": "map_task_v0", "is_parallelizable": True}
    env_id = "map_task_v0"
    commands = COMMANDS
    config_class = MapTaskConfig
    presets = PRESETS
    episode_metrics = staticmethod(map_task_metrics)
    metric_goals = METRIC_GOALS
    metric_bounds = METRIC_BOUNDS
    # a situation is a function of the config and _situation_key, so its parses serve every episode; the masks it
    # memoizes are keyed by the episode's obstacles around the follower's pen too (`_mask_key`)
    situations_outlast_episodes = True
    config: MapTaskConfig

    def _agent_ids(self) -> list[str]:
        return [GUIDE, FOLLOWER]

    # ------------------------------------------------------------------ episode state
    def _setup(self) -> None:
        cfg = self.config
        if cfg.library_map is not None:
            self.pair: MapPair = load_library_pair(cfg.library_map, cfg.mismatch)
        else:
            self.pair = generate_map_pair(cfg, self._rng)
        self.edges: frozenset[Edge] = frozenset()
        self._drawing: tuple[frozenset[Edge] | None, tuple] = (None, ())
        self.history: list[frozenset[Edge]] = []
        self.accuracy = 0.0
        self.done = False
        self._grid_cache: dict[tuple, tuple[str, ...]] = {}
        self._own: dict[str, tuple[tuple[str, ...], tuple]] = {}  # agent -> (map_under, landmark_parts), this episode's
        self._scored: tuple[frozenset[Edge] | None, float] = (None, 0.0)  # (drawing, its route accuracy)

    def _reset_record(self) -> dict[str, Any]:
        return {"maps": self.pair.to_json()}

    def _is_over(self) -> tuple[bool, bool]:
        return self.done, self.step_count >= self.config.max_steps

    # ------------------------------------------------------------------ what an agent may do
    def _situation_key(self, agent: str):
        size = self.pair.width, self.pair.height  # the limits of points
        if agent == GUIDE:  # the guide's situation never depends on the drawing
            return agent, size
        return agent, size, bool(self.history), bool(self.edges)

    def _situation(self, agent: str) -> Situation:
        p = self.pair
        limits = {"x": (0, p.width - 1), "y": (0, p.height - 1)}
        if agent == GUIDE:
            return Situation({c: text.GUIDE_CANNOT_DRAW for c in DRAWING}, limits)
        denied = {}
        if not self.history:
            denied["undo"] = text.NOTHING_TO_UNDO
        if not self.edges:
            denied["erase"] = text.NOTHING_DRAWN
            denied["reset"] = text.NOTHING_DRAWN
        return Situation(denied, limits)

    def _send_refusal(self, sender: str, to: str | None, message: str) -> str | None:
        return text.NO_COORDINATES if message_refused(sender, message, self.config.allow_coordinates) else None

    # ------------------------------------------------------------------ rules
    def _apply(self, actions: Mapping[str, Action | None]) -> dict[str, float]:
        action = actions.get(FOLLOWER)
        if action is not None:
            if action.command == "say" and says_done(action.args["message"]):
                self.done = True
                self.global_events.append(event("done", text.DONE))
            elif action.command in DRAWING:
                self._edit(action)
        self.accuracy = self._route_accuracy()
        # The shared score is paid once, when the episode ends (by 'say done' or at max_steps): a
        # reward per step (the change in accuracy) would tell the follower which cells are on the
        # route, and the guide how the hidden drawing is going. The return is the same.
        ends = self.done or self.step_count + 1 >= self.config.max_steps
        reward = self.accuracy if ends else 0.0
        return {GUIDE: reward, FOLLOWER: reward}

    def _route_accuracy(self) -> float:
        """The route accuracy of the drawing now, worked out once per drawing (most steps draw nothing)."""
        if self._scored[0] is not self.edges:
            self._scored = (self.edges, route_accuracy(self.pair.route, drawn_cells(self.edges)))
        return self._scored[1]

    def _mask_parse(self, command: str, situation: Situation) -> Action | ActionError:
        """Parses shared by situations and episodes that read the same (`commands.parse_in`)."""
        return parse_in(command, situation)

    def _mask_key(self, view: Mapping[str, Any]) -> tuple:
        """`commands.mask_key`, given the episode's obstacles: the rules refuse a draw across one, and neither the
        follower's view nor its situation (which outlasts the episode) shows them."""
        return mask_key(view, self.pair.obstacles)

    def _refusal(self, agent: str, action: Action) -> str | None:
        """Why the rules would refuse this parsed action now (the same checks as `_apply` and `_send`)."""
        command = action.command
        if command == "say":
            return f"message not sent: {text.NO_COORDINATES}" if message_refused(agent, action.args["message"], self.config.allow_coordinates) else None
        if command not in DRAWING:
            return None
        if agent != FOLLOWER:
            return text.GUIDE_CANNOT_DRAW
        if command == "undo" and not self.history:
            return text.NOTHING_TO_UNDO
        if command in ("erase", "reset") and not self.edges:
            return text.NOTHING_DRAWN
        refused = change(self.pair, self.edges, command, action.args.get("path"))
        return text.refusal_text(refused, command) if isinstance(refused, Refusal) else None

    def _edit(self, action: Action) -> None:
        new = edit(self.pair, self.edges, self.history, action.command, action.args.get("path"))
        if isinstance(new, Refusal):
            self.reject(FOLLOWER, text.refusal_text(new, action.command))
            return
        if action.command == "undo":
            self.history.pop()
        else:
            self.history.append(self.edges)
        self.edges = new
        self.global_events.append(event("drawing", "", action=action.command, segments=drawing_json(self.drawing_tuple()), accuracy=self._route_accuracy()))

    # ------------------------------------------------------------------ views and text
    def grid(self, agent: str, show_drawing: bool) -> tuple[str, ...]:
        """`agent`'s map as text rows (with the drawing when `show_drawing`), cached per drawing."""
        key = (agent, self.edges if show_drawing else None)
        cached = self._grid_cache.get(key)
        if cached is None:
            cached = text.agent_grid(self.pair, agent, key[1], self._own_map(agent)[0])
            if len(self._grid_cache) > 256:
                self._grid_cache.clear()
            self._grid_cache[key] = cached
        return cached

    def _own_map(self, agent: str) -> tuple[tuple[str, ...], tuple]:
        """`agent`'s map under the drawing and its landmarks' parts of views (view.map_under, view.landmark_parts), once per episode."""
        own = self._own.get(agent)
        if own is None:
            own = self._own[agent] = (text.map_under(self.pair, agent), text.landmark_parts(self.pair, agent))
        return own

    def landmark_parts(self, agent: str) -> tuple[dict[str, Any], ...]:
        """The landmarks of `agent`'s views (see view.landmark_parts), made once per episode: a view holds copies."""
        return self._own_map(agent)[1]

    def _view(self, agent: str) -> dict[str, Any]:
        return text.build_view(self, agent)

    def _render_view(self, view: Mapping[str, Any]) -> str:
        return text.render_view(view)

    def drawing_tuple(self) -> tuple:
        """The drawing as sorted ((x, y), (x, y)) unit segments; one tuple per drawing, shared by the views."""
        if self._drawing[0] is not self.edges:
            self._drawing = (self.edges, drawing_segments(self.edges))
        return self._drawing[1]

    # ------------------------------------------------------------------ numeric observations and discrete actions
    def _features(self) -> tuple[Feature, ...]:
        return text.features(self.config)

    def _encode(self, view: Mapping[str, Any]):
        return text.encode(view, self.config)

    def _catalogue(self) -> tuple[str, ...]:
        return catalogue(self.config)

    _command_for = staticmethod(command_for)  # (view, label) -> command; one call less per label of a mask

    def _mask_candidates(self, view: Mapping[str, Any]) -> list[tuple[int, str]]:
        return candidates(view, self.interface.labels)

    def _role_briefing(self, agent: str) -> str:
        return text.role_briefing(agent, self.config)

    # ------------------------------------------------------------------ global views
    def _state(self) -> dict[str, Any]:
        return state_json(self.pair, self.edges, self.step_count, self.accuracy, self.done)

    def frame(self) -> dict[str, Any]:
        """JSON-ready drawing data of the true world now (for replay viewers): both maps, the route, the drawing."""
        return {"kind": "map_task", **self._state(), "max_steps": self.config.max_steps}

    def _render_frame(self) -> str:
        return text.render_frame(self.pair, self.edges, self.step_count, self.config.max_steps, self.accuracy)
