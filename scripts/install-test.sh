#!/bin/sh
# The two ways to install ragtester, each run as a user would: the wheel (scripts/wheel.sh) pip-installed
# into a fresh virtual environment, and `cargo install --path crates/ragtester`; each installed binary then
# runs `ragtester demo` from an empty folder outside the repository and must write its report. Built with
# the test build's profile (dev) and target folder, so neither compiles the workspace again.
# Then the wheel's Python module: python/tests/smoke.py in the environment that holds only the wheel, and
# the module's tests (python/tests: adapters on LangChain, LlamaIndex, RAGAS and DeepEval, the pytest
# plugin, the guide's blocks) in the real tools' environment (scripts/real-tools.sh), under pytest -n 2.
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

# The Python module with nothing else installed.
(cd "$work" && "$work/venv/bin/python" "$repo/python/tests/smoke.py")

# The Python module against the frameworks it adapts, in the environment that has them.
tools_python="${RAGTESTER_TOOLS_PYTHON:-}"
if [ -z "$tools_python" ]; then
  if [ "${RAGTESTER_REQUIRE_REAL_TOOLS:-0}" = 1 ]; then
    echo "install test: RAGTESTER_TOOLS_PYTHON is not set (scripts/real-tools.sh prints it)" >&2
    exit 1
  fi
  echo "install test: the Python module's framework tests skipped (set RAGTESTER_TOOLS_PYTHON, from scripts/real-tools.sh)"
  exit 0
fi
"$tools_python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps --no-index "$wheel"
(cd "$repo/python/tests" && "$tools_python" -m pytest -q -p no:cacheprovider -n 2 --basetemp="$work/pytest")
