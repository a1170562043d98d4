#!/bin/sh
# The ragtester wheel (maturin, `bindings = "pyo3"`: the Python module `ragtester`, whose console script
# is the `ragtester` command line), for `pip install`, in OUT (default target/wheels). PROFILE=dev builds it from the test build's artifacts instead of a release build (what the
# install test does, so CI compiles the workspace once). maturin itself comes from PyPI into a virtual
# environment of its own.
#
#   scripts/wheel.sh [OUT]
#   pip install target/wheels/ragtester-*.whl && ragtester demo
set -eu
cd "$(dirname "$0")/.."
out="${1:-target/wheels}"
profile="${PROFILE:-release}"
tools="${RAGTESTER_WHEEL_TOOLS:-$HOME/.cache/ragtester/maturin}"
if [ ! -x "$tools/bin/maturin" ]; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet --disable-pip-version-check 'maturin>=1.9,<2'
fi
# The platform tag is the oldest manylinux the extension's C library symbols allow (it links only libc,
# libm and libgcc_s); auditwheel's check fails the build on anything else.
"$tools/bin/maturin" build --locked --profile "$profile" --auditwheel check --out "$out" >&2
ls "$out"/ragtester-*.whl
