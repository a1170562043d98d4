#!/usr/bin/env bash
# Local GGUF decoding against llama.cpp on the same file and the same prompts, in one session: ragtester's
# in-process runner (the chat_speed example) and llama-cpp-python's OpenAI-compatible server (default
# threads), each RUNS greedy replies of at most MAX_TOKENS to a 210-token question about a passage, every
# prompt different from the last so neither side reuses a cached prefix. Reply tokens per second count
# prompt processing. Then each side once more with one prompt repeated: its prefix-cache speed-up.
#
#   cargo build --release -p ragtester-gguf --example chat_speed
#   PYTHON=$(scripts/real-tools.sh | tail -1) bench/local_speed.sh MODEL.gguf [MAX_TOKENS] [RUNS]
set -euo pipefail
model=${1:?usage: bench/local_speed.sh MODEL.gguf [MAX_TOKENS] [RUNS]}
max_tokens=${2:-64}
runs=${3:-5}
python=${PYTHON:?set PYTHON to the interpreter scripts/real-tools.sh prints}
work=$(mktemp -d)
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$python" -m llama_cpp.server --model "$model" --model_alias bench --host 127.0.0.1 --port "$port" \
  --n_ctx 4096 >"$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
until "$python" -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2>/dev/null; do sleep 0.2; done

echo "== ragtester (in-process, candle)"
"${CHAT_SPEED:-${CARGO_TARGET_DIR:-target}/release/examples/chat_speed}" "$model" "$max_tokens" "$runs"

echo "== llama.cpp (llama-cpp-python server)"
"$python" - "$port" "$max_tokens" "$runs" <<'PY'
import json, sys, time, urllib.request
port, max_tokens, runs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
passage = ("The battery of the e-bike is covered for 24 months or 500 charge cycles, whichever comes first. "
           "Damage from water immersion or from third-party chargers is not covered. ") * 4
def ask(run, show=True):
    body = {"model": "bench", "temperature": 0, "max_tokens": max_tokens, "messages": [
        {"role": "system", "content": f"Run {run}. Answer from the passage only."},
        {"role": "user", "content": f"Passage: {passage}\n\nQuestion: How long is the battery covered, and what is excluded? Explain in detail."}]}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json"})
    t = time.perf_counter()
    usage = json.load(urllib.request.urlopen(request))["usage"]
    s = time.perf_counter() - t
    if show:
        print(f"{usage['prompt_tokens']} prompt + {usage['completion_tokens']} reply tokens in {s:.2f} s: "
              f"{usage['completion_tokens'] / s:.1f} reply tokens/s")
ask(0, show=False)  # warm-up, not counted
for run in range(1, runs + 1):
    ask(run)
print("== llama.cpp, the same prompt again (its prompt-prefix cache)")
for _ in range(runs):
    ask(runs)
PY
