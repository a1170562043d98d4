"""The adapters on the real frameworks with their own offline fakes: a LangChain runnable, a LlamaIndex
query engine over the sample corpus (mock embedding and LLM), and RAGAS and DeepEval datasets."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragtester
from conftest import expected_answers


def test_a_langchain_runnable_is_a_target(suite: ragtester.Suite, corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document
    from langchain_core.runnables import RunnableLambda

    right = expected_answers(suite)

    def chain(question: str) -> dict:
        answer = right.get(question, "")
        return {"answer": answer, "context": [Document(page_content=answer)]}

    result = ragtester.evaluate(RunnableLambda(chain), suite=suite, docs=corpus, out=tmp_path / "run")
    single = [r for r in result.rows if not r["error"]]
    assert single and all(r["contexts"] == [r["answer"]] for r in single)
    assert result.pass_rate > 0.5


def test_a_langchain_chat_chain_with_a_fake_model(suite: ragtester.Suite, corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.prompts import ChatPromptTemplate

    model = FakeListChatModel(responses=["I cannot find that in the manual."])
    chain = ChatPromptTemplate.from_messages([("human", "{question}")]) | model
    result = ragtester.run(suite, target=ragtester.from_langchain(chain, input_key="question"), docs=corpus,
                           out=tmp_path / "run")
    assert all(a["error"] is None for a in result.answers), result.answers[0]["error"]
    assert {a["answer"] for a in result.answers} == {"I cannot find that in the manual."}


def test_a_llama_index_query_engine_is_a_target(suite: ragtester.Suite, corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core import Document, Settings, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM

    Settings.embed_model = MockEmbedding(embed_dim=8)
    Settings.llm = MockLLM(max_tokens=16)
    texts = [p.read_text(encoding="utf-8") for p in sorted(corpus.glob("*.md"))]
    engine = VectorStoreIndex.from_documents([Document(text=t) for t in texts]).as_query_engine(similarity_top_k=2)
    single = ragtester.Suite(tmp_path / "single.jsonl", [c for c in suite if not c.get("turn")])
    result = ragtester.evaluate(engine, suite=single, docs=corpus, out=tmp_path / "run")
    assert result.errors == 0, result.rows[0]["error"]
    # The source nodes are the contexts: passages of the corpus.
    assert all(len(r["contexts"]) == 2 for r in result.rows)
    assert all(any(c in t for t in texts) for r in result.rows for c in r["contexts"])


def test_a_ragas_dataset_is_a_suite_and_answered_rows_are_judged(corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("ragas")
    from ragas import EvaluationDataset, SingleTurnSample

    rows = [
        SingleTurnSample(user_input="What pressure does the Harbor pump run at?",
                         reference="It runs at 4.5 bar.", response="4.5 bar.",
                         retrieved_contexts=["The pump runs at 4.5 bar."]),
        SingleTurnSample(user_input="Who makes the XF-48 battery?", reference="Changzhou Xunfeng.",
                         response="I do not know.", retrieved_contexts=["The XF-48 is made in Changzhou."]),
    ]
    dataset = EvaluationDataset(samples=rows)
    ran = ragtester.run(dataset, target=lambda q, history=None: "It runs at 4.5 bar.", docs=corpus,
                        out=tmp_path / "run")
    assert [c["query"] for c in ran.cases] == [r.user_input for r in rows]
    judged = ragtester.judge(dataset, docs=corpus, out=tmp_path / "answered")
    assert [a["answer"] for a in judged.answers] == ["4.5 bar.", "I do not know."]
    assert len(judged.verdicts) == 2


def test_a_deepeval_dataset_is_a_suite(corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("deepeval")
    from deepeval.dataset import EvaluationDataset, Golden

    dataset = EvaluationDataset(goldens=[Golden(input="How long is the battery warranty?",
                                                expected_output="Two years.", context=["A two-year warranty."])])
    ran = ragtester.run(dataset, target=lambda q, history=None: "Two years.", docs=corpus, out=tmp_path / "run")
    assert [c["query"] for c in ran.cases] == ["How long is the battery warranty?"]
    assert ran.answers[0]["answer"] == "Two years."
