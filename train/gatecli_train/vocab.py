"""Vocabulary trimming: keep the pieces that en/zh/fr text actually uses.

82% of e5-small's fp32 weights are its 250k-row embedding table, mostly pieces of
languages we do not serve. We keep every piece that the texts the pipeline passes (its
training sample and dev/test samples; keeping a piece is not training on it) and a broad
frequency list (``wordfreq`` top words per language) tokenise to, plus the specials, and
remap the embedding rows. Unigram segmentation of any text whose best path uses only kept pieces is
unchanged (removing other pieces only removes alternatives), so kept text tokenises
exactly as before; other text falls back to smaller kept pieces or ``<unk>``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import torch
from tokenizers import Tokenizer
from transformers import BertModel

from gatecli.extras import install_hint
from gatecli_train import tokenizer as tok_lib


@dataclass
class TrimReport:
    old_size: int
    new_size: int


def frequency_words(langs: Iterable[str] = ("en", "fr", "zh"), n: int = 30000) -> list[str]:
    try:
        from wordfreq import top_n_list
    except ImportError as exc:  # pragma: no cover - part of the [train] extra
        raise ImportError(
            f"vocabulary trimming needs wordfreq: {install_hint('train', 'wordfreq')}"
        ) from exc
    words: list[str] = []
    for lang in langs:
        words.extend(top_n_list(lang, n))
    return words


def used_ids(tok: Tokenizer, texts: Iterable[str], batch: int = 4096) -> set[int]:
    ids: set[int] = set(range(len(tok_lib.SPECIALS)))
    buf: list[str] = []
    for t in texts:
        buf.append(t)
        if len(buf) >= batch:
            for e in tok.encode_batch(buf):
                ids.update(e.ids)
            buf = []
    for e in tok.encode_batch(buf):
        ids.update(e.ids)
    return ids


def trim(encoder: BertModel, tok: Tokenizer, texts: Iterable[str]) -> tuple[Tokenizer, TrimReport]:
    """Shrink ``encoder``'s embeddings in place and return the matching tokenizer."""
    vocab = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    model_json = json.loads(tok.to_str())["model"]
    scores = {piece: score for piece, score in model_json["vocab"]}
    keep = sorted(used_ids(tok, texts))
    pieces = [(vocab[i][0], float(scores[vocab[i][0]])) for i in keep]
    new_tok = tok_lib.from_vocab(pieces)
    old = encoder.get_input_embeddings().weight.data
    emb = torch.nn.Embedding(len(keep), old.shape[1], padding_idx=tok_lib.PAD_ID)
    emb.weight.data.copy_(old[torch.tensor(keep)])
    encoder.set_input_embeddings(emb)
    encoder.config.vocab_size = len(keep)
    return new_tok, TrimReport(old_size=len(vocab), new_size=len(keep))
