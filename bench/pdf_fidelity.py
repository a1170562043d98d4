#!/usr/bin/env python3
"""PDF extraction fidelity and speed: ragtester against poppler's pdftotext, per file.

Downloads documentation packages with `apt-get download` (nothing is installed or committed), extracts their
PDFs, and reports word-level F1 between the two texts (CJK counted by character) and the median time per page
over --runs runs of each tool. Needs poppler-utils (pdftotext, pdfinfo) and a release build of ragtester.

    python3 bench/pdf_fidelity.py --ragtester target/release/ragtester [--runs 3] [--json out.json] \
        [--extra crates/ragtester-ingest/tests/fixtures/tex-cjk-no-tounicode.pdf]
"""
import argparse, collections, gzip, hashlib, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

PACKAGES = [
    "debmake-doc", "debian-reference-en", "debian-reference-zh-cn", "gnuplot-doc", "camlidl-doc",
    "auto-multiple-choice-doc-pdf", "docbook-xsl-doc-pdf",
]
CJK = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af])")


def tokens(text):
    # Each CJK character is a token of its own; other words are runs of letters and digits.
    return collections.Counter(t.lower() for t in re.findall(r"[^\W_]+", CJK.sub(r" \1 ", text)))


def f1(reference, candidate):
    overlap = sum((reference & candidate).values())
    if not reference and not candidate:
        return 1.0
    p = overlap / max(1, sum(candidate.values()))
    r = overlap / max(1, sum(reference.values()))
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def timed_side_by_side(commands, runs):
    """Median wall time of each command over `runs` rounds; the commands take turns within each round, so a
    slow spell of the machine falls on both. Returns the medians and each command's last output."""
    times, outs = [[] for _ in commands], [None] * len(commands)
    for _ in range(runs):
        for i, cmd in enumerate(commands):
            t = time.perf_counter()
            outs[i] = subprocess.run(cmd, check=True, capture_output=True)
            times[i].append(time.perf_counter() - t)
    return [statistics.median(t) for t in times], outs


def fetch(work):
    pdfs = []
    for pkg in PACKAGES:
        r = subprocess.run(["apt-get", "download", pkg], cwd=work, capture_output=True)
        if r.returncode != 0:
            print(f"skip {pkg}: {r.stderr.decode().strip()}", file=sys.stderr)
    for deb in sorted(f for f in os.listdir(work) if f.endswith(".deb")):
        subprocess.run(["dpkg-deb", "-x", deb, "x"], cwd=work, check=True)
    for root, _, files in os.walk(os.path.join(work, "x")):
        for f in sorted(files):
            path = os.path.join(root, f)
            if f.endswith(".pdf.gz"):
                with gzip.open(path) as src, open(path[:-3], "wb") as dst:
                    shutil.copyfileobj(src, dst)
                path = path[:-3]
            if path.endswith(".pdf") and path not in pdfs:
                pdfs.append(path)
    return pdfs


def unique(paths):
    """Drop files whose bytes equal an earlier one's (docbook-xsl ships one reference.pdf three times)."""
    seen, kept = set(), []
    for path in paths:
        with open(path, "rb") as fh:
            digest = hashlib.sha256(fh.read()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            kept.append(path)
    return kept


def label(path, work):
    """The file name, with its package folder where the name alone says little (reference.pdf)."""
    rel = os.path.relpath(path, os.path.join(work, "x", "usr", "share"))
    parts = rel.split(os.sep)
    if rel.startswith("..") or len(parts) < 3:
        return os.path.basename(path)
    return f"{parts[1]}/{parts[-1]}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ragtester", default="target/release/ragtester")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--work", help="reuse this folder for downloads")
    ap.add_argument("--extra", action="append", default=[],
                    help="another PDF to include (repeatable), e.g. crates/ragtester-ingest/tests/fixtures/*.pdf")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="pdfbench-")
    os.makedirs(work, exist_ok=True)
    pdfs = unique(fetch(work) + args.extra)
    rows = []
    print(f"{'file':44} {'pages':>5} {'F1':>6} {'ragtester ms/p':>14} {'pdftotext ms/p':>14} {'ratio':>6}")
    for pdf in pdfs:
        info = subprocess.run(["pdfinfo", pdf], capture_output=True, text=True).stdout
        pages = int(re.search(r"Pages:\s+(\d+)", info).group(1)) if "Pages:" in info else 1
        out_dir = os.path.join(work, "out")
        (t_pop, t_rag), (out, _) = timed_side_by_side([
            ["pdftotext", "-enc", "UTF-8", pdf, "-"],
            [args.ragtester, "ingest", pdf, "--out", out_dir, "--keep-running-lines"],
        ], args.runs)
        reference = out.stdout.decode("utf-8", "replace")
        with open(os.path.join(out_dir, "documents.jsonl"), encoding="utf-8") as fh:
            text = json.loads(fh.readline())["text"]
        score = f1(tokens(reference), tokens(text))
        row = {
            "file": label(pdf, work), "pages": pages, "f1": round(score, 4),
            "ragtester_ms_per_page": round(1000 * t_rag / pages, 2),
            "pdftotext_ms_per_page": round(1000 * t_pop / pages, 2),
        }
        row["ratio"] = round(row["ragtester_ms_per_page"] / max(row["pdftotext_ms_per_page"], 1e-9), 2)
        rows.append(row)
        print(f"{row['file']:44} {pages:5} {score:6.3f} {row['ragtester_ms_per_page']:14.2f} "
              f"{row['pdftotext_ms_per_page']:14.2f} {row['ratio']:6.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"runs": args.runs, "files": rows}, fh, indent=2)


if __name__ == "__main__":
    main()
