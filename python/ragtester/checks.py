"""Assertions for tests (pytest or any runner): a failure's message lists the failed cases with their
causes, so the test's own output says what went wrong."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from . import _native
from .results import RunResult

#: Failed cases listed in an assertion's message; the rest are counted.
LISTED = 20


def describe_failures(result: RunResult, rows: list[dict[str, Any]]) -> str:
    lines = []
    for row in rows[:LISTED]:
        why = row["error"] and f"error: {row['error']}" or f"{row['cause']}: {row['evidence'] or ''}"
        lines.append(f"  - [{row['case_id']} · {row['config']}] {row['query']!r}\n      {why[:400]}")
    if len(rows) > LISTED:
        lines.append(f"  … and {len(rows) - LISTED} more ({result.out / 'report.html'})")
    return "\n".join(lines)


def assert_pass_rate(result: RunResult, at_least: float, errors_allowed: int = 0) -> None:
    """Fail unless the run's pass rate (passed over all cells, as the report counts it) is at least ``at_least`` and it has at most
    ``errors_allowed`` cells whose system or judge failed."""
    rate = result.pass_rate
    problems = []
    if rate is None:
        problems.append("no answer was judged")
    elif rate < at_least:
        problems.append(f"pass rate {rate:.1%} is under {at_least:.1%} ({result.failed} failed and "
                        f"{result.errors} errors of {len(result.rows)} cells)")
    if result.errors > errors_allowed:
        problems.append(f"{result.errors} cells are errors (allowed: {errors_allowed})")
    if problems:
        failed = [r for r in result.rows if r["passed"] is False or r["error"]]
        raise AssertionError("; ".join(problems) + "\n" + describe_failures(result, failed))


def assert_no_regression(result: RunResult, baseline: Union[str, "os.PathLike[str]", RunResult],
                         compare: Optional[Mapping[str, str]] = None, strict: bool = False) -> None:
    """Fail when ``ragtester diff BASELINE RUN --fail-on-regression`` fails: a cell that passed before
    fails now beyond chance (Fisher's exact test over repeats, Holm across the cells that could reach
    significance), or the two runs share no cell to compare. ``compare`` maps a configuration of the
    baseline to the one of this run it is compared as (``diff --compare``): ``{"bm25 k=1": "bm25 k=3"}``,
    or a function target renamed, ``{"old_rag": "new_rag"}``. ``strict`` fails on a drop the gate held back
    as chance too (``diff --strict``: p ≤ 0.05 on its own, among cells that flake)."""
    before = baseline.out if isinstance(baseline, RunResult) else Path(baseline)
    pairs = [arg for b, a in (compare or {}).items() for arg in ("--compare", b, a)]
    with tempfile.TemporaryDirectory(prefix="ragtester-diff-") as folder:
        report = Path(folder) / "diff.json"
        code = _native.call(["diff", os.fspath(before), os.fspath(result.out), "--fail-on-regression",
                             "--json", os.fspath(report), *pairs, *(["--strict"] if strict else [])])
        if not report.exists():
            # The diff did not run (a configuration `compare` names that neither run has): its message
            # went to stderr.
            raise ValueError(f"ragtester diff {before} {result.out} stopped (exit {code}): see its message above")
        diff = json.loads(report.read_text(encoding="utf-8"))
    if code == 0:
        return
    if not diff.get("compared"):
        raise AssertionError(f"the run shares no cell with the baseline {before}: nothing was compared")
    # Under `strict`, the drops held back as chance fail it beside the regressions.
    held = [c for c in diff.get("inconclusive", []) if (c.get("p_value") or 1) <= 0.05
            and c["passes_after"]["passed"] * c["passes_before"]["of"] < c["passes_before"]["passed"] * c["passes_after"]["of"]]
    failed = diff["regressions"] + (held if strict else [])
    lines = [f"{len(diff['regressions'])} regressed cells against {before}"
             + (f", {len(held)} drop{'' if len(held) == 1 else 's'} held back as chance" if strict and held else "") + ":"]
    for change in failed[:LISTED]:
        b, a = change["passes_before"], change["passes_after"]
        # The question first: a person knows a case by what it asks, not by its id.
        asked = f"{change['query']!r} " if change.get("query") else ""
        lines.append(f"  - {asked}[{change['case_id']} · {change.get('label') or change['config_id']}] "
                     f"{b['passed']}/{b['of']} → {a['passed']}/{a['of']}: {change.get('cause') or ''}")
    raise AssertionError("\n".join(lines))
