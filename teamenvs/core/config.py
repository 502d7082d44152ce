"""Frozen-dataclass configs: building them from presets and overrides, with clear errors.

Every paradigm has one frozen config dataclass validated in `__post_init__` and a dict of
named presets (conditions of the source studies). `build_config` applies a preset, then
user overrides, rejecting unknown keys with the nearest valid name and converting strings
(from the command line's `--set key=value`) to the field's type.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import types
import typing
from typing import Any, Mapping, TypeVar

C = TypeVar("C")


class ConfigError(ValueError):
    """A configuration value or key is invalid; the message says which and what is allowed."""


def _coerce(name: str, value: Any, hint: Any) -> Any:
    if not isinstance(value, str):
        if hint is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        return value
    origin = typing.get_origin(hint)
    options = typing.get_args(hint) if origin in (typing.Union, types.UnionType) else (hint,)
    text = value.strip()
    if type(None) in options and text.lower() in ("none", "null", ""):
        return None
    for option in options:
        if option is bool:
            if text.lower() in ("true", "yes", "on", "1"):
                return True
            if text.lower() in ("false", "no", "off", "0"):
                return False
        elif option is int:
            try:
                return int(text)
            except ValueError:
                pass
        elif option is float:
            try:
                return float(text)
            except ValueError:
                pass
        elif option is str:
            return value
        elif typing.get_origin(option) in (tuple, list, dict) or option in (tuple, list, dict):
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            return tuple(parsed) if typing.get_origin(option) is tuple or option is tuple else parsed
    raise ConfigError(f"{name}: cannot read {value!r} as {getattr(hint, '__name__', hint)}")


def build_config(cls: type[C], presets: Mapping[str, Mapping[str, Any]], preset: str | None, overrides: Mapping[str, Any]) -> C:
    """Return `cls(**preset_values, **overrides)` with unknown keys and bad values reported clearly.

    `preset` may combine presets with '+' ("hard+transporters_5"); later ones win.
    """
    values: dict[str, Any] = {}
    if preset is not None:
        if not isinstance(preset, str):
            raise ConfigError(f"preset must be a string, got {type(preset).__name__}")
        for name in (p.strip() for p in preset.split("+")):
            if name not in presets:
                close = difflib.get_close_matches(name, list(presets), n=1)
                hint = f" Did you mean '{close[0]}'?" if close else ""
                raise ConfigError(f"unknown preset {name!r}.{hint} Presets: {', '.join(presets)} (combine them with '+')")
            values.update(presets[name])
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    for key, value in overrides.items():
        if key not in names:
            close = difflib.get_close_matches(str(key), names, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise ConfigError(f"unknown config key {key!r} for {cls.__name__}.{hint} Valid keys: {', '.join(names)}")
        values[key] = _coerce(key, value, hints[key])
    try:
        return cls(**values)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"invalid {cls.__name__}: {exc}") from exc


def config_to_json(config: Any) -> dict[str, Any]:
    """A JSON-ready dict of a config dataclass."""
    return json.loads(json.dumps(dataclasses.asdict(config), default=str))


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> None:
    """Raise ConfigError unless `value` is an int within [low, high]."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        rng = f"from {low} to {high}" if low is not None and high is not None else (f">= {low}" if low is not None else f"<= {high}")
        raise ConfigError(f"{name} must be {rng}, got {value}")
