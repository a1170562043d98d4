#!/bin/sh
# The real tools the interoperability tests meet (crates/ragtester/tests/real_tools.rs), in a Python
# environment of their own; prints its interpreter on the last line, for RAGTESTER_TOOLS_PYTHON:
#   llama-cpp-python[server]  llama.cpp's OpenAI-compatible server; PyPI ships it as source only, so it is
#                             compiled once (about 6 minutes on two cores) and the wheel kept
#   ragas, deepeval           the peers' own dataset readers and writers
#   langchain-core, llama-index-core, pytest, pytest-xdist, pandas
#                             what the Python module's tests meet (python/tests: the adapters on the
#                             frameworks' own offline fakes, the pytest plugin in a real session)
#   opentelemetry-sdk and its OTLP/HTTP exporter
#                             the instrumented sample target of the trace tests
#   chromadb                  Chroma's server (`chroma run`), in an environment of its own (chroma-venv:
#                             its pins do not mix with the peers'), for the vector-store tests
# Versions are pinned in scripts/real-tools.constraints.txt. The environment and the wheel live in
# RAGTESTER_TOOLS_DIR (default ~/.cache/ragtester/tools) and are reused while they still import.
set -eu
cd "$(dirname "$0")/.."
tools="${RAGTESTER_TOOLS_DIR:-$HOME/.cache/ragtester/tools}"
chroma_version=1.5.9
chroma="$tools/chroma-venv/bin/chroma"
if ! [ -x "$chroma" ] || ! "$tools/chroma-venv/bin/python" -c "import chromadb, sys; sys.exit(chromadb.__version__ != '$chroma_version')" 2>/dev/null; then
  rm -rf "$tools/chroma-venv"
  python3 -m venv "$tools/chroma-venv"
  "$tools/chroma-venv/bin/python" -m pip install --quiet --disable-pip-version-check "chromadb==$chroma_version" >&2
fi
python="$tools/venv/bin/python"
constraints="$(pwd)/scripts/real-tools.constraints.txt"
stamp="$tools/venv/.constraints"
if [ -x "$python" ] && cmp -s "$constraints" "$stamp" \
  && "$python" -c 'import llama_cpp.server, ragas, deepeval, opentelemetry.exporter.otlp.proto.http, llama_index.core, xdist, pandas' 2>/dev/null; then
  echo "$python"
  exit 0
fi
mkdir -p "$tools/wheels"
if ! ls "$tools/wheels"/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1; then
  # A portable x86-64-v3 build: -march=native would also switch on instructions (AMX) that a virtual
  # machine may report but not run, and the server dies with SIGILL on its first reply.
  case "$(uname -m)" in
    x86_64) cmake_args="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" ;;
    *) cmake_args="" ;;
  esac
  echo "building llama-cpp-python 0.3.36 (once; about 6 minutes on two cores)" >&2
  CMAKE_ARGS="$cmake_args" python3 -m pip wheel --quiet --disable-pip-version-check --no-deps \
    --no-cache-dir -w "$tools/wheels" llama-cpp-python==0.3.36 >&2
fi
rm -rf "$tools/venv"
python3 -m venv "$tools/venv"
"$python" -m pip install --quiet --disable-pip-version-check --find-links "$tools/wheels" \
  -c "$constraints" 'llama-cpp-python[server]' ragas deepeval 'langchain-community<0.4' \
  langchain-core llama-index-core pytest pytest-xdist pandas opentelemetry-sdk opentelemetry-exporter-otlp-proto-http >&2
cp "$constraints" "$stamp"
echo "$python"
