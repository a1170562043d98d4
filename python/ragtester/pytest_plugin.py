"""ragtester's pytest plugin (entry point ``pytest11``): fixtures for testing a RAG function in pytest.

    def test_my_rag(ragtester_evaluate):
        result = ragtester_evaluate(my_rag.answer, docs="manuals/", n_test=3)
        ragtester.assert_pass_rate(result, at_least=0.8)

Each test writes its run under its own ``tmp_path`` (kept by pytest for the last runs), so ``pytest -n``
(pytest-xdist) runs tests side by side without sharing a run directory. ``--ragtester-baseline RUN``
names a run that ``ragtester_baseline`` hands to ``assert_no_regression``.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

from . import api
from .results import RunResult


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("ragtester")
    group.addoption(
        "--ragtester-baseline",
        default=None,
        help="a judged run directory that ragtester_baseline returns (for assert_no_regression)",
    )


@pytest.fixture
def ragtester_out(tmp_path: Path) -> Path:
    """A run directory of this test's own."""
    return tmp_path / "ragtester-run"


@pytest.fixture
def ragtester_evaluate(ragtester_out: Path) -> Callable[..., RunResult]:
    """``ragtester.evaluate`` writing into this test's own run directory."""
    return functools.partial(api.evaluate, out=ragtester_out)


@pytest.fixture
def ragtester_baseline(request: Any) -> Optional[Path]:
    """The run ``--ragtester-baseline`` names; the test is skipped when none is given."""
    baseline = request.config.getoption("--ragtester-baseline")
    if baseline is None:
        pytest.skip("no --ragtester-baseline run given")
    return Path(baseline)
