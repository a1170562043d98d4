"""The four stages as functions, each a command of the command line run in this process: options are the
command's flags spelt as keyword arguments (``n_test=3`` for ``--n-test 3``), and every call writes what the
command writes, so the report, ``ragtester diff`` and ``ragtester serve`` read it as any other run."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

from . import _native, _options, adapters
from ._target import Host
from .results import RunResult, Suite

PathLike = Union[str, "os.PathLike[str]"]
Docs = Union[PathLike, Sequence[PathLike]]


def call(args: list[str], functions: Sequence[tuple[str, Host]] = ()) -> int:
    """One command, its exit code (0; 3 when some inputs, cells or verdicts were left out; 4 when a gate
    was missed; 5 when the budget ran out). Failures raise ``ragtester.Error``."""
    return _native.call(args, list(functions))


def fresh_dir(kind: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"ragtester-{kind}-"))


def docs_list(docs: Docs) -> list[str]:
    if isinstance(docs, (str, os.PathLike)):
        return [os.fspath(docs)]
    return [os.fspath(d) for d in docs]


def docs_flags(docs: Docs) -> list[str]:
    return [flag for d in docs_list(docs) for flag in ("--docs", d)]


def sample_corpus(dir: Optional[PathLike] = None) -> Path:
    """Write the sample documents the demo runs on (English and Chinese: Markdown, text, HTML, PDF) into
    ``dir`` (a new temporary folder by default) and return it."""
    return Path(_native.sample_corpus(os.fspath(dir) if dir is not None else fresh_dir("corpus")))


def generate(docs: Docs, out: Optional[PathLike] = None, **options: Any) -> Suite:
    """Generate a test suite from documents (``ragtester generate``); ``out`` is the suite's file
    (``suite.jsonl`` in a new temporary folder by default)."""
    path = Path(out) if out is not None else fresh_dir("suite") / "suite.jsonl"
    options.setdefault("quiet", True)
    call(_options.argv(["generate"], {"docs": docs_list(docs), "out": path, **options}))
    return Suite(path)


def suite_file(suite: Any, docs: Optional[Docs], folder: Path) -> Path:
    """A suite as a file the command line reads: a ``Suite``, a path, a list of case dicts, or a RAGAS or
    DeepEval dataset object (imported through ``ragtester import``)."""
    if isinstance(suite, Suite):
        if not suite.path.exists():
            suite.save(folder / "suite.jsonl")
        return suite.path
    if isinstance(suite, (str, os.PathLike)):
        return Path(suite)
    dataset = adapters.dataset_rows(suite)
    if dataset is not None:
        if docs is None:
            raise _native.ConfigError("a RAGAS or DeepEval dataset becomes a suite against documents: give docs=")
        file, format = adapters.write_rows(dataset, folder / "dataset.jsonl")
        out = folder / "suite.jsonl"
        call(["import", os.fspath(file), "--format", format, "--out", os.fspath(out), "--quiet",
              *docs_flags(docs)])
        return out
    if isinstance(suite, list):
        return Suite(folder / "suite.jsonl", list(suite)).save(folder / "suite.jsonl")
    raise TypeError(f"suite must be a Suite, a path, a list of cases or a RAGAS/DeepEval dataset, not {type(suite).__name__}")


def target_name(fn: Any) -> str:
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "function"


def run(
    suite: Any,
    target: Any = None,
    docs: Optional[Docs] = None,
    out: Optional[PathLike] = None,
    config: Optional[PathLike] = None,
    timeout: float = 60.0,
    **options: Any,
) -> RunResult:
    """Run a suite (``ragtester run``) against ``target`` — a function ``answer_fn(question,
    history=None)``, sync or async, returning a str or a dict with ``answer``, ``contexts``,
    ``citations``, ``tool_calls``; or a LangChain runnable or a LlamaIndex query engine — or, without a
    target, against the built-in matrix the options and ``config`` name (``retriever=["bm25", "hybrid"],
    top_k=3``). ``timeout`` is each call's limit in seconds. ``resume=True`` continues a run that stopped."""
    folder = Path(out) if out is not None else fresh_dir("run")
    folder.mkdir(parents=True, exist_ok=True)
    if docs is None:
        raise _native.ConfigError("run needs the documents the suite was written from: docs=")
    options.setdefault("quiet", True)
    suite_path = suite_file(suite, docs, folder)
    functions: list[tuple[str, Host]] = []
    if target is not None:
        fn = adapters.answer_fn(target)
        name = target_name(target)
        host = Host(fn, timeout)
        functions.append((name, host))
        project = folder / "ragtester.function.toml"
        base = Path(config).read_text(encoding="utf-8") + "\n" if config is not None else ""
        project.write_text(base + _native.function_target(name, timeout), encoding="utf-8")
        config = project
    args = {"docs": docs_list(docs), "suite": suite_path, "out": folder, "config": config, **options}
    try:
        code = call(_options.argv(["run"], args), functions)
    finally:
        for _, host in functions:
            host.close()
    return RunResult(folder, code)


def run_dir(run: Any) -> Path:
    return run.out if isinstance(run, RunResult) else Path(run)


def judge(run: Any, judge: Union[str, Sequence[str]] = "offline", docs: Optional[Docs] = None,
          **options: Any) -> RunResult:
    """Judge a run's answers (``ragtester judge``): ``judge`` names the judge or judges (``"offline"``,
    ``"openai:gpt-4o"``, …). ``run`` is a run directory, a ``RunResult``, or a RAGAS or DeepEval dataset
    whose rows already hold answers (imported through ``ragtester import --answers``; give ``docs=``)."""
    rows = None if isinstance(run, (RunResult, str, os.PathLike)) else adapters.dataset_rows(run)
    if rows is not None:
        if docs is None:
            raise _native.ConfigError("answered records are judged against documents: give docs=")
        folder = Path(options.pop("out", None) or fresh_dir("run"))
        folder.mkdir(parents=True, exist_ok=True)
        file, _ = adapters.write_rows(rows, folder / "answered.jsonl")
        call(["import", "--answers", os.fspath(file), "--out", os.fspath(folder), "--quiet",
              *docs_flags(docs)])
        run = folder
    folder = run_dir(run)
    options.setdefault("quiet", True)
    judges = [judge] if isinstance(judge, str) else list(judge)
    code = call(_options.argv(["judge"], {"judge": judges, **options}) + [os.fspath(folder)])
    return RunResult(folder, code)


_judge_stage = judge


def report(run: Any, **options: Any) -> RunResult:
    """Write the run's report (``ragtester report``): report.html, summary.json, summary.md, results.csv,
    junit.xml. Gates (``fail_under=0.8``…) set ``exit_code`` 4 when missed, as on the command line. Prints
    nothing (the summary is ``result.summary`` and summary.md) unless ``no_summary=False``."""
    folder = run_dir(run)
    options.setdefault("quiet", True)
    options.setdefault("no_summary", not options.get("full", False))
    code = call(_options.argv(["report"], options) + [os.fspath(folder)])
    return RunResult(folder, code)


def evaluate(
    answer_fn: Any,
    suite: Any = None,
    docs: Optional[Docs] = None,
    judge: Union[str, Sequence[str]] = "offline",
    out: Optional[PathLike] = None,
    config: Optional[PathLike] = None,
    timeout: float = 60.0,
    **options: Any,
) -> RunResult:
    """The common case in one call: a suite (generated from ``docs`` when none is given), run against
    ``answer_fn``, judged and reported. Each option goes to every stage whose command takes it
    (``n_test`` to generate, ``concurrency`` to run and judge, ``fail_under`` to report …)."""
    folder = Path(out) if out is not None else fresh_dir("run")
    folder.mkdir(parents=True, exist_ok=True)
    if docs is None:
        raise _native.ConfigError("evaluate needs the documents the system answers from: docs=")
    commands = {"generate": ["generate"], "run": ["run"], "judge": ["judge"], "report": ["report"]}
    routed = _options.split(options, commands)
    if suite is None:
        suite = generate(docs, folder / "suite.jsonl", **routed["generate"])
    ran = run(suite, target=answer_fn, docs=docs, out=folder, config=config, timeout=timeout,
              **routed["run"])
    judged = _judge_stage(folder, judge=judge, **routed["judge"])
    reported = report(folder, **routed["report"])
    # The worst of the stages' exit codes (3 partial, 4 gate missed) stands for the whole.
    return RunResult(folder, max(ran.exit_code, judged.exit_code, reported.exit_code))
