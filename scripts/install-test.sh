#!/bin/sh
# The two ways to install ragtester, each run as a user would: the wheel (scripts/wheel.sh) pip-installed
# into a fresh virtual environment, and `cargo install --path crates/ragtester`; each installed binary then
# runs `ragtester demo` from an empty folder outside the repository and must write its report. Built with
# the test build's profile (dev) and target folder, so neither compiles the workspace again.
set -eu
cd "$(dirname "$0")/.."
repo="$(pwd)"
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

demo() { # name, binary: the demo from an empty folder, its report and summary checked
  mkdir -p "$work/$1"
  (cd "$work/$1" && RAGTESTER_CACHE_DIR="$work/$1/cache" "$2" --quiet demo --out out >demo.log 2>&1) || {
    cat "$work/$1/demo.log" >&2
    echo "install test: the demo failed from the $1 install" >&2
    exit 1
  }
  for file in report.html summary.json results.csv junit.xml; do
    [ -s "$work/$1/out/$file" ] || { echo "install test: $1 install's demo wrote no $file" >&2; exit 1; }
  done
  grep -q '"configs"' "$work/$1/out/summary.json" || { echo "install test: $1 summary has no configurations" >&2; exit 1; }
  echo "install test: $1 install ran the demo ($("$2" --version))"
}

# The wheel, in a virtual environment that has nothing else.
wheel="$(PROFILE=dev CARGO_TARGET_DIR="$target_dir" scripts/wheel.sh "$work/wheels" | tail -n 1)"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
[ -x "$work/venv/bin/ragtester" ] || { echo "install test: the wheel put no ragtester on the venv's PATH" >&2; exit 1; }

# cargo install from the checkout (the README's documented command, with --debug for the test profile).
cargo install --quiet --debug --locked --path crates/ragtester --root "$work/cargo" --target-dir "$target_dir"

# The two demos side by side, one a core; either failing fails the test.
demo wheel "$work/venv/bin/ragtester" &
wheel_demo=$!
demo cargo "$work/cargo/bin/ragtester"
wait "$wheel_demo"
