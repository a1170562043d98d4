#!/bin/sh
# Leave-one-set-out figures of a judge profile (docs/benchmarks.md): for each labels file, a profile fitted
# on every other file (`ragtester calibrate`), then measured on the file it never saw (`ragtester bench
# oracle --labels`, which also names the best single signal on that file).
#
#   bench/labels/leave_one_set_out.sh OUT_DIR halluqa.labels.jsonl expertqa.labels.jsonl begin.labels.jsonl wice.labels.jsonl
#
# Writes OUT_DIR/without-NAME.json (the profile) and OUT_DIR/NAME.txt / NAME.json (its figures on NAME).
set -eu
ragtester="${RAGTESTER:-ragtester}"
out="$1"
shift
mkdir -p "$out"
for held in "$@"; do
  name="$(basename "$held" .labels.jsonl)"
  rest=""
  for other in "$@"; do
    [ "$other" = "$held" ] || rest="$rest $other"
  done
  # shellcheck disable=SC2086 # the other files are separate arguments
  "$ragtester" calibrate --folds 2 --labels $rest --out "$out/without-$name.json" >/dev/null
  "$ragtester" bench oracle --labels "$held" --judge-profile "$out/without-$name.json" \
    --json "$out/$name.json" >"$out/$name.txt"
  echo "$name: $(grep -m1 -E 'scores|preferences' "$out/$name.txt" || true)"
done
