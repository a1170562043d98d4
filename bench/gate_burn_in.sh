#!/usr/bin/env bash
# The diff gate's false-fail rate (a burn-in, not a timed test): an unchanged system with a planted flake —
# a command target that answers each question from the suite's own expected answer, and with probability
# FLAKE answers something else instead — run RUNS + 1 times with --repeat REPEATS on the same suite, each run
# diffed against the one before it with `diff --fail-on-regression`. Nothing changed between the runs, so
# every diff that fails is a false fail. Prints the runs' pass rates, each diff's headline, and the share of
# diffs that failed. FLAKY_SHARE (default 1) plants the flake in that share of the cases only, the same cases
# in every run (chosen by the question's text); the others always answer right.
#
#   cargo build -p ragtester && bench/gate_burn_in.sh [RUNS] [REPEATS] [FLAKE] [CASES] [FLAKY_SHARE]
set -euo pipefail
runs=${1:-50}
repeats=${2:-5}
flake=${3:-0.2}
cases=${4:-20}
flaky_share=${5:-1}
bin="${RAGTESTER:-${CARGO_TARGET_DIR:-target}/debug/ragtester}"
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
export RAGTESTER_CACHE_DIR="$work/cache"

if [ ! -f "$work/suite.jsonl" ]; then
"$bin" docgen --count 2 --words 600 --seed 11 --out "$work/docs" >/dev/null 2>&1
"$bin" --no-cache generate --docs "$work/docs" --out "$work/all.jsonl" --n-test 40 >/dev/null 2>&1
# Answerable questions only: a refusal case would pass on the planted wrong answer's refusal too.
python3 - "$work/all.jsonl" "$work/suite.jsonl" "$cases" <<'PY'
import json, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
kept = [l for l in open(src) if not json.loads(l).get("expected_answer", "").startswith(("The information", "信息不足"))]
kept = [l for l in kept if json.loads(l).get("category") not in ("negative",) and not json.loads(l).get("turn")]
open(dst, "w").writelines(kept[:n])
print(f"suite: {len(kept[:n])} answerable cases", file=sys.stderr)
PY
fi
cat >"$work/target.py" <<'PY'
import json, os, random, sys
query = sys.stdin.read().strip()
answers = {}
for line in open(os.environ["BURN_IN_SUITE"]):
    case = json.loads(line)
    answers[case["query"].strip()] = case["expected_answer"]
flake = float(os.environ["BURN_IN_FLAKE"])
share = float(os.environ["BURN_IN_FLAKY_SHARE"])
ordered = sorted(answers)
if query in answers and ordered.index(query) >= round(share * len(ordered)):
    flake = 0.0  # not one of the flaky cases: always right
# A real regression for bench/gate_power.sh: the last BURN_IN_BROKEN cases answered wrongly this often.
broken = int(os.environ.get("BURN_IN_BROKEN", "0"))
if query in answers and broken and ordered.index(query) >= len(ordered) - broken:
    flake = float(os.environ["BURN_IN_BROKEN_FLAKE"])
rng = random.SystemRandom()
right = answers.get(query, "")
answer = right if rng.random() >= flake else "The documents describe the opening ceremony in detail."
print(json.dumps({"answer": answer}))
PY
cat >"$work/project.toml" <<EOF2
[[target]]
name = "flaky"
type = "command"
command = ["python3", "$work/target.py"]
input = "stdin"
answer_pointer = "/answer"
EOF2
export BURN_IN_SUITE="$work/suite.jsonl" BURN_IN_FLAKE="$flake" BURN_IN_FLAKY_SHARE="$flaky_share"
for i in $(seq 0 "$runs"); do
  # A WORK folder of an earlier burn-in keeps its judged runs: only the diffs are taken again.
  [ -f "$work/run$i/verdicts.jsonl" ] && continue
  "$bin" --no-cache run --docs "$work/docs" --suite "$work/suite.jsonl" --config "$work/project.toml" \
    --repeat "$repeats" --out "$work/run$i" >/dev/null 2>&1 || true
  "$bin" judge "$work/run$i" >/dev/null 2>&1 || true
done
failed=0
for i in $(seq 1 "$runs"); do
  if "$bin" diff "$work/run$((i - 1))" "$work/run$i" --fail-on-regression --json "$work/diff$i.json" \
    >"$work/diff$i.txt" 2>&1; then
    verdict=pass
  else
    verdict=FAIL
    failed=$((failed + 1))
  fi
  echo "diff $i: $verdict — $(head -1 "$work/diff$i.txt")"
done
# The same diffs read without any correction across cells: a cell whose drop alone has p <= 0.05.
uncorrected=$(python3 - "$work" "$runs" <<'PY'
import json, sys
work, runs = sys.argv[1], int(sys.argv[2])
failed = 0
for i in range(1, runs + 1):
    d = json.load(open(f"{work}/diff{i}.json"))
    cells = d.get("regressions", []) + d.get("inconclusive", [])
    dropped = [c for c in cells
               if c["passes_after"]["passed"] * c["passes_before"]["of"] < c["passes_before"]["passed"] * c["passes_after"]["of"]]
    failed += any((c.get("p_value") or 1) <= 0.05 for c in dropped)
print(failed)
PY
)
echo "without a correction across cells: $uncorrected of $runs diffs would have failed"
echo "false fails: $failed of $runs diffs ($(python3 -c "print(f'{100*$failed/$runs:.1f}')") %), $cases cases × $repeats repeats, flake $flake"
