#!/usr/bin/env bash
# The diff gate's power beside its false-fail rate: in the folder of a burn-in (bench/gate_burn_in.sh, same
# WORK, same suite and command target, so the same configuration), RUNS runs of the system with a real
# regression — its last BROKEN cases answered wrongly with probability BROKEN_FLAKE, the rest as in the
# burn-in — each diffed against burn-in run i with `diff --fail-on-regression`, with and without --strict.
# Prints how many diffs caught it each way and how the broken cells were called. FIRST (default 1) is the
# first burn-in run diffed against.
#
#   WORK=<burn-in folder> bench/gate_power.sh [RUNS] [BROKEN] [BROKEN_FLAKE] [REPEATS] [FLAKE] [FLAKY_SHARE]
set -euo pipefail
runs=${1:-20}
broken=${2:-1}
broken_flake=${3:-0.8}
repeats=${4:-5}
bin="${RAGTESTER:-${CARGO_TARGET_DIR:-target}/debug/ragtester}"
work=${WORK:?WORK names a burn-in folder}
grep -q BURN_IN_BROKEN "$work/target.py" || { echo "run bench/gate_burn_in.sh on $work first" >&2; exit 2; }
export RAGTESTER_CACHE_DIR="$work/cache" BURN_IN_SUITE="$work/suite.jsonl" BURN_IN_FLAKE="${5:-0.2}" \
  BURN_IN_FLAKY_SHARE="${6:-1}" BURN_IN_BROKEN="$broken" BURN_IN_BROKEN_FLAKE="$broken_flake"
caught=0
strict=0
for i in $(seq 1 "$runs"); do
  after="$work/broken-$broken-$broken_flake-$i"
  if [ ! -f "$after/verdicts.jsonl" ]; then
    "$bin" --no-cache run --docs "$work/docs" --suite "$work/suite.jsonl" --config "$work/project.toml" \
      --repeat "$repeats" --out "$after" >/dev/null 2>&1 || true
    "$bin" judge "$after" >/dev/null 2>&1 || true
  fi
  base="$work/run$((i + ${FIRST:-1} - 1))"
  "$bin" diff "$base" "$after" --fail-on-regression --json "$after.diff.json" >"$after.diff.txt" 2>&1 \
    && verdict=pass || { verdict=CAUGHT; caught=$((caught + 1)); }
  "$bin" diff "$base" "$after" --fail-on-regression --strict >/dev/null 2>&1 || strict=$((strict + 1))
  echo "diff $i: $verdict — $(head -1 "$after.diff.txt")"
done
echo "caught: $caught of $runs diffs; with --strict: $strict of $runs ($broken cases broken at $broken_flake)"
