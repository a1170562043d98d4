"""ExpertQA (English; chaitanyamalaviya/ExpertQA, MIT) as a labels file for `ragtester bench oracle --labels`.

    python bench/labels/expertqa.py [domain_test.jsonl rand_test.jsonl ...] > expertqa.labels.jsonl

Without paths the two test splits (data/lfqa/domain_test.jsonl, rand_test.jsonl) are fetched from GitHub at
bench time (never committed). Each record is one answer written by a real system — GPT-4 alone, Bing Chat, or
retrieve-and-read / post-hoc retrieval pipelines — with every claim labelled by a domain expert
(correctness, and whether the retrieved evidence supports it), the evidence passages, and the expert's revised
answer. Per answer this writes two items with the expert-revised answer as the reference and the evidence
passages as contexts:

- a score: the mean of its claims' correctness (Definitely correct 1, Probably correct 0.75, Likely incorrect
  0.25, Definitely incorrect 0; Unsure claims left out);
- a verdict: fail when an expert marked any claim likely or definitely incorrect, or found no support for any
  claim that needs one; pass otherwise;
- beside the score, a faithfulness score (`scores.faithfulness`): the share of its claims the expert found
  supported by their evidence (Complete 1, Incomplete 0.5, Missing 0), where the answer cites evidence.

Caveat: the reference is the expert's revision of this very answer, so a judge that compares with the
reference partly measures how much the expert changed.
"""

import json
import re
import sys
import urllib.request

BASE = "https://raw.githubusercontent.com/chaitanyamalaviya/ExpertQA/main/data/lfqa/"
SPLITS = ["domain_test.jsonl", "rand_test.jsonl"]
SUPPORT = {"Complete": 1.0, "Incomplete": 0.5, "Missing": 0.0}
CORRECTNESS = {
    "Definitely correct": 1.0,
    "Probably correct": 0.75,
    "Likely incorrect": 0.25,
    "Definitely incorrect": 0.0,
}


def lines(argv):
    if len(argv) > 1:
        for path in argv[1:]:
            with open(path, encoding="utf-8") as f:
                yield from f
        return
    for split in SPLITS:
        with urllib.request.urlopen(BASE + split, timeout=120) as r:
            yield from r.read().decode("utf-8").splitlines()


def evidence_text(e):
    # "[1] https://url\n\npassage" -> "passage"
    return re.sub(r"^\[\d+\]\s*\S*\s*", "", e, count=1).strip()


def main():
    out = sys.stdout
    n = 0
    for raw in lines(sys.argv):
        if not raw.strip():
            continue
        record = json.loads(raw)
        for system, a in record["answers"].items():
            answer = (a.get("answer_string") or "").strip()
            reference = (a.get("revised_answer_string") or "").strip()
            claims = a.get("claims") or []
            if not answer or not reference or not claims:
                continue
            scores = [CORRECTNESS[c["correctness"]] for c in claims if c.get("correctness") in CORRECTNESS]
            if not scores:
                continue
            contexts = []
            for c in claims:
                for e in c.get("evidence") or []:
                    text = evidence_text(e)
                    if text and text not in contexts:
                        contexts.append(text)
            wrong = any(c.get("correctness") in ("Likely incorrect", "Definitely incorrect") for c in claims)
            unsupported = any(c.get("support") == "Missing" and c.get("evidence") for c in claims)
            n += 1
            base = {
                "source": "expertqa/" + system,
                "language": "en",
                "question": record["question"],
                "reference": reference,
                "contexts": contexts,
                "answer": answer,
            }
            scored = {**base, "id": f"{n}-score", "score": sum(scores) / len(scores)}
            support = [SUPPORT[c["support"]] for c in claims if c.get("support") in SUPPORT and c.get("evidence")]
            if support:
                scored["scores"] = {"faithfulness": sum(support) / len(support)}
            out.write(json.dumps(scored) + "\n")
            out.write(json.dumps({**base, "id": f"{n}-verdict", "label": "fail" if wrong or unsupported else "pass"}) + "\n")


if __name__ == "__main__":
    main()
