"""The gate network: one shared encoder, mean pooling, four heads keyed by name.

One :class:`Head` class serves every head; ``multilabel`` picks sigmoid/BCE over
softmax/CE. Label lists come from the corpus and catalog at build time and are stored in
the artifact, never here. Records whose label for a head is unknown are masked out of
that head's loss (spec §6) instead of being taught a false "none".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import yaml
from torch import nn
from transformers import BertConfig, BertModel

from gatecli.artifact import DEFAULT_CATALOG


@dataclass(frozen=True)
class HeadDef:
    name: str
    labels: tuple[str, ...]
    multilabel: bool

    @property
    def kind(self) -> str:
        return "multi" if self.multilabel else "single"


class Head(nn.Module):
    """Dropout + linear layer over the pooled sentence vector."""

    def __init__(self, hidden: int, n_labels: int, multilabel: bool, dropout: float = 0.1):
        super().__init__()
        self.multilabel = multilabel
        self.dropout = nn.Dropout(dropout)
        self.proj = nn.Linear(hidden, n_labels)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.proj(self.dropout(pooled))


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Average of the token vectors that are not padding (e5 was trained this way)."""
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-6)


class GateModel(nn.Module):
    """Encoder + heads; ``forward`` returns ``{head_name: logits}``."""

    def __init__(self, encoder: BertModel, heads: list[HeadDef], dropout: float = 0.1):
        super().__init__()
        self.encoder = encoder
        self.head_defs = list(heads)
        hidden = encoder.config.hidden_size
        self.heads = nn.ModuleDict(
            {h.name: Head(hidden, len(h.labels), h.multilabel, dropout) for h in heads}
        )

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> dict[str, torch.Tensor]:
        out = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
        pooled = mean_pool(out.last_hidden_state, attention_mask)
        return {name: head(pooled) for name, head in self.heads.items()}


class ExportWrapper(nn.Module):
    """Tuple outputs in head order, for ``torch.onnx.export`` (which cannot emit dicts)."""

    def __init__(self, model: GateModel):
        super().__init__()
        self.model = model
        self.names = [h.name for h in model.head_defs]

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        logits = self.model(input_ids, attention_mask)
        return tuple(logits[n] for n in self.names)


def masked_losses(
    model: GateModel,
    logits: dict[str, torch.Tensor],
    targets: dict[str, torch.Tensor],
    masks: dict[str, torch.Tensor],
    class_weights: dict[str, torch.Tensor] | None = None,
    pos_weights: dict[str, torch.Tensor] | None = None,
) -> dict[str, torch.Tensor]:
    """Per-head mean loss over the rows whose label is known for that head.

    ``targets[name]`` is a class index (single) or a 0/1 matrix (multi); ``masks[name]`` is a
    bool vector, True where the label is known. A head with no known rows gives 0.
    """
    losses: dict[str, torch.Tensor] = {}
    for h in model.head_defs:
        mask = masks[h.name]
        if not bool(mask.any()):
            losses[h.name] = logits[h.name].sum() * 0.0
            continue
        z, y = logits[h.name][mask], targets[h.name][mask]
        if h.multilabel:
            pw = None if pos_weights is None else pos_weights.get(h.name)
            # Summed over labels, averaged over rows: a mean over 18 mostly-negative labels
            # divides each positive's gradient by 18, and the first gate-small run's events
            # head barely learned (test events micro-F1 0.59) while the decision head did.
            losses[h.name] = (
                nn.functional.binary_cross_entropy_with_logits(
                    z, y.float(), pos_weight=pw, reduction="none"
                )
                .sum(-1)
                .mean()
            )
        else:
            w = None if class_weights is None else class_weights.get(h.name)
            losses[h.name] = nn.functional.cross_entropy(z, y.long(), weight=w)
    return losses


def heads_match(specs: Any, heads: list[HeadDef]) -> bool:
    """Whether a model folder's heads (``gatecli.json``: name -> spec with ``labels``) are
    ``heads`` with the same labels in the same order (what its logits' columns mean)."""
    return {n: list(h.labels) for n, h in specs.items()} == {h.name: list(h.labels) for h in heads}


def head_defs_from_catalog(catalog: dict) -> list[HeadDef]:
    """The four heads with their label lists, read from a catalog dict (catalog.yaml)."""
    return [
        HeadDef("decision", tuple(catalog["decisions"]), multilabel=False),
        HeadDef("events", tuple(e["name"] for e in catalog["events"]), multilabel=True),
        HeadDef("scenario_tags", tuple(catalog["scenario_tags"]), multilabel=True),
        HeadDef("missing_slots", tuple(catalog["missing_slots"]), multilabel=True),
    ]


def default_catalog() -> dict[str, Any]:
    """The catalog every training run builds its heads and input template from (the one
    ``gatecli_train.export`` ships into the folder), read in one place."""
    catalog: dict[str, Any] = yaml.safe_load(DEFAULT_CATALOG.read_text(encoding="utf-8"))
    return catalog


def default_head_defs() -> list[HeadDef]:
    """:func:`head_defs_from_catalog` of :func:`default_catalog`."""
    return head_defs_from_catalog(default_catalog())


def keep_layers(encoder: BertModel, layers: tuple[int, ...] | list[int]) -> BertModel:
    """Drop encoder layers in place, keeping ``layers`` in order (a shallower student
    initialised from the teacher's own layers)."""
    if layers:
        encoder.encoder.layer = nn.ModuleList([encoder.encoder.layer[i] for i in layers])
        encoder.config.num_hidden_layers = len(layers)
    return encoder


def tiny_encoder(vocab_size: int, max_positions: int = 512) -> BertModel:
    """A randomly initialised 2-layer BERT for plumbing tests (never for quality claims)."""
    cfg = BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
        type_vocab_size=1,
        pad_token_id=1,
    )
    return BertModel(cfg, add_pooling_layer=False)
