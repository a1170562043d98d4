"""The dataset side of the real-tools tests: RAGAS and DeepEval write and read their own files.

    python peer_datasets.py write DIR ROWS.json   -> DIR/ragas.jsonl, ragas.csv, deepeval.json, deepeval.csv, deepeval.jsonl
    python peer_datasets.py read ragas|deepeval FILE -> the rows the library's own reader finds in FILE, as JSON on stdout
    python peer_datasets.py conversations-write DIR CONVERSATIONS.json -> DIR/ragas-multiturn.jsonl, DIR/deepeval-conversations.json
    python peer_datasets.py conversations-read ragas|deepeval FILE -> each conversation as the library reads it
    python peer_datasets.py tools ragas|deepeval FILE -> each sample's expected and called tools as the library
                                                     reads them, with RAGAS's own ToolCallF1 per sample
    python peer_datasets.py load ragas|deepeval FILE -> how many samples of each kind the library's dataset
                                                       loader (RAGAS from_jsonl, DeepEval add_goldens_from_*) reads

ROWS.json holds [{"question", "answer", "contexts": [...]}]. Run by crates/ragtester/tests/real_tools.rs.
"""

import ast
import json
import os
import sys

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")


def write(directory, rows_file):
    from deepeval.dataset import EvaluationDataset as DeepEvalDataset
    from deepeval.dataset import Golden
    from ragas import EvaluationDataset, SingleTurnSample

    rows = json.load(open(rows_file, encoding="utf-8"))
    ragas = EvaluationDataset(
        samples=[
            SingleTurnSample(
                user_input=r["question"],
                reference=r["answer"],
                reference_contexts=r["contexts"],
            )
            for r in rows
        ]
    )
    ragas.to_jsonl(os.path.join(directory, "ragas.jsonl"))
    ragas.to_csv(os.path.join(directory, "ragas.csv"))
    deepeval = DeepEvalDataset(
        goldens=[
            Golden(input=r["question"], expected_output=r["answer"], context=r["contexts"])
            for r in rows
        ]
    )
    for kind in ["json", "csv", "jsonl"]:
        deepeval.save_as(file_type=kind, directory=directory, file_name="deepeval")


def read(library, path):
    """What each library's own reader makes of a file: RAGAS reads JSONL (it has no CSV reader; a RAGAS
    user reads its CSV with pandas and ast.literal_eval, as below); DeepEval reads JSON, CSV and JSONL."""
    if library == "ragas":
        if path.endswith(".csv"):
            import pandas

            frame = pandas.read_csv(path, keep_default_na=False)
            out = []
            for record in frame.to_dict("records"):
                for field in ["reference_contexts", "retrieved_contexts"]:
                    if field in record and record[field] != "":
                        record[field] = ast.literal_eval(record[field])
                out.append(record)
            return out
        from ragas import EvaluationDataset

        dataset = EvaluationDataset.from_jsonl(path)
        return [s.model_dump(exclude_none=True) for s in dataset.samples]
    fields = ["input", "expected_output", "context", "actual_output", "retrieval_context"]
    return [{f: getattr(g, f) for f in fields if getattr(g, f, None) is not None} for g in deepeval_goldens(path)]


def deepeval_goldens(path):
    """DeepEval's own dataset reader over a file, by its extension: JSON, CSV or JSON lines."""
    from deepeval.dataset import EvaluationDataset

    dataset = EvaluationDataset()
    if path.endswith(".json"):
        dataset.add_goldens_from_json_file(path)
    elif path.endswith(".csv"):
        dataset.add_goldens_from_csv_file(path)
    else:
        dataset.add_goldens_from_jsonl_file(path)
    return dataset.goldens


def conversations_write(directory, conversations_file):
    """CONVERSATIONS.json: [{"turns": [[question, answer, [passages]], ...], "reference"}]: each written by
    the libraries' own classes — a RAGAS MultiTurnSample (passages in the AI messages' metadata) and a
    DeepEval ConversationalTestCase (passages as each assistant turn's retrieval_context)."""
    from deepeval.test_case import ConversationalTestCase, Turn
    from ragas import EvaluationDataset
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage

    conversations = json.load(open(conversations_file, encoding="utf-8"))
    samples = []
    cases = []
    for c in conversations:
        messages, turns = [], []
        for question, answer, passages in c["turns"]:
            messages += [
                HumanMessage(content=question),
                AIMessage(content=answer, metadata={"retrieved_contexts": passages}),
            ]
            turns += [
                Turn(role="user", content=question),
                Turn(role="assistant", content=answer, retrieval_context=passages),
            ]
        samples.append(MultiTurnSample(user_input=messages, reference=c["reference"]))
        cases.append(
            ConversationalTestCase(turns=turns, expected_outcome=c["reference"]).model_dump(
                exclude_none=True
            )
        )
    EvaluationDataset(samples=samples).to_jsonl(os.path.join(directory, "ragas-multiturn.jsonl"))
    with open(os.path.join(directory, "deepeval-conversations.json"), "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False)


def conversations_read(library, path):
    """Each conversation as the library's own classes read it: its messages (role, text) and reference."""
    if library == "ragas":
        from ragas import EvaluationDataset

        out = []
        for s in EvaluationDataset.from_jsonl(path).samples:
            out.append(
                {
                    "kind": type(s).__name__,
                    "messages": [[m.type, m.content] for m in s.user_input],
                    "reference": s.reference,
                }
            )
        return out
    from deepeval.test_case import ConversationalTestCase

    out = []
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(l) for l in f if l.strip()] if path.endswith(".jsonl") else json.load(f)
    for row in rows:
        case = ConversationalTestCase(**row)
        out.append(
            {
                "kind": type(case).__name__,
                "messages": [[t.role, t.content] for t in case.turns],
                "retrieval_context": case.turns[-1].retrieval_context,
                "reference": case.expected_outcome,
            }
        )
    return out


def load(library, path):
    """The library's own dataset loader over a whole file, as a user loads an export: the kinds of sample it
    made and how many of each. A row it cannot read raises, as it does for the user."""
    kinds = {}
    if library == "ragas":
        from ragas import EvaluationDataset

        samples = EvaluationDataset.from_jsonl(path).samples
    else:
        samples = deepeval_goldens(path)
    for s in samples:
        kinds[type(s).__name__] = kinds.get(type(s).__name__, 0) + 1
    return kinds


def tools(library, path):
    """Each sample's tool calls as the library's own classes hold them: [name, args] pairs expected and
    called; for RAGAS, its ToolCallF1 of the sample (a metric without a model)."""
    out = []
    if library == "ragas":
        import warnings

        from ragas import EvaluationDataset
        from ragas.messages import AIMessage

        warnings.simplefilter("ignore")
        from ragas.metrics import ToolCallF1

        metric = ToolCallF1()
        for s in EvaluationDataset.from_jsonl(path).samples:
            called = [[c.name, c.args] for m in s.user_input if isinstance(m, AIMessage) for c in (m.tool_calls or [])]
            expected = [[c.name, c.args] for c in (s.reference_tool_calls or [])]
            out.append({"expected": expected, "called": called, "f1": metric.multi_turn_score(s)})
        return out
    for g in deepeval_goldens(path):
        pairs = lambda calls: [[c.name, c.input_parameters or {}] for c in (calls or [])]
        out.append({"expected": pairs(g.expected_tools), "called": pairs(g.tools_called)})
    return out


if __name__ == "__main__":
    if sys.argv[1] == "tools":
        json.dump(tools(sys.argv[2], sys.argv[3]), sys.stdout, ensure_ascii=False)
    elif sys.argv[1] == "load":
        json.dump(load(sys.argv[2], sys.argv[3]), sys.stdout)
    elif sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "conversations-write":
        conversations_write(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "conversations-read":
        json.dump(conversations_read(sys.argv[2], sys.argv[3]), sys.stdout, ensure_ascii=False)
    else:
        json.dump(read(sys.argv[2], sys.argv[3]), sys.stdout, ensure_ascii=False)
