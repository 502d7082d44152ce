"""Frozen-dataclass configs: declared with field metadata, validated in one place, built from
presets and overrides with clear errors.

Every paradigm has one frozen config dataclass (a `TeamConfig`) whose fields are declared with
`setting(default, low=, high=, choices=, doc=)` and a dict of named presets (conditions of the
source studies). `TeamConfig` validates every field from its metadata and type on
construction, then runs each class's `_check` (cross-field rules) from base to subclass, so no
config has to remember to call its parents. `describe_config` lists the keys (for `teamenvs info`
style listings and error messages). `build_config` applies a preset, then user overrides,
rejecting unknown keys with the nearest valid name and converting strings (from the command
line's `--set key=value`) to the field's type.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import types
import typing
from typing import Any, Mapping, TypeVar

import numpy as np

from teamenvs.core.text import close_match, excerpt, quote

C = TypeVar("C")


class ConfigError(ValueError):
    """A configuration value or key is invalid; the message says which and what is allowed."""


def _coerce(name: str, value: Any, hint: Any) -> Any:
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        # a numpy scalar (a sweep's np.arange or np.linspace, a DataFrame cell) is the Python value it holds: "n_agents
        # must be an integer, got np.int64(6)" refused the very number asked for; the config holds plain Python values
        value = value.item()
    if not isinstance(value, str):
        if hint is float and isinstance(value, int) and not isinstance(value, bool):
            try:
                return float(value)
            except OverflowError:  # beyond any float (about 1.8e308)
                raise ConfigError(f"{name} must be a number a float can hold, got {excerpt(value)}") from None
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
            except (ValueError, RecursionError):  # not JSON, or nested too deeply to read
                continue
            if not isinstance(parsed, dict if (typing.get_origin(option) or option) is dict else list):
                continue  # e.g. '5' for a list of names
            return tuple(parsed) if typing.get_origin(option) is tuple or option is tuple else parsed
    raise ConfigError(f"{name}: cannot read {excerpt(value)} as {getattr(hint, '__name__', hint)}")


@functools.cache
def field_types(cls: type) -> Mapping[str, Any]:
    """`typing.get_type_hints(cls)`, worked out once per config class (it evaluates every annotation, about
    half a millisecond, and every env built reads it twice); read-only."""
    return types.MappingProxyType(typing.get_type_hints(cls))


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
                close = close_match(name, list(presets))
                hint = f" Did you mean '{close}'?" if close else ""
                raise ConfigError(f"unknown preset {quote(name)}.{hint} Presets: {', '.join(presets)} (combine them with '+')")
            values.update(presets[name])
    hints = field_types(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    for key, value in overrides.items():
        if key not in names:
            close = close_match(str(key), names)
            hint = f" Did you mean '{close}'?" if close else ""
            raise ConfigError(f"unknown config key {quote(str(key))} for {cls.__name__}.{hint} Valid keys: {', '.join(names)}")
        values[key] = _coerce(key, value, hints[key])
    try:
        return cls(**values)
    except ConfigError:
        raise
    except (TypeError, ValueError, OverflowError) as exc:  # a cross-field rule meeting what no field check caught
        raise ConfigError(f"invalid {cls.__name__}: {exc}") from exc


Bound = Any  # an int, the name of another int field, or a function of the config


def setting(default: Any, *, low: Bound = None, high: Bound = None, choices: tuple[Any, ...] | None = None, doc: str = "") -> Any:
    """A config field with its validation and documentation in its metadata.

    `low`/`high` bound an int (or float) field; each may be a number, the name of another
    field, or a function of the config (for bounds that depend on other fields). `choices`
    lists the allowed values. `None` is accepted when the annotation allows it.
    """
    meta = {"low": low, "high": high, "choices": choices, "doc": doc}
    if isinstance(default, (list, dict, set)):
        raise TypeError("config defaults are immutable: use a tuple")
    return dataclasses.field(default=default, metadata={"teamenvs": meta})


def range_text(low: Any, high: Any) -> str:
    """The allowed range of a bounded field in words: "from 1 to 100", ">= 0" or "<= 10" (a bound given by another
    key reads as its name)."""
    if low is not None and high is not None:
        return f"from {low} to {high}"
    return f">= {low}" if low is not None else f"<= {high}"


def _bound(config: Any, bound: Bound) -> Any:
    if bound is None or isinstance(bound, (int, float)):
        return bound
    if isinstance(bound, str):
        return getattr(config, bound)
    return bound(config)


def _type_options(hint: Any) -> tuple[Any, ...]:
    origin = typing.get_origin(hint)
    return typing.get_args(hint) if origin in (typing.Union, types.UnionType) else (hint,)


def check_field(config: Any, f: dataclasses.Field, hint: Any) -> None:
    """Raise ConfigError unless the field's value has its type and lies within its metadata's bounds."""
    meta = f.metadata.get("teamenvs")
    if meta is None:
        return
    value = getattr(config, f.name)
    options = _type_options(hint)
    if value is None and type(None) in options:
        return
    if meta["choices"] is not None:
        if value not in meta["choices"]:
            raise ConfigError(f"{f.name} must be one of {', '.join(map(str, meta['choices']))}, got {excerpt(value)}")
        return
    if bool in options and int not in options:
        if not isinstance(value, bool):
            raise ConfigError(f"{f.name} must be true or false, got {excerpt(value)}")
        return
    if int in options and float not in options:
        check_int(f.name, value, _bound(config, meta["low"]), _bound(config, meta["high"]))
        return
    if float in options:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
            raise ConfigError(f"{f.name} must be a number, got {excerpt(value)}")
        low, high = _bound(config, meta["low"]), _bound(config, meta["high"])
        if (low is not None and value < low) or (high is not None and value > high):
            raise ConfigError(f"{f.name} must be {range_text(low, high)}, got {excerpt(value)}")
        return
    if str in options and not isinstance(value, str):
        raise ConfigError(f"{f.name} must be a string, got {excerpt(value)}")


@dataclasses.dataclass(frozen=True)
class TeamConfig:
    """Base of every paradigm config: fields declared with `setting(...)` are checked on construction.

    Cross-field rules go in `_check(self)`; every class in the hierarchy that defines one has
    it run, base classes first, without calling `super()`.
    """

    def __post_init__(self) -> None:
        hints = field_types(type(self))
        for f in dataclasses.fields(self):
            check_field(self, f, hints[f.name])
        for cls in reversed(type(self).__mro__):
            check = cls.__dict__.get("_check")
            if check is not None:
                check(self)


def describe_config(cls: type) -> list[dict[str, Any]]:
    """Each config key of `cls`: name, type, default, bounds or choices, and its doc."""
    hints = field_types(cls)
    rows = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        meta = f.metadata.get("teamenvs", {})
        def shown(bound: Any) -> Any:
            return bound if bound is None or isinstance(bound, (int, float, str)) else "(a number that depends on other keys)"
        rows.append({"key": f.name, "type": getattr(hints[f.name], "__name__", str(hints[f.name])), "default": f.default,
                     "low": shown(meta.get("low")), "high": shown(meta.get("high")),
                     "choices": meta.get("choices"), "doc": meta.get("doc", "")})
    return rows


# config object's id -> (the config, its JSON text): a log's header holds its env's config, once an episode
_JSON_TEXTS: dict[int, tuple[Any, str]] = {}


def config_to_json(config: Any) -> dict[str, Any]:
    """A JSON-ready dict of a config dataclass, a new one each call.

    The text is made once per config object and read back each call (`dataclasses.asdict` takes 10-22 us a config, the
    read 2-3 us), for configs that cannot change: frozen and hashable, so every field is immutable too. The cache holds
    the config itself, so its id stands for no other object while it is there."""
    cached = _JSON_TEXTS.get(id(config))
    if cached is not None and cached[0] is config:
        return json.loads(cached[1])
    text = json.dumps(dataclasses.asdict(config), default=str)
    params = getattr(type(config), "__dataclass_params__", None)
    try:
        hash(config)
        lasting = params is not None and params.frozen
    except TypeError:  # a field that is a mutable container: no cache, made each time
        lasting = False
    if lasting:
        if len(_JSON_TEXTS) >= 256:
            _JSON_TEXTS.clear()
        _JSON_TEXTS[id(config)] = (config, text)
    return json.loads(text)


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """Raise ConfigError unless `value` is an integer within [low, high]; return it as a Python int.

    A numpy integer (a sweep's np.arange, a DataFrame cell) is the number it holds, as in a config; the caller keeps
    the returned int, so a request body or a log never meets np.int64 (which `json.dumps` refuses)."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{name} must be an integer, got {excerpt(value)}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ConfigError(f"{name} must be {range_text(low, high)}, got {excerpt(value)}")
    return value


def check_number(name: str, value: Any, low: float | None = None, high: float | None = None, *, above: bool = False) -> None:
    """Raise ConfigError unless `value` is a finite int or float (not a bool) within [low, high] (above `low` with
    `above`): a setting outside a config (a timeout, a temperature) that NaN, infinity or text would break."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or (isinstance(value, float) and not math.isfinite(value)):
        raise ConfigError(f"{name} must be a finite number, got {excerpt(value)}")
    if (low is not None and (value <= low if above else value < low)) or (high is not None and value > high):
        bounds = f"> {low:g}" if above and high is None else range_text(low, high)
        raise ConfigError(f"{name} must be {bounds}, got {excerpt(value)}")


def check_flag(name: str, value: Any) -> None:
    """Raise ConfigError unless `value` is True or False (a numpy bool too): a flag given as text ("no") would be
    truthy and quietly do the opposite."""
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{name} must be true or false, got {excerpt(value)}")


def check_seed(seed: Any, where: str = "seed") -> None:
    """Refuse a seed numpy's generators would refuse in their own words (or, a list, take as one seed no log can hold
    as one): None or a non-negative integer (a numpy integer too; not a bool). TypeError for another kind of value,
    ValueError for a negative integer, each saying `where` it was given."""
    if seed is None:
        return
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{where} takes a non-negative integer or None, got {excerpt(seed)}")
    if seed < 0:
        raise ValueError(f"{where} takes a non-negative integer or None, got {int(seed)}")
