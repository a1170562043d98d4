"""HalluQA (Chinese; OpenMOSS/HalluQA, Apache-2.0) as a labels file for `ragtester bench oracle --labels`.

    python bench/labels/halluqa.py [HalluQA.json] > halluqa.labels.jsonl

Without a path the file is fetched from GitHub at bench time (never committed). Each question has people's
correct answers ("Best Answer1..4") and wrong answers ("Wrong_Answer1..4", mostly collected from real model
outputs and labelled by people). The first correct answer is the reference; every other correct answer is a
labelled pass, every wrong answer a labelled fail, and each further correct answer is paired with the wrong
answer of the same number as a preference (the order of the two drawn with a fixed seed, so the file repeats).
HalluQA gives no passages: items carry no contexts.
"""

import json
import random
import sys
import urllib.request

URL = "https://raw.githubusercontent.com/OpenMOSS/HalluQA/main/HalluQA.json"


def load(argv):
    if len(argv) > 1:
        with open(argv[1], encoding="utf-8") as f:
            return json.load(f)
    with urllib.request.urlopen(URL, timeout=60) as r:
        return json.load(r)


def answers(q, prefix):
    keys = sorted((k for k in q if k.startswith(prefix)), key=lambda k: (len(k), k))
    return [q[k].strip() for k in keys if isinstance(q[k], str) and q[k].strip()]


def main():
    rng = random.Random(2026)
    out = sys.stdout
    for q in load(sys.argv):
        best = answers(q, "Best Answer")
        wrong = answers(q, "Wrong_Answer")
        if not best:
            continue
        base = {
            "source": "halluqa/" + q.get("Category", ""),
            "language": "zh",
            "question": q["Question"],
            "reference": best[0],
            "contexts": [],
        }
        qid = q.get("question_id")
        for i, a in enumerate(best[1:], start=2):
            out.write(json.dumps({**base, "id": f"{qid}-best{i}", "answer": a, "label": "pass"}, ensure_ascii=False) + "\n")
        for i, a in enumerate(wrong, start=1):
            out.write(json.dumps({**base, "id": f"{qid}-wrong{i}", "answer": a, "label": "fail"}, ensure_ascii=False) + "\n")
        for i, good in enumerate(best[1:], start=2):
            if i - 1 >= len(wrong):
                break
            bad = wrong[i - 1]
            if rng.random() < 0.5:
                pair = {"answer_a": good, "answer_b": bad, "preference": "a"}
            else:
                pair = {"answer_a": bad, "answer_b": good, "preference": "b"}
            out.write(json.dumps({**base, "id": f"{qid}-pair{i}", **pair}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
