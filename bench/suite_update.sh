#!/usr/bin/env bash
# A suite update against a full generation at paper size (not a timed test): the documents of
# bench/scale.sh (docgen, 90 documents of 2,500 words), a suite of both generators with 50 cases per
# document; then one document edited — a figure changed, a section added — and the suite brought in step
# with `generate --update` against generated afresh on the edited corpus, RUNS times each (wall, peak RSS).
# Then both suites run against the same matrix offline (4 retrievers × 3 top-k × 2 chunkers), judged and
# reported, and the sizes of the run's summary.md and of the diff's Markdown printed (a pull-request
# comment holds 65,536 characters).
#
#   cargo build --release -p ragtester && bench/suite_update.sh [DOCUMENTS] [WORDS] [CASES_PER_DOCUMENT] [RUNS]
set -euo pipefail
documents=${1:-90}
words=${2:-2500}
per_document=${3:-50}
runs=${4:-3}
bin="${CARGO_TARGET_DIR:-target}/release/ragtester"
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"

measure() { # name, command...: wall seconds and peak RSS of one command
  local name=$1
  shift
  /usr/bin/time -f "$name: wall %e s, max RSS %M KB" "$@" >"$work/$name.out" 2>"$work/$name.err" || {
    tail -20 "$work/$name.err" >&2
    exit 1
  }
  grep -E "^$name: wall" "$work/$name.err"
}

"$bin" docgen --count "$documents" --words "$words" --seed 7 --out "$work/docs" >/dev/null 2>&1
generate=(--no-cache generate --strategy ragtester --strategy baseline --n-test "$per_document")
measure first-generation "$bin" "${generate[@]}" --docs "$work/docs" --out "$work/v1.jsonl"
echo "cases: $(wc -l <"$work/v1.jsonl") from $documents documents"

# One document edited: a figure in a sentence a case was written from changed, a section appended.
rm -rf "$work/docs2" && cp -r "$work/docs" "$work/docs2"
doc=$(ls "$work/docs2"/*.md | sort | sed -n "$((documents / 2))p")
python3 - "$doc" "$work/v1.jsonl" <<'PY'
import json, os, re, sys
path, suite = sys.argv[1], sys.argv[2]
name = os.path.basename(path)
docs = [json.loads(l) for l in open(suite.replace(".jsonl", ".documents.jsonl"), encoding="utf-8")]
doc = next(d for d in docs if os.path.basename(d["source"]) == name)
text = open(path, encoding="utf-8").read()
sentences = []
for line in open(suite, encoding="utf-8"):
    case = json.loads(line)
    if case["document_id"] == doc["id"] and len(case["source_spans"]) == 1:
        s = case["source_spans"][0]
        sentence = doc["text"][s["start"]:s["end"]]
        if re.search(r"\d", sentence) and text.count(sentence) == 1:
            sentences.append(sentence)
sentence = sentences[0]
m = re.search(r"\d+", sentence)
edited = sentence[: m.start()] + str(int(m.group()) + 1) + sentence[m.end():]
text = text.replace(sentence, edited) + (
    "\n\n## Service life\n\nThe equipment described here is designed for a service life of 9,400 operating "
    "hours at full load, after which the main bearings are replaced and the unit is inspected again.\n"
)
open(path, "w", encoding="utf-8").write(text)
print(f"edited: «{sentence}» → «{edited}»")
PY

for k in $(seq 1 "$runs"); do
  measure "update-$k" "$bin" "${generate[@]}" --docs "$work/docs2" --update "$work/v1.jsonl" --out "$work/v2.jsonl"
done
grep -h "suite updated" "$work/update-1.err"
for k in $(seq 1 "$runs"); do
  measure "full-$k" "$bin" "${generate[@]}" --docs "$work/docs2" --out "$work/full.jsonl"
done

matrix=(--retriever bm25 --retriever dense --retriever hybrid --retriever hybrid-rerank --top-k 1 --top-k 3
  --top-k 5 --chunker paragraph --chunker fixed --embedder hash --concurrency 8 --quiet)
measure run-before "$bin" run --docs "$work/docs" --suite "$work/v1.jsonl" --out "$work/before" "${matrix[@]}"
measure run-after "$bin" run --docs "$work/docs2" --suite "$work/v2.jsonl" --out "$work/after" "${matrix[@]}"
for run in before after; do
  "$bin" judge "$work/$run" --quiet >/dev/null 2>&1
  "$bin" report "$work/$run" >/dev/null 2>&1
done
"$bin" diff "$work/before" "$work/after" --markdown "$work/diff.md" --json "$work/diff.json" | tail -3
echo "cells after: $(wc -l <"$work/after/answers.jsonl")"
echo "summary.md: $(python3 -c 'import sys; print(len(open(sys.argv[1], encoding="utf-8").read()))' "$work/after/summary.md") characters"
echo "diff markdown: $(python3 -c 'import sys; print(len(open(sys.argv[1], encoding="utf-8").read()))' "$work/diff.md") characters"
echo "work: $work"
