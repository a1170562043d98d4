#!/usr/bin/env bash
# Local GGUF decoding against llama.cpp on the same file and the same prompts, in one session: ragtester's
# in-process runner (the chat_speed example, fed run numbers on its standard input) and llama-cpp-python's
# OpenAI-compatible server (default threads). RUNS greedy replies of at most MAX_TOKENS to a 210-token
# question about a passage, every prompt different from the last so neither side reuses a cached prefix,
# the two sides alternating prompt by prompt (which goes first swaps every run) so that a slower or faster
# spell of the machine falls on both. Reply tokens per second count prompt processing. Then each side
# RUNS times with one prompt repeated: its prefix-cache speed-up.
#
#   cargo build --release -p ragtester-gguf --example chat_speed
#   PYTHON=$(scripts/real-tools.sh | tail -1) bench/local_speed.sh MODEL.gguf [MAX_TOKENS] [RUNS]
set -euo pipefail
model=${1:?usage: bench/local_speed.sh MODEL.gguf [MAX_TOKENS] [RUNS]}
max_tokens=${2:-64}
runs=${3:-15}
python=${PYTHON:?set PYTHON to the interpreter scripts/real-tools.sh prints}
runner=${CHAT_SPEED:-${CARGO_TARGET_DIR:-target}/release/examples/chat_speed}
work=$(mktemp -d)
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$python" -m llama_cpp.server --model "$model" --model_alias bench --host 127.0.0.1 --port "$port" \
  --n_ctx 4096 >"$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
until "$python" -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2>/dev/null; do sleep 0.2; done

"$python" - "$port" "$max_tokens" "$runs" "$runner" "$model" <<'PY'
import json, re, statistics, subprocess, sys, time, urllib.request
port, max_tokens, runs, runner, model = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
passage = ("The battery of the e-bike is covered for 24 months or 500 charge cycles, whichever comes first. "
           "Damage from water immersion or from third-party chargers is not covered. ") * 4
ours = subprocess.Popen([runner, model, str(max_tokens), "stdin"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
print("ragtester:", ours.stdout.readline().strip())

def ragtester(run):
    ours.stdin.write(f"{run}\n")
    ours.stdin.flush()
    line = ours.stdout.readline().strip()
    return float(re.search(r"([\d.]+) reply tokens/s", line).group(1)), line

def llama(run):
    body = {"model": "bench", "temperature": 0, "max_tokens": max_tokens, "messages": [
        {"role": "system", "content": f"Run {run}. Answer from the passage only."},
        {"role": "user", "content": f"Passage: {passage}\n\nQuestion: How long is the battery covered, and what is excluded? Explain in detail."}]}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json"})
    t = time.perf_counter()
    usage = json.load(urllib.request.urlopen(request))["usage"]
    s = time.perf_counter() - t
    rate = usage["completion_tokens"] / s
    return rate, (f"{usage['prompt_tokens']} prompt + {usage['completion_tokens']} reply tokens in {s:.2f} s: "
                  f"{rate:.1f} reply tokens/s")

def summary(name, rates):
    print(f"{name}: median {statistics.median(rates):.1f} reply tokens/s over {len(rates)} runs "
          f"(spread {min(rates):.1f}-{max(rates):.1f})")

ragtester(0), llama(0)  # warm-up, not counted
print("== fresh prompts, the two sides alternating")
mine, theirs = [], []
for run in range(1, runs + 1):
    for side in ((ragtester, llama) if run % 2 else (llama, ragtester)):
        rate, line = side(run)
        (mine if side is ragtester else theirs).append(rate)
        print(f"run {run:>2} {'ragtester' if side is ragtester else 'llama.cpp':<9} {line}")
summary("ragtester", mine)
summary("llama.cpp", theirs)
pairs = [a / b for a, b in zip(mine, theirs)]
print(f"ratio of medians {statistics.median(mine) / statistics.median(theirs):.2f}x; "
      f"median of per-run ratios {statistics.median(pairs):.2f}x (spread {min(pairs):.2f}-{max(pairs):.2f}); "
      f"ragtester ahead in {sum(p > 1 for p in pairs)} of {len(pairs)} runs")
print("== the same prompt again (each side's prompt-prefix cache; the first repeat teaches it)")
for name, side in (("ragtester", ragtester), ("llama.cpp", llama)):
    side(runs)
    summary(name, [side(runs)[0] for _ in range(runs)])
ours.stdin.close()
ours.wait()
PY
