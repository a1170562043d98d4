"""Shared fixtures: the sample corpus and one small suite generated from it, once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragtester

pytest_plugins = ["pytester"]


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ragtester.sample_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="session")
def suite(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> ragtester.Suite:
    out = tmp_path_factory.mktemp("suite") / "suite.jsonl"
    return ragtester.generate(corpus, out, n_test=1, conversations=1, seed=7)


def expected_answers(suite: ragtester.Suite) -> dict[str, str]:
    """Each question's reference answer, for a stand-in of a system that always answers right."""
    return {case["query"]: case["expected_answer"] for case in suite}
