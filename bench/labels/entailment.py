"""BEGIN and WiCE (English attribution labelled by people) as labels files for `ragtester calibrate` and
`ragtester bench oracle --labels`.

    python bench/labels/entailment.py begin ../shared/datasets/entailment/train/begin_dev.jsonl.gz \
        ../shared/datasets/entailment/eval/begin_wow_test.jsonl.gz > begin.labels.jsonl
    python bench/labels/entailment.py wice ../shared/datasets/entailment/eval/wice_claims.jsonl.gz > wice.labels.jsonl
    python bench/labels/entailment.py begin-completeness ../shared/datasets/entailment/train/begin_dev.jsonl.gz \
        ../shared/datasets/entailment/eval/begin_wow_test.jsonl.gz > begin-completeness.labels.jsonl

The files are the normalised JSON lines of the entailment folder ({"premise", "hypothesis", "label",
"source", ...}). Neither set has a reference answer: an item is an answer judged against its passages alone,
which is what faithfulness is.

- BEGIN (Dziri et al., 2022; CC BY 4.0, CDLA-Sharing 1.0): a knowledge-grounded dialogue response against the
  knowledge passage it was written from. The question is the dialogue turn it answers, the context the
  passage, the answer the response; `label` pass when people found it fully attributable to the passage,
  fail otherwise, and `scores.faithfulness` 1 or 0. Generic responses (they assert nothing checkable) are
  left out.
- WiCE (Kamoi et al., 2023; annotations ODC-BY, text CC BY-SA): a real Wikipedia claim against the web page
  it cites, long evidence. No question (the claim stands alone); the context is the cited page's sentences;
  `score` and `scores.faithfulness` 1 for supported, 0.5 partially supported, 0 not supported. The indices
  of the supporting sentences are not used (they would give the label away).
- BEGIN read the other way round, for completeness (the share of the expected answer's claims the answer
  states): the response is the reference and the knowledge passage the answer (and its context). People
  found the response fully attributable to the passage exactly when the passage states everything the
  response says, so `scores.completeness` is 1 for those and 0 for the rest. No other set here labels
  completeness.
"""

import gzip
import json
import sys

WICE_SCORE = {"supported": 1.0, "partially_supported": 0.5, "not_supported": 0.0}
# A cited page can run to thousands of sentences; the judge reads the first this many.
WICE_MAX_SENTENCES = 400


def rows(paths):
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def begin(paths):
    for i, r in enumerate(rows(paths)):
        if r["label"] not in ("supported", "not_supported"):
            continue
        supported = r["label"] == "supported"
        yield {
            "id": f"begin-{i}",
            "source": r.get("source", "begin"),
            "language": "en",
            "question": r.get("context") or "",
            "reference": "",
            "contexts": [r["premise"]],
            "answer": r["hypothesis"],
            "label": "pass" if supported else "fail",
            "scores": {"faithfulness": 1.0 if supported else 0.0},
        }


def begin_completeness(paths):
    for item in begin(paths):
        passage = item["contexts"][0]
        yield {
            **item,
            "id": item["id"].replace("begin-", "begin-completeness-"),
            "reference": item["answer"],
            "answer": passage,
            "label": None,
            "scores": {"completeness": item["scores"]["faithfulness"]},
        }


def wice(paths):
    for i, r in enumerate(rows(paths)):
        score = WICE_SCORE.get(r["label"])
        if score is None:
            continue
        premise = r["premise"]
        sentences = premise if isinstance(premise, list) else [premise]
        yield {
            "id": f"wice-{i}",
            "source": r.get("source", "wice"),
            "language": "en",
            "question": "",
            "reference": "",
            "contexts": [" ".join(sentences[:WICE_MAX_SENTENCES])],
            "answer": r["hypothesis"],
            "score": score,
            "scores": {"faithfulness": score},
        }


if __name__ == "__main__":
    kind, paths = sys.argv[1], sys.argv[2:]
    kinds = {"begin": begin, "wice": wice, "begin-completeness": begin_completeness}
    if kind not in kinds or not paths:
        sys.exit(__doc__)
    for item in kinds[kind](paths):
        if item.get("label") is None:
            item.pop("label", None)
        print(json.dumps(item, ensure_ascii=False))
