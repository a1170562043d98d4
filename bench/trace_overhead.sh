#!/usr/bin/env bash
# What receiving a target's traces costs per call: the instrumented sample service
# (crates/ragtester/tests/real_tools/traced_target.py, OpenTelemetry Python SDK, OTLP/HTTP exporter) run
# against one offline suite twice — its spans received and read (traces = true), and not (traces = false,
# its spans going to a sink that only acknowledges them, so the service exports the same either way) —
# at concurrency 1, RUNS times each, alternating.
# Prints each run's wall time per answered cell and the medians.
#
#   PYTHON=$(scripts/real-tools.sh | tail -1) bench/trace_overhead.sh [RUNS]
set -euo pipefail
runs=${1:-3}
python=${PYTHON:?set PYTHON to the interpreter scripts/real-tools.sh prints}
bin=${RAGTESTER:-${CARGO_TARGET_DIR:-target}/release/ragtester}
work=$(mktemp -d)
sink=
trap 'kill $target $sink 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/docs"
for part in valve strainer seal gauge box motor; do
  printf 'The %s of the Harbor pump is checked every spring. The %s is replaced after 2,000 hours.\n\n' "$part" "$part"
done > "$work/docs/pump.md"
free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
trace_port=$(free_port)
OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$trace_port" \
  "$python" crates/ragtester/tests/real_tools/traced_target.py "$port" "$work/docs/pump.md" &
target=$!
until "$python" -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2>/dev/null; do sleep 0.2; done
"$bin" generate --docs "$work/docs" --out "$work/suite.jsonl" >/dev/null 2>&1
project() {
  cat <<TOML
[run]
concurrency = 1
trace_port = $trace_port

[[target]]
name = "svc"
type = "http"
url = "http://127.0.0.1:$port/traced"
body = '{"query": "{{query}}"}'
answer_pointer = "/answer"
traces = $1
TOML
}
project true > "$work/on.toml"
project false > "$work/off.toml"
declare -a on off
for i in $(seq "$runs"); do
  for mode in on off; do
    rm -rf "$work/run-$mode"
    if [ "$mode" = off ]; then
      "$python" -c '
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class Sink(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200); self.send_header("content-length", "0"); self.end_headers()
HTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()' "$trace_port" &
      sink=$!
      until "$python" -c "import socket; socket.create_connection(('127.0.0.1', $trace_port))" 2>/dev/null; do sleep 0.1; done
    fi
    start=$(date +%s.%N)
    "$bin" run --docs "$work/docs" --suite "$work/suite.jsonl" --config "$work/$mode.toml" \
      --out "$work/run-$mode" >/dev/null 2>&1
    end=$(date +%s.%N)
    if [ "$mode" = off ]; then kill $sink; wait $sink 2>/dev/null || true; sink=; fi
    cells=$(wc -l < "$work/run-$mode/answers.jsonl")
    ms=$(echo "($end - $start) * 1000 / $cells" | bc -l)
    printf '%s run %d: %d cells, %.1f ms a cell\n' "$mode" "$i" "$cells" "$ms"
    if [ "$mode" = on ]; then on+=("$ms"); else off+=("$ms"); fi
  done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf 'median ms a cell: traces received %.1f, ignored %.1f\n' "$(median "${on[@]}")" "$(median "${off[@]}")"
