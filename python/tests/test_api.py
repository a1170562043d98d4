"""The Python API on the sample corpus, through the real engine: every call writes a run directory the
command line reads, a function's failures are cells' errors, and options are the command line's."""

from __future__ import annotations

import asyncio
import collections
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import ragtester
from conftest import expected_answers

# The console script the wheel installed beside this interpreter.
RAGTESTER = str(Path(sys.executable).with_name("ragtester"))


def test_generate_gives_a_suite_with_every_field(suite: ragtester.Suite, tmp_path: Path) -> None:
    assert len(suite) > 10
    case = suite[0]
    for field in ("id", "query", "expected_answer", "keywords", "source_spans", "category"):
        assert field in case, field
    assert any(c.get("turn") for c in suite), "conversations=1 gives conversation turns"
    copy = suite.save(tmp_path / "copy.jsonl")
    assert len(ragtester.Suite.load(copy)) == len(suite)


def test_the_four_stages_one_by_one(suite: ragtester.Suite, corpus: Path, tmp_path: Path,
                                    capfd: pytest.CaptureFixture[str]) -> None:
    right = expected_answers(suite)
    calls = []

    def answer(question: str, history=None):
        calls.append((question, history))
        return {"answer": right.get(question, "I cannot tell."), "contexts": [right.get(question, "")]}

    ran = ragtester.run(suite, target=answer, docs=corpus, out=tmp_path / "run")
    assert len(ran.answers) == len(suite)
    assert len(calls) == len(suite)
    # A conversation's later turns come with the turns before them, as chat messages.
    later = [h for _, h in calls if h]
    assert later and all(m["role"] in ("user", "assistant") for h in later for m in h)
    judged = ragtester.judge(ran)
    assert len(judged.verdicts) == len(suite)
    capfd.readouterr()
    reported = ragtester.report(judged)
    assert reported.report_html.exists()
    # A library call prints nothing: the summary is the result's, and the console's is one option away.
    assert capfd.readouterr().out == ""
    ragtester.report(judged, no_summary=False)
    assert "configuration" in capfd.readouterr().out
    assert reported.summary["configs"][0]["label"] == "target answer (function)"
    # The right answers pass; the report and the result count alike.
    assert reported.pass_rate > 0.8, reported.failures()[:3]
    assert reported.summary["configs"][0]["passed"] == reported.passed
    # The command line reads what the API wrote.
    listing = subprocess.run([RAGTESTER, "report", str(tmp_path / "run")],
                             capture_output=True, text=True)
    assert listing.returncode == 0, listing.stderr
    assert "target answer (function)" in listing.stdout


def test_evaluate_in_one_call_with_a_wrong_system(suite: ragtester.Suite, corpus: Path, tmp_path: Path) -> None:
    result = ragtester.evaluate(lambda q, history=None: "The answer is 42.", suite=suite, docs=corpus,
                                out=tmp_path / "run")
    assert result.pass_rate is not None and result.pass_rate < 0.3
    failure = result.failures()[0]
    assert failure["cause"] and failure["evidence"] is not None
    assert "pass rate" not in repr(result) or "RunResult" in repr(result)
    assert "<table>" in result._repr_html_()


def test_a_drop_among_flaky_cells_is_held_back_and_strict_fails_on_it(suite: ragtester.Suite, corpus: Path,
                                                                    tmp_path: Path) -> None:
    """Five repeats a side. One case falls 5/5 → 1/5 while eight others flake both ways, as an unchanged
    flaky system's do: the gate holds the drop back as chance (inconclusive, with a note to repeat more)
    and passes; ``strict=True`` (``diff --strict``) fails on it."""
    right = expected_answers(suite)
    single = ragtester.Suite(tmp_path / "single.jsonl",
                             [c for c in suite if not c.get("turn") and c.get("category") != "negative"])
    first = ragtester.evaluate(lambda q, history=None: right[q], suite=single, docs=corpus, out=tmp_path / "first")
    asked = {c["id"]: c["query"] for c in single}
    passing = sorted({asked[v["case_id"]] for v in first.verdicts if v.get("passed")})
    assert len(passing) >= 9, f"the offline judge passes {len(passing)} right answers"

    def answering(wrong_calls: dict[str, int]):
        """Right answers, but the first n calls of a question in `wrong_calls` answered wrongly."""
        calls: collections.Counter = collections.Counter()
        lock = threading.Lock()

        def answer(question: str, history=None) -> str:
            with lock:
                n = calls[question]
                calls[question] += 1
            return "The warranty covers nothing at all." if n < wrong_calls.get(question, 0) else right[question]
        return answer

    flaky_before = {q: 1 for q in passing[5:9]}
    flaky_after = {passing[0]: 4, **{q: 1 for q in passing[1:5]}}
    baseline = ragtester.evaluate(answering(flaky_before), suite=single, docs=corpus, out=tmp_path / "before",
                                  repeat=5)
    after = ragtester.evaluate(answering(flaky_after), suite=single, docs=corpus, out=tmp_path / "after", repeat=5)
    ragtester.assert_no_regression(after, baseline)
    printed = subprocess.run([RAGTESTER, "diff", str(baseline.out), str(after.out), "--fail-on-regression"],
                             capture_output=True, text=True)
    assert printed.returncode == 0, printed.stdout + printed.stderr
    assert "0 regressions" in printed.stdout and "1 drop would be a regression on its own" in printed.stdout, \
        printed.stdout
    assert "5/5 → 1/5" in printed.stdout, printed.stdout
    with pytest.raises(AssertionError, match="1 drop held back as chance") as raised:
        ragtester.assert_no_regression(after, baseline, strict=True)
    assert passing[0][:40] in str(raised.value)
    strict = subprocess.run([RAGTESTER, "diff", str(baseline.out), str(after.out), "--fail-on-regression",
                             "--strict"], capture_output=True, text=True)
    assert strict.returncode == 4, strict.stdout + strict.stderr
    assert "--strict: 1 drop held back as chance fails the gate" in strict.stderr


def test_a_result_as_a_data_frame(suite: ragtester.Suite, corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    result = ragtester.run(suite, target=lambda q, history=None: "The answer is 42.", docs=corpus,
                           out=tmp_path / "run")
    frame = ragtester.judge(result).to_pandas()
    assert len(frame) == len(suite) and "cause" in frame.columns


def test_a_raising_function_gives_errors_not_verdicts(suite: ragtester.Suite, corpus: Path, tmp_path: Path) -> None:
    def broken(question: str, history=None) -> str:
        raise ValueError("the index is down")

    result = ragtester.evaluate(broken, suite=suite, docs=corpus, out=tmp_path / "run")
    assert result.errors == len(suite)
    assert result.passed == 0 and result.failed == 0
    assert all("ValueError: the index is down" in r["error"] for r in result.rows)
    assert result.exit_code == 3, "some cells were left out: the command line's exit code 3"


def test_a_wrong_return_type_is_the_cells_error_naming_it(suite: ragtester.Suite, corpus: Path,
                                                           tmp_path: Path) -> None:
    result = ragtester.run(suite, target=lambda q, history=None: 42, docs=corpus, out=tmp_path / "run")
    errors = [a["error"] for a in result.answers]
    assert all(e and "returned int" in e for e in errors), errors[:2]


def test_a_function_without_history_errs_only_on_conversation_turns(suite: ragtester.Suite, corpus: Path,
                                                                   tmp_path: Path) -> None:
    right = expected_answers(suite)
    result = ragtester.run(suite, target=lambda q: right.get(q, ""), docs=corpus, out=tmp_path / "run")
    errored = [r for r in result.rows if r["error"]]
    assert errored and all("history" in r["error"] for r in errored)
    assert len(errored) < len(suite)


def test_an_async_function_runs_calls_side_by_side(suite: ragtester.Suite, corpus: Path, tmp_path: Path) -> None:
    in_flight = 0
    most = 0
    lock = threading.Lock()

    async def answer(question: str, history=None) -> str:
        nonlocal in_flight, most
        with lock:
            in_flight += 1
            most = max(most, in_flight)
        await asyncio.sleep(0.05)
        with lock:
            in_flight -= 1
        return "I cannot tell."

    started = time.monotonic()
    result = ragtester.run(suite, target=answer, docs=corpus, out=tmp_path / "run", concurrency=8)
    assert all(a["error"] is None for a in result.answers)
    assert most > 1, "calls overlapped"
    # One at a time would take len(suite) × 50 ms.
    assert time.monotonic() - started < len(suite) * 0.05


def test_options_are_the_command_lines(suite: ragtester.Suite, corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(ragtester.ConfigError, match="top_kk"):
        ragtester.run(suite, docs=corpus, out=tmp_path / "a", top_kk=3)
    with pytest.raises(ragtester.ConfigError):
        ragtester.run(suite, docs=corpus, out=tmp_path / "b", retriever="no-such-retriever")
    # The built-in matrix beside a function: the options name its axes.
    matrix = ragtester.run(suite, docs=corpus, out=tmp_path / "c", retriever=["bm25", "hybrid"], top_k=2)
    assert {c["retriever"] for c in matrix.configs} == {"bm25", "hybrid"}


def test_bad_input_raises_the_command_lines_message(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(ragtester.Error) as raised:
        ragtester.generate(tmp_path / "no-such-folder", tmp_path / "suite.jsonl")
    assert "no-such-folder" in str(raised.value)


def test_the_console_script_is_the_command_line() -> None:
    version = subprocess.run([RAGTESTER, "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("ragtester ")
    usage = subprocess.run([RAGTESTER, "run", "--no-such-flag"], capture_output=True, text=True)
    assert usage.returncode == 2 and "--no-such-flag" in usage.stderr


def test_ctrl_c_stops_a_run_that_resume_finishes(suite: ragtester.Suite, corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    started = tmp_path / "started"
    script = f"""
import pathlib, ragtester, time
suite = ragtester.Suite.load({str(suite.path)!r})
def slow(question, history=None):
    pathlib.Path({str(started)!r}).touch()
    time.sleep(0.2)
    return "I cannot tell."
try:
    ragtester.run(suite, target=slow, docs={str(corpus)!r}, out={str(out)!r}, concurrency=2)
    print("finished")
except KeyboardInterrupt:
    print("interrupted")
"""
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not started.exists():
        time.sleep(0.05)
    time.sleep(1.0)  # a few cells answered, most not
    child.send_signal(signal.SIGINT)  # as Ctrl-C sends it
    stdout, _ = child.communicate(timeout=60)
    assert stdout.strip() == "interrupted"
    calls = []

    # The same function by name: a function target is its name, and resuming needs the same configuration.
    def slow(question: str, history=None) -> str:
        calls.append(question)
        return "I cannot tell."

    resumed = ragtester.run(suite, target=slow, docs=corpus, out=out, resume=True)
    assert len({a["case_id"] for a in resumed.answers}) == len(suite)
    assert 0 < len(calls) < len(suite) - 2, "only the cells not answered before are asked"


def test_ctrl_c_stops_the_console_script_with_130(tmp_path: Path) -> None:
    child = subprocess.Popen([RAGTESTER, "demo", "--out", str(tmp_path / "demo")], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (tmp_path / "demo" / "corpus").exists():
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert "interrupted" in stderr
