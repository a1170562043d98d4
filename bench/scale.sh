#!/usr/bin/env bash
# Paper-scale run (not a timed test): 60 generated documents, about 50 cases each (ragtester + baseline),
# 24 configurations (4 retrievers × 3 top-k × 2 chunkers) against one scripted OpenAI-compatible server that
# answers each call after LATENCY ms, at concurrency 64 — about 70,000 cells. Reports each command's wall
# time and peak memory, the run's wall time against the ideal (calls × latency ÷ concurrency), and how long
# the web UI takes to open the run (its first results page).
#
#   cargo build --release -p ragtester && cargo build --release -p ragtester-testkit --example scripted_server
#   bench/scale.sh [LATENCY_MS] [DOCUMENTS] [CASES_PER_DOCUMENT] [CONCURRENCY] [WORDS_PER_DOCUMENT]
# SUITE=FILE reuses a suite generated before over the same documents (generation is not what is measured).
set -euo pipefail
latency=${1:-200}
documents=${2:-60}
per_document=${3:-50}
concurrency=${4:-64}
words=${5:-2500}
target=${CARGO_TARGET_DIR:-target}
bin="$target/release/ragtester"
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
server=""
ui=""
trap 'kill $server $ui 2>/dev/null || true' EXIT

measure() { # name, command...: wall seconds and peak RSS of one command
  local name=$1
  shift
  /usr/bin/time -f "$name: wall %e s, max RSS %M KB" "$@" >"$work/$name.out" 2>"$work/$name.err" || {
    tail -20 "$work/$name.err" >&2
    exit 1
  }
  grep -E "^$name: wall" "$work/$name.err"
}

"$target/release/examples/scripted_server" "$latency" >"$work/url" &
server=$!
while [ ! -s "$work/url" ]; do sleep 0.05; done
base=$(head -1 "$work/url")

"$bin" docgen --count "$documents" --words "$words" --seed 7 --out "$work/docs" >/dev/null 2>&1
if [ -n "${SUITE:-}" ]; then
  cp "$SUITE" "$work/suite.jsonl"
else
  measure generate "$bin" --no-cache generate --docs "$work/docs" --out "$work/suite.jsonl" \
    --strategy ragtester --strategy baseline --n-test "$per_document"
fi
cases=$(wc -l <"$work/suite.jsonl")
configs=24
cells=$((cases * configs))
echo "documents: $documents, cases: $cases, configurations: $configs, cells: $cells"

rm -rf "$work/run"
measure run env OPENAI_BASE_URL="$base" "$bin" --no-cache run --docs "$work/docs" --suite "$work/suite.jsonl" \
  --out "$work/run" --llm openai:bench --embedder hash \
  --retriever bm25 --retriever dense --retriever hybrid --retriever hybrid-rerank \
  --top-k 1 --top-k 3 --top-k 5 --chunker paragraph --chunker fixed \
  --concurrency "$concurrency" --quiet
answers=$(wc -l <"$work/run/answers.jsonl")
calls=$(grep -c '"error":null' "$work/run/answers.jsonl" || true)
wall=$(grep -oE "^run: wall [0-9.]+" "$work/run.err" | grep -oE "[0-9.]+$")
ideal=$(echo "scale=3; $calls * $latency / 1000 / $concurrency" | bc)
echo "answers: $answers ($calls without error); ideal wall $ideal s; run/ideal $(echo "scale=3; $wall / $ideal" | bc)"

# Every rule metric and the lexical claim metrics, as the default judge makes them.
measure judge "$bin" --no-cache judge "$work/run" --judge offline --quiet
measure report "$bin" report "$work/run"

# The web UI opening the run: the first results page, timed from the request (the run is loaded on it).
port=$((20000 + RANDOM % 20000))
"$bin" serve --addr "127.0.0.1:$port" --workspace "$work/ws" --run "$work/run" >"$work/serve.log" 2>&1 &
ui=$!
until curl -s -o /dev/null "http://127.0.0.1:$port/"; do sleep 0.1; done
curl -s -o /dev/null -w "web UI, first results page of the run: %{time_total} s\n" \
  "http://127.0.0.1:$port/api/runs/run/results?page=1"
curl -s -o /dev/null -w "web UI, second results page: %{time_total} s\n" \
  "http://127.0.0.1:$port/api/runs/run/results?page=2"
echo "records in $work"
