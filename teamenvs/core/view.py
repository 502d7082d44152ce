"""What every paradigm's text observation ends with, built from the view's shared envelope.

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
