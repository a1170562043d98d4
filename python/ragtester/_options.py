"""Keyword arguments as the command line's flags: ``n_test=3`` is ``--n-test 3``, ``True`` a bare flag,
a list a repeated flag, ``None`` and ``False`` nothing. Each is checked against the flags the command
really takes (read from the command line's own parser), so a misspelt option fails before anything runs."""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping

from . import _native


def flag_of(name: str) -> str:
    return name.replace("_", "-")


def accepted(command: Iterable[str]) -> set[str]:
    flags = _native.flags(list(command))
    if flags is None:
        raise _native.ConfigError(f"ragtester has no command `{' '.join(command)}`")
    return set(flags)


def argv(command: list[str], options: Mapping[str, Any]) -> list[str]:
    """``command`` followed by ``options`` as flags; an option the command does not take is a
    ConfigError naming it and the flags the command does take."""
    known = accepted(command)
    out = list(command)
    for name, value in options.items():
        flag = flag_of(name)
        if flag not in known:
            raise _native.ConfigError(
                f"`{name}` is not an option of `ragtester {' '.join(command)}`; "
                f"it takes: {', '.join(sorted(f.replace('-', '_') for f in known))}"
            )
        out.extend(values(flag, value))
    return out


def values(flag: str, value: Any) -> list[str]:
    if value is None or value is False:
        return []
    if value is True:
        return [f"--{flag}"]
    if isinstance(value, (list, tuple, set, frozenset)):
        out: list[str] = []
        for item in value:
            out.extend([f"--{flag}", text(item)])
        return out
    return [f"--{flag}", text(value)]


def text(value: Any) -> str:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def split(options: Mapping[str, Any], commands: Mapping[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Route each option to every command (by key) that takes it: what ``evaluate`` does with the
    options of generate, run, judge and report together. An option none of them takes is a ConfigError."""
    routed: dict[str, dict[str, Any]] = {key: {} for key in commands}
    flags = {key: accepted(command) for key, command in commands.items()}
    for name, value in options.items():
        takers = [key for key in commands if flag_of(name) in flags[key]]
        if not takers:
            raise _native.ConfigError(
                f"`{name}` is not an option of any of: "
                + ", ".join(f"ragtester {' '.join(c)}" for c in commands.values())
            )
        for key in takers:
            routed[key][name] = value
    return routed
