#!/usr/bin/env bash
# A million chunks (not a timed test): `ragtester bench index` over a synthetic Zipf corpus, each index in
# a process of its own so its peak memory is its own — BM25 (tantivy, on disk as a run's cache keeps it),
# the `hash` embedder searched exactly and through an HNSW graph, and the same vectors in a Chroma server (whose own peak memory
# is read from /proc). Sizes are given as arguments, so the growth from one size to the next shows whether
# anything is worse than linear.
#
#   cargo build --release -p ragtester
#   bench/million.sh [CHUNKS...]            # default: 100000 1000000
#   INDEXES="bm25 exact hnsw" bench/million.sh   # leave out Chroma (it needs scripts/real-tools.sh's chroma-venv)
set -euo pipefail
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 1000000)
indexes=${INDEXES:-bm25 exact hnsw chroma}
queries=${QUERIES:-1000}
target=${CARGO_TARGET_DIR:-target}
bin="$target/release/ragtester"
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
chroma_bin=${CHROMA:-$HOME/.cache/ragtester/tools/chroma-venv/bin/chroma}
server=""
trap 'kill $server 2>/dev/null || true' EXIT

one() { # size, index spec, label
  local size=$1 spec=$2 label=$3
  /usr/bin/time -f "%e %M" -o "$work/time" "$bin" bench index --chunks "$size" --index "$spec" \
    --queries "$queries" --work "$work/bm25-$size" --json "$work/$label-$size.json" >"$work/$label-$size.out" \
    2>"$work/$label-$size.err" || {
    tail -20 "$work/$label-$size.err" >&2
    exit 1
  }
  read -r wall rss <"$work/time"
  echo "$label, $size chunks: $(cat "$work/$label-$size.out") | process wall ${wall} s, max RSS $((rss / 1024)) MiB"
}

for size in "${sizes[@]}"; do
  for index in $indexes; do
    case $index in
      chroma)
        port=$((20000 + RANDOM % 20000))
        rm -rf "$work/chroma-$size"
        "$chroma_bin" run --path "$work/chroma-$size" --host 127.0.0.1 --port "$port" >"$work/chroma-$size.log" 2>&1 &
        server=$!
        until curl -sf "http://127.0.0.1:$port/api/v2/heartbeat" >/dev/null; do sleep 0.2; done
        one "$size" "chroma:http://127.0.0.1:$port" chroma
        echo "chroma server, $size chunks: peak RSS $(awk '/VmHWM/ {print int($2 / 1024)}' /proc/$server/status) MiB, data $(du -sm "$work/chroma-$size" | cut -f1) MiB"
        kill $server
        wait $server 2>/dev/null || true
        server=""
        ;;
      *) one "$size" "$index" "$index" ;;
    esac
  done
done
echo "records in $work"
