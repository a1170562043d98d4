#!/usr/bin/env python3
"""A question-style retrieval set from public FAQs, in the BEIR layout: each FAQ question is a query, each
answer (without its question) a passage, and a question is relevant to its own answer only.

Sources are Debian packages fetched with `apt-get download` (nothing installed or committed): the Python FAQ
(python3.11-doc, reStructuredText sources; PSF licence), the Debian FAQ (debian-faq, plain text; GPL-2+) and
its Simplified Chinese translation (debian-faq-zh-cn, same licence). Their questions are short
natural-language ones ("How do I copy an object in Python?", "What is the latest version of Debian?",
"什么是 Debian GNU/Linux？"), unlike the keyword queries of Vaswani.

Four sets: python-faq, debian-faq (English), debian-faq-zh (Chinese questions over Chinese answers) and
debian-faq-zh-en (cross-lingual: the Chinese questions over the English answers, a question relevant to the
English answer of its own section number).

    python3 bench/faq_questions.py OUT_DIR      # writes OUT_DIR/<set>/{corpus,queries}.jsonl, qrels/test.tsv
"""
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

RST_UNDERLINE = re.compile(r"^([=\-^~\"'`#*+])\1{2,}\s*$")
ENDS = ("?", ".", "？", "。")
DEBIAN_HEADING = re.compile(r"^\s*(\d+(?:\.\d+)+)\.?\s+(.*)$")


def fetch(work, package):
    subprocess.run(["apt-get", "download", package], cwd=work, check=True, capture_output=True)
    deb = next(f for f in os.listdir(work) if f.startswith(package + "_") and f.endswith(".deb"))
    subprocess.run(["dpkg-deb", "-x", deb, "x"], cwd=work, check=True)
    return os.path.join(work, "x")


def python_faq(root):
    """(question, answer) pairs from the FAQ's reStructuredText: a heading ending in "?" and the text up to
    the next heading."""
    folder = next(
        os.path.join(d, "faq") for d, subdirs, _ in os.walk(root)
        if d.endswith("_sources") and "faq" in subdirs
    )
    pairs = []
    for name in sorted(os.listdir(folder)):
        lines = open(os.path.join(folder, name), encoding="utf-8").read().splitlines()
        heads = [i for i in range(1, len(lines)) if RST_UNDERLINE.match(lines[i]) and lines[i - 1].strip()]
        for n, i in enumerate(heads):
            title = lines[i - 1].strip()
            end = heads[n + 1] - 1 if n + 1 < len(heads) else len(lines)
            body = "\n".join(l for l in lines[i + 1:end] if not l.startswith(".. ")).strip()
            if title.endswith("?") and len(body.split()) >= 8:
                pairs.append((title, body))
    return pairs


def debian_faq(root, language="en"):
    """(section number, question, answer) from the plain-text FAQ in a language: a numbered heading (possibly
    over two lines) ending in "?" (or "？"), and the text up to the next numbered heading."""
    name = f"debian-faq.{language}.txt.gz"
    path = next(os.path.join(d, f) for d, _, files in os.walk(root) for f in files if f == name)
    lines = gzip.open(path, "rt", encoding="utf-8").read().splitlines()
    # The table of contents repeats every heading: start after its last entry, at the second "1.1.".
    starts = [i for i, l in enumerate(lines) if DEBIAN_HEADING.match(l) and DEBIAN_HEADING.match(l).group(1) == "1.1"]
    lines = lines[starts[1]:] if len(starts) > 1 else lines
    heads = []
    i = 0
    while i < len(lines):
        m = DEBIAN_HEADING.match(lines[i])
        if m and not lines[i].startswith("      "):
            title, j = m.group(2).strip(), i + 1
            # A heading wrapped onto an indented next line (Chinese wraps without a space).
            while j < len(lines) and lines[j].strip() and not title.endswith(ENDS) and j - i < 3:
                joiner = "" if language.startswith("zh") else " "
                title += joiner + lines[j].strip()
                j += 1
            heads.append((i, j, m.group(1), title))
            i = j
        else:
            i += 1
    pairs = []
    for n, (start, body_start, number, title) in enumerate(heads):
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        body = " ".join(l.strip() for l in lines[body_start:end] if l.strip())
        if title.endswith(("?", "？")) and len(body) >= 40:
            pairs.append((number, title, body))
    return pairs


def write(out, name, pairs, corpus=None):
    """A set whose queries are the pairs' questions; its corpus the pairs' answers, or `corpus` (answers by
    id) with each question relevant to the answer of its pair's id."""
    folder = os.path.join(out, name)
    os.makedirs(os.path.join(folder, "qrels"), exist_ok=True)
    with open(os.path.join(folder, "corpus.jsonl"), "w", encoding="utf-8") as c, \
            open(os.path.join(folder, "queries.jsonl"), "w", encoding="utf-8") as q, \
            open(os.path.join(folder, "qrels", "test.tsv"), "w", encoding="utf-8") as r:
        r.write("query-id\tcorpus-id\tscore\n")
        if corpus is None:
            corpus = {f"d{n}": answer for n, (_, answer) in enumerate(pairs)}
            pairs = [(f"d{n}", question) for n, (question, _) in enumerate(pairs)]
        for key, answer in corpus.items():
            c.write(json.dumps({"_id": key, "title": "", "text": answer}, ensure_ascii=False) + "\n")
        for n, (key, question) in enumerate(pairs):
            q.write(json.dumps({"_id": f"q{n}", "text": question}, ensure_ascii=False) + "\n")
            r.write(f"q{n}\t{key}\t1\n")
    print(f"{name}: {len(pairs)} questions → {folder}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    with tempfile.TemporaryDirectory() as work:
        write(out, "python-faq", python_faq(fetch(work, "python3.11-doc")))
        english = debian_faq(fetch(work, "debian-faq"))
        write(out, "debian-faq", [(q, a) for _, q, a in english])
        chinese = debian_faq(fetch(work, "debian-faq-zh-cn"), "zh-cn")
        write(out, "debian-faq-zh", [(q, a) for _, q, a in chinese])
        by_number = {number: answer for number, _, answer in english}
        crossing = [(f"s{number}", q) for number, q, _ in chinese if number in by_number]
        write(out, "debian-faq-zh-en", crossing, {f"s{n}": a for n, a in by_number.items()})


if __name__ == "__main__":
    main()
