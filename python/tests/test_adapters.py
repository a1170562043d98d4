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


WARRANTY = ("Harbor Marine Systems warrants the HX-40 against defects in materials and workmanship for 36 "
            "months from the date of purchase.")


def test_a_ragas_dataset_is_a_suite_and_answered_rows_are_judged(corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("ragas")
    from ragas import EvaluationDataset, SingleTurnSample

    assert WARRANTY in (corpus / "harbor-pump-manual.md").read_text(encoding="utf-8")
    rows = [
        SingleTurnSample(user_input="How long is the HX-40 warranty?", reference="36 months from purchase.",
                         reference_contexts=[WARRANTY], response="36 months.", retrieved_contexts=[WARRANTY]),
        SingleTurnSample(user_input="Who warrants the HX-40?", reference="Harbor Marine Systems.",
                         reference_contexts=[WARRANTY], response="I do not know.",
                         retrieved_contexts=[WARRANTY]),
    ]
    dataset = EvaluationDataset(samples=rows)
    ran = ragtester.run(dataset, target=lambda q, history=None: "36 months.", docs=corpus, out=tmp_path / "run")
    assert [c["query"] for c in ran.cases] == [r.user_input for r in rows]
    assert all(c["source_spans"] for c in ran.cases), "the reference contexts are found in the documents"
    judged = ragtester.judge(dataset, docs=corpus, out=tmp_path / "answered")
    assert [a["answer"] for a in judged.answers] == ["36 months.", "I do not know."]
    assert [v["passed"] for v in judged.verdicts] == [True, False]


def test_a_deepeval_dataset_is_a_suite(corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("deepeval")
    from deepeval.dataset import EvaluationDataset, Golden

    golden = Golden(input="How long is the HX-40 warranty?", expected_output="36 months.", context=[WARRANTY])
    dataset = EvaluationDataset(goldens=[golden])
    ran = ragtester.run(dataset, target=lambda q, history=None: "36 months.", docs=corpus, out=tmp_path / "run")
    assert [c["query"] for c in ran.cases] == ["How long is the HX-40 warranty?"]
    assert ran.answers[0]["answer"] == "36 months."
