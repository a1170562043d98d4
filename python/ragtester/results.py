"""What the stages wrote, read back: a suite (``Suite``) and a run directory (``RunResult``) with its
cases, answers, verdicts and summary, the same files the command line, the report, ``diff`` and
``serve`` read."""

from __future__ import annotations

import functools
import html
import json
import os
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence, Union

PathLike = Union[str, "os.PathLike[str]"]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


class Suite(Sequence[dict]):
    """A test suite: its cases as dicts with every field of ``suite.jsonl`` (``id``, ``query``,
    ``expected_answer``, ``keywords``, ``source_spans``, ``category``, ``turns`` for a conversation …)."""

    def __init__(self, path: PathLike, cases: Optional[list[dict[str, Any]]] = None) -> None:
        self.path = Path(path)
        self.cases: list[dict[str, Any]] = cases if cases is not None else read_jsonl(self.path)

    @classmethod
    def load(cls, path: PathLike) -> "Suite":
        """The suite a JSONL file holds (one case a line, as ``ragtester generate`` writes it)."""
        return cls(path)

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.cases)

    def __getitem__(self, index):  # type: ignore[override]
        return self.cases[index]

    def save(self, path: PathLike) -> Path:
        """Write the cases to ``path`` as JSON lines; the suite then lives there."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8") as out:
            for case in self.cases:
                out.write(json.dumps(case, ensure_ascii=False) + "\n")
        self.path = target
        return target

    def __repr__(self) -> str:
        return f"Suite({len(self)} cases, {str(self.path)!r})"


class RunResult:
    """A run directory: what was asked, answered and judged, and the summary the report shows.

    ``rows`` joins them, one dict per (case, configuration): ``case_id``, ``config``, ``query``,
    ``expected_answer``, ``answer``, ``passed`` (None when not judged), ``cause`` and ``evidence`` of a
    failure, ``error`` (the cell's or the verdict's), ``score``, ``latency_ms``."""

    def __init__(self, out: PathLike, exit_code: int = 0) -> None:
        self.out = Path(out)
        self.exit_code = exit_code

    # The records, read when asked for (a run of thousands of cells is not held twice).
    @property
    def cases(self) -> list[dict[str, Any]]:
        return read_jsonl(self.out / "suite.jsonl")

    @property
    def answers(self) -> list[dict[str, Any]]:
        return read_jsonl(self.out / "answers.jsonl")

    @property
    def verdicts(self) -> list[dict[str, Any]]:
        return read_jsonl(self.out / "verdicts.jsonl")

    @property
    def configs(self) -> list[dict[str, Any]]:
        return read_jsonl(self.out / "configs.jsonl")

    @property
    def summary(self) -> Optional[dict[str, Any]]:
        """summary.json (None before ``report``)."""
        path = self.out / "summary.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None

    @property
    def report_html(self) -> Path:
        return self.out / "report.html"

    @functools.cached_property
    def rows(self) -> list[dict[str, Any]]:
        """Read once per ``RunResult``: each stage function returns a new one for what it wrote."""
        cases = {c["id"]: c for c in self.cases}
        labels = {c["id"]: config_label(c) for c in self.configs}
        verdicts = {(v["case_id"], v["config_id"]): v for v in self.verdicts}
        rows = []
        for answer in self.answers:
            key = (answer["case_id"], answer["config_id"])
            case = cases.get(answer["case_id"], {})
            verdict = verdicts.get(key)
            attribution = (verdict or {}).get("attribution") or {}
            rows.append(
                {
                    "case_id": answer["case_id"],
                    "config_id": answer["config_id"],
                    "config": labels.get(answer["config_id"], answer["config_id"]),
                    "category": case.get("category"),
                    "query": case.get("query") or last_question(case),
                    "expected_answer": case.get("expected_answer"),
                    "answer": answer.get("answer"),
                    "contexts": [c.get("text") for c in answer.get("contexts") or []],
                    "passed": None if verdict is None or verdict.get("error") else verdict.get("passed"),
                    "cause": attribution.get("cause"),
                    "evidence": attribution.get("evidence"),
                    "error": answer.get("error") or (verdict or {}).get("error"),
                    "score": (verdict or {}).get("score"),
                    "latency_ms": (answer.get("latency") or {}).get("total_ms"),
                }
            )
        return rows

    @property
    def passed(self) -> int:
        return sum(1 for r in self.rows if r["passed"] is True)

    @property
    def failed(self) -> int:
        return sum(1 for r in self.rows if r["passed"] is False)

    @property
    def errors(self) -> int:
        """Cells whose system or judge failed: neither passed nor failed."""
        return sum(1 for r in self.rows if r["error"])

    @property
    def pass_rate(self) -> Optional[float]:
        """Passed over every cell, as the report and its gates count it: a cell whose system or judge
        failed is not a pass. None for a run with no cell."""
        cells = len(self.rows)
        return self.passed / cells if cells else None

    def failures(self) -> list[dict[str, Any]]:
        """The rows that failed, with their causes."""
        return [r for r in self.rows if r["passed"] is False]

    def to_pandas(self):  # -> pandas.DataFrame
        """The rows as a pandas DataFrame (pandas must be installed: ``pip install pandas``)."""
        try:
            import pandas
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("RunResult.to_pandas() needs pandas: pip install pandas") from e
        return pandas.DataFrame(self.rows)

    def _repr_html_(self) -> str:
        """The report's first screen in a notebook: each configuration's pass rate, then the first failures
        with their causes, and where the full report is."""
        summary = self.summary or {}
        parts = [f"<p><b>ragtester</b> run <code>{html.escape(str(self.out))}</code>: "
                 f"{self.passed} passed, {self.failed} failed, {self.errors} errors</p>"]
        configs = summary.get("configs") or []
        if configs:
            parts.append("<table><tr><th>configuration</th><th>pass rate</th><th>passed</th>"
                         "<th>failed</th><th>errors</th></tr>")
            for c in configs:
                rate = c.get("pass_rate")
                parts.append(
                    f"<tr><td>{html.escape(str(c.get('label')))}</td>"
                    f"<td>{'' if rate is None else f'{rate:.0%}'}</td><td>{c.get('passed')}</td>"
                    f"<td>{c.get('failed')}</td><td>{c.get('errors')}</td></tr>"
                )
            parts.append("</table>")
        failures = self.failures()[:5]
        if failures:
            parts.append("<p>First failures:</p><ul>")
            for f in failures:
                parts.append(
                    f"<li>{html.escape(str(f['query']))} — <i>{html.escape(str(f['cause']))}</i>: "
                    f"{html.escape(str(f['evidence'] or ''))[:300]}</li>"
                )
            parts.append("</ul>")
        if self.report_html.exists():
            parts.append(f"<p>Full report: <code>{html.escape(str(self.report_html))}</code></p>")
        return "\n".join(parts)

    def __repr__(self) -> str:
        rate = self.pass_rate
        shown = "not judged" if rate is None else f"pass rate {rate:.1%}"
        return f"RunResult({str(self.out)!r}: {shown}, {self.errors} errors)"


def config_label(config: dict[str, Any]) -> str:
    target = config.get("target")
    if target:
        return f"target {target.get('name')} ({target.get('type')})"
    parts = [str(config.get("retriever", "")), f"k={config.get('top_k')}", str(config.get("llm", ""))]
    return " · ".join(p for p in parts if p)


def last_question(case: dict[str, Any]) -> Optional[str]:
    turns = case.get("turns") or []
    return turns[-1].get("query") if turns else None
