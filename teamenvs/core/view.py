"""What every paradigm's text observation ends with, built from the view's shared envelope, and
the read-only mapping for facts that several views share.

A paradigm's `view.py` renders its own state; the footer is the same everywhere: this step's
events, any lines the paradigm puts just before the last action (new messages, a recent
conversation), what became of the agent's last action, and the commands valid now.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping


def footer(view: Mapping[str, Any], before_last_action: Iterable[str] = ()) -> list[str]:
    """The closing lines of an observation from a view made with `TeamEnv.envelope`."""
    lines = [*view["events"], *before_last_action, view["last_action"]]
    if view["valid_now"]:
        lines.append("Now: " + view["valid_now"])
    return lines


class SharedFacts(dict):
    """Facts that several views hold as one object (built once, not once per view: the job fair's public company
    facts in every seeker's view of a step, search and rescue's seldom-changing parts in an agent's views of
    several steps): read as any dict (and pickled and written to JSON as one), but not changed in place, so
    that no agent's policy can change what another agent sees (information isolation) nor what a later step
    shows. `dict(facts)` is a copy to change."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("these facts are shared by several views (of agents or of steps) and are read-only; change a copy: dict(facts)")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:  # pickling fills a dict subclass item by item: rebuild it whole instead
        return (SharedFacts, (dict(self),))

    def copy(self) -> dict[str, Any]:  # type: ignore[override]
        return dict(self)


def thaw(data: Any) -> Any:
    """A copy of `data` with every `SharedFacts` in it (in dicts, tuples and lists) a plain dict.

    For Gymnasium: its checks take any dict that two steps' infos hold as one object for a mutable one they
    share, so the single-agent view gives its learner a view of its own."""
    if isinstance(data, dict):
        return {k: thaw(v) for k, v in data.items()}
    if type(data) in (tuple, list):  # not a named tuple: its fields are values, not SharedFacts
        return type(data)(thaw(v) for v in data)
    return data
