"""The pytest plugin in a real pytest session (pytester): a test passes on a right system, fails on a
wrong one with the failed cases and their causes in pytest's own output, and runs under pytest -n."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragtester

TESTS = '''
import ragtester

SUITE = ragtester.Suite.load({suite!r})
RIGHT = {{c["query"]: c["expected_answer"] for c in SUITE}}


def right(question, history=None):
    return RIGHT[question]


def wrong(question, history=None):
    return "The warranty covers nothing at all."


def test_right_system(ragtester_evaluate):
    result = ragtester_evaluate(right, suite=SUITE, docs={docs!r})
    ragtester.assert_pass_rate(result, at_least=0.8)


def test_wrong_system(ragtester_evaluate):
    result = ragtester_evaluate(wrong, suite=SUITE, docs={docs!r})
    ragtester.assert_pass_rate(result, at_least=0.8)


def system(question, history=None):
    return "The warranty covers nothing at all."


def test_no_regression(ragtester_evaluate, ragtester_baseline):
    result = ragtester_evaluate(system, suite=SUITE, docs={docs!r})
    ragtester.assert_no_regression(result, ragtester_baseline)


def test_unrelated_baseline(ragtester_evaluate, ragtester_baseline):
    result = ragtester_evaluate(wrong, suite=SUITE, docs={docs!r})
    ragtester.assert_no_regression(result, ragtester_baseline)


def test_renamed_baseline(ragtester_evaluate, ragtester_baseline):
    result = ragtester_evaluate(wrong, suite=SUITE, docs={docs!r})
    ragtester.assert_no_regression(result, ragtester_baseline, compare={{"system": "wrong"}})
'''


@pytest.fixture
def plugin_tests(pytester: pytest.Pytester, suite: ragtester.Suite, corpus: Path) -> pytest.Pytester:
    single = ragtester.Suite(pytester.path / "suite.jsonl", [c for c in suite if not c.get("turn")][:12])
    single.save(pytester.path / "suite.jsonl")
    pytester.makepyfile(test_rag=TESTS.format(suite=str(single.path), docs=str(corpus)))
    return pytester


def test_the_plugin_passes_and_fails_as_it_should(plugin_tests: pytest.Pytester) -> None:
    outcome = plugin_tests.runpytest_subprocess("-k", "system")
    outcome.assert_outcomes(passed=1, failed=1)
    # The failure names the failed cases and why, in pytest's own output.
    outcome.stdout.fnmatch_lines(["*pass rate*is under 80.0%*", "*- [[]* · target wrong (function)[]]*"])


def test_no_regression_against_a_baseline(plugin_tests: pytest.Pytester, suite: ragtester.Suite,
                                          corpus: Path, tmp_path: Path) -> None:
    single = ragtester.Suite.load(plugin_tests.path / "suite.jsonl")
    right = {c["query"]: c["expected_answer"] for c in single}

    def system(question: str, history=None) -> str:
        return right[question]

    baseline = ragtester.evaluate(system, suite=single, docs=corpus, out=tmp_path / "baseline")
    # A function's name is its target's name: `system` in the test meets the baseline's cells and
    # regresses on them; `wrong` meets none of them, and a diff that compared nothing fails too — unless
    # `compare` says `wrong` is the baseline's `system` renamed: then it regresses on them.
    outcome = plugin_tests.runpytest_subprocess("-k", "regression or unrelated or renamed",
                                                f"--ragtester-baseline={baseline.out}")
    outcome.assert_outcomes(failed=3)
    outcome.stdout.fnmatch_lines(["*regressed cells against*", "*shares no cell with the baseline*",
                                  "*regressed cells against*"])
    # Each regressed cell is named by its question first, then its case and configuration.
    outcome.stdout.re_match_lines([r".*- (['\"]).+\1 \[.+ · .+\] 1/1 → 0/1.*"])


def test_the_plugin_runs_under_xdist(plugin_tests: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    outcome = plugin_tests.runpytest_subprocess("-n", "2", "-k", "system")
    outcome.assert_outcomes(passed=1, failed=1)
