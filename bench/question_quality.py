#!/usr/bin/env python3
"""Question quality of generated suites on real manuals: the share of positive cases written from prose, of
fill-in-the-blank questions, of near-duplicates, the mean question length and the share of answers that are
only a heading or a number, per PDF and over all of them.

Fetches the Debian documentation packages bench/pdf_fidelity.py reads (plus the R FAQ and the CTeX FAQ, the
documents the offline writer was first seen to fail on) with `apt-get download`; nothing is installed or
committed. Each PDF gets its own suite, offline unless --llm names a model:

    python3 bench/question_quality.py --ragtester target/release/ragtester [--llm offline] [--json out.json]
"""
import argparse, json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pdf_fidelity import PACKAGES, fetch, label, unique  # noqa: E402

EXTRA_PACKAGES = ["r-doc-pdf", "texlive-lang-chinese"]
# From the extra packages, only the FAQs (texlive-lang-chinese ships hundreds of PDFs).
WANTED = ("R-FAQ.pdf", "ctex-faq.pdf")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ragtester", default="target/release/ragtester")
    ap.add_argument("--llm", default="offline")
    ap.add_argument("--n-test", type=int, default=24)
    ap.add_argument("--json")
    ap.add_argument("--work", help="reuse this folder for downloads")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="qqbench-")
    os.makedirs(work, exist_ok=True)
    PACKAGES.extend(EXTRA_PACKAGES)
    pdfs = [p for p in unique(fetch(work)) if "texlive" not in p or p.endswith(WANTED)]
    pdfs = [p for p in pdfs if "/R/doc/" not in p and "r-doc-pdf" not in p or p.endswith(WANTED)]
    rows, totals = [], {"cases": 0, "positive": 0, "prose": 0, "cloze": 0, "dup": 0, "words": 0.0, "bare": 0}
    print(f"{'file':44} {'cases':>5} {'prose':>6} {'cloze':>6} {'dups':>5} {'words':>6} {'bare':>5}")
    for pdf in pdfs:
        out = os.path.join(work, "suites", label(pdf, work).replace("/", "_") + ".jsonl")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        run = subprocess.run([args.ragtester, "--no-cache", "generate", "--docs", pdf, "--out", out,
                              "--llm", args.llm, "--n-test", str(args.n_test)],
                             capture_output=True, text=True)
        if run.returncode not in (0, 3):
            print(f"{label(pdf, work):44} failed: {run.stderr.strip().splitlines()[-1:]}", flush=True)
            continue
        with open(out[:-len(".jsonl")] + ".report.json", encoding="utf-8") as fh:
            q = json.load(fh)["quality"]
        row = {"file": label(pdf, work), **q}
        rows.append(row)
        positive = q["positive_cases"]
        totals["cases"] += q["cases"]
        totals["positive"] += positive
        totals["prose"] += round(q["positive_in_prose"] * positive)
        totals["cloze"] += round(q["cloze"] * q["cases"])
        totals["dup"] += round(q["duplicates"] * q["cases"])
        totals["words"] += q["mean_question_words"] * q["cases"]
        totals["bare"] += round(q["heading_or_number_answers"] * positive)
        print(f"{row['file']:44} {q['cases']:5} {q['positive_in_prose']:6.1%} {q['cloze']:6.1%} "
              f"{q['duplicates']:5.1%} {q['mean_question_words']:6.1f} {q['heading_or_number_answers']:5.1%}",
              flush=True)
    n, p = max(totals["cases"], 1), max(totals["positive"], 1)
    overall = {"cases": totals["cases"], "positive_in_prose": totals["prose"] / p, "cloze": totals["cloze"] / n,
               "duplicates": totals["dup"] / n, "mean_question_words": totals["words"] / n,
               "heading_or_number_answers": totals["bare"] / p}
    print(f"{'all':44} {overall['cases']:5} {overall['positive_in_prose']:6.1%} {overall['cloze']:6.1%} "
          f"{overall['duplicates']:5.1%} {overall['mean_question_words']:6.1f} "
          f"{overall['heading_or_number_answers']:5.1%}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"llm": args.llm, "n_test": args.n_test, "files": rows, "all": overall}, fh, indent=2)


if __name__ == "__main__":
    main()
