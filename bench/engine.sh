#!/usr/bin/env bash
# The execution-engine benchmark: ragtester's run loop and the leanest asyncio client (bench/engine_client.py)
# make the same number of chat calls at concurrency 32 against one scripted OpenAI-compatible server that
# answers each after exactly LATENCY ms, in one session, alternating, RUNS times each.
#
#   cargo build --release -p ragtester && cargo build --release -p ragtester-testkit --example scripted_server
#   python3 -m venv .bench-venv && .bench-venv/bin/pip install aiohttp
#   PYTHON=.bench-venv/bin/python bench/engine.sh [RUNS] [LATENCY_MS] [FAIL_PERCENT]
set -euo pipefail
runs=${1:-3}
latency=${2:-100}
fail=${3:-0}
python=${PYTHON:-python3}
bin=target/release/ragtester
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT

target/release/examples/scripted_server "$latency" "$fail" >"$work/url" &
server=$!
while [ ! -s "$work/url" ]; do sleep 0.05; done
base=$(head -1 "$work/url")

# 128 cases × top-k 1…16 = 2,048 cells, every prompt different.
"$bin" --no-cache generate --docs examples/corpus --strategy ragtester --strategy baseline --n-test 8 \
  --out "$work/suite.jsonl" 2>/dev/null
topk=()
for k in $(seq 1 16); do topk+=(--top-k "$k"); done
cells=$(( $(wc -l <"$work/suite.jsonl") * 16 ))
echo "cells: $cells; ideal wall: $(echo "scale=2; $cells * $latency / 1000 / 32" | bc) s"

for i in $(seq 1 "$runs"); do
  rm -rf "$work/run"
  /usr/bin/time -f "ragtester run $i: wall %e s, user %U s, sys %S s, max RSS %M KB" \
    env OPENAI_BASE_URL="$base" RAGTESTER_HTTP_TIMEOUT_S="${HTTP_TIMEOUT_S:-120}" "$bin" --no-cache run \
    --docs examples/corpus --suite "$work/suite.jsonl" --out "$work/run" --llm openai:bench \
    --retriever bm25 "${topk[@]}" --concurrency 32 --quiet 2>&1 | grep -E "ragtester run|ran " || true
  # The reference client does not retry: it runs only against a server that does not fail.
  if [ "$fail" = 0 ]; then
    /usr/bin/time -f "aiohttp client $i: wall %e s, user %U s, sys %S s, max RSS %M KB" \
      "$python" bench/engine_client.py "$base" "$cells" 32 2>&1
  else
    echo "answers: $(wc -l <"$work/run/answers.jsonl"), recorded errors: $(grep -c '"error":"' "$work/run/answers.jsonl" || true)"
  fi
done
