"""What Python RAG code already is, as ragtester takes it: a LangChain runnable (``.invoke``) or a
LlamaIndex query engine (``.query``, its source nodes as the contexts) as an answer function; a RAGAS or
DeepEval dataset as rows for ``ragtester import`` (a suite, or answers to judge). Nothing here imports
those packages: objects are read by the attributes they are documented to have."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

# Keys under which LangChain chains commonly return their answer and their retrieved documents.
ANSWER_KEYS = ("answer", "output", "result", "text", "response")
CONTEXT_KEYS = ("context", "contexts", "source_documents", "documents", "docs")


def answer_fn(target: Any) -> Callable[..., Any]:
    """``target`` as ``answer_fn(question, history=None)``: a LangChain runnable, a LlamaIndex query or chat
    engine, or any callable as it is."""
    if hasattr(target, "invoke") and hasattr(target, "batch"):
        return from_langchain(target)
    if hasattr(target, "query") and not inspect.isroutine(target):
        return from_llama_index(target)
    if callable(target):
        return target
    raise TypeError(
        f"target must be a function, a LangChain runnable or a LlamaIndex query engine, not {type(target).__name__}"
    )


def from_langchain(runnable: Any, input_key: Optional[str] = None) -> Callable[..., Any]:
    """A LangChain runnable as an answer function. The question goes in as a string, or as
    ``{input_key: question}`` when given; the reply is read from a string, a message's ``content``, or a
    dict's answer (``answer``, ``output``, ``result``, ``text``) and documents (``context``,
    ``source_documents``, ``documents``)."""

    def answer(question: str, history: Optional[list] = None) -> Any:
        value: Any = question if input_key is None else {input_key: question}
        if history and input_key is not None:
            value["chat_history"] = [(m["role"], m["content"]) for m in history]
        return langchain_reply(runnable.invoke(value))

    answer.__name__ = type(runnable).__name__
    return answer


def langchain_reply(output: Any) -> Any:
    if isinstance(output, str):
        return output
    content = getattr(output, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(output, Mapping):
        answer = next((output[k] for k in ANSWER_KEYS if k in output), None)
        if answer is not None and not isinstance(answer, str):
            answer = langchain_reply(answer)
        contexts = next((output[k] for k in CONTEXT_KEYS if k in output), None) or []
        return {"answer": answer, "contexts": list(contexts)}
    return output


def from_llama_index(engine: Any) -> Callable[..., Any]:
    """A LlamaIndex query engine (``.query``) as an answer function: the response's text, and its source
    nodes' content as the contexts."""

    def answer(question: str) -> Any:
        response = engine.query(question)
        nodes = getattr(response, "source_nodes", None) or []
        return {
            "answer": str(getattr(response, "response", response)),
            "contexts": [node_text(n) for n in nodes],
        }

    answer.__name__ = type(engine).__name__
    return answer


def node_text(node: Any) -> str:
    inner = getattr(node, "node", node)
    get_content = getattr(inner, "get_content", None)
    return str(get_content()) if callable(get_content) else str(getattr(inner, "text", inner))


def dataset_rows(dataset: Any) -> Optional[tuple[str, list[dict]]]:
    """A RAGAS ``EvaluationDataset`` or a DeepEval ``EvaluationDataset`` as (format, rows) in the field names
    ``ragtester import`` reads; None for anything else."""
    module = type(dataset).__module__ or ""
    if module.startswith("ragas") and hasattr(dataset, "to_list"):
        return "ragas", [plain(row) for row in dataset.to_list()]
    if module.startswith("deepeval"):
        rows = [deepeval_row(g) for g in (getattr(dataset, "goldens", None) or [])]
        rows += [deepeval_row(t) for t in (getattr(dataset, "test_cases", None) or [])]
        return "deepeval", rows
    return None


DEEPEVAL_FIELDS = ("input", "actual_output", "expected_output", "retrieval_context", "context",
                   "tools_called", "expected_tools")


def deepeval_row(item: Any) -> dict:
    return {f: plain(getattr(item, f)) for f in DEEPEVAL_FIELDS if getattr(item, f, None) is not None}


def plain(value: Any) -> Any:
    """Pydantic models and other objects as plain JSON values."""
    if hasattr(value, "model_dump"):
        return plain(value.model_dump(exclude_none=True))
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def write_rows(dataset: tuple[str, list[dict]], path: Path) -> tuple[Path, str]:
    format, rows = dataset
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    return path, format
