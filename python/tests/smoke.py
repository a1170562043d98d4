"""The Python module in a virtual environment that holds only the wheel (scripts/install-test.sh): the four
stages and evaluate on the sample corpus with a plain function, and a raising function's cells as errors.
No test framework: this is what a user who installed nothing else can run."""

import sys
import tempfile
from pathlib import Path

import ragtester


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="ragtester-smoke-"))
    docs = ragtester.sample_corpus(work / "corpus")
    suite = ragtester.generate(docs, work / "suite.jsonl", n_test=1)
    assert len(suite) > 0, "the suite is empty"
    right = {case["query"]: case["expected_answer"] for case in suite}

    ran = ragtester.run(suite, target=lambda q, history=None: right[q], docs=docs, out=work / "run")
    reported = ragtester.report(ragtester.judge(ran))
    assert reported.report_html.exists(), "no report"
    assert reported.pass_rate > 0.8, f"right answers pass: {reported.pass_rate}"

    def broken(question, history=None):
        raise ValueError("the index is down")

    failed = ragtester.evaluate(broken, suite=suite, docs=docs, out=work / "broken")
    assert failed.errors == len(suite) and failed.passed == failed.failed == 0, repr(failed)
    try:
        ragtester.run(suite, docs=docs, out=work / "bad", retriever="no-such-retriever")
    except ragtester.ConfigError as e:
        assert "no-such-retriever" in str(e)
    else:
        raise AssertionError("an unknown retriever raised nothing")
    print(f"python smoke: {len(suite)} cases, pass rate {reported.pass_rate:.0%}, "
          f"a raising function's {failed.errors} cells are errors")


if __name__ == "__main__":
    main()
    sys.exit(0)
