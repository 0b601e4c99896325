"""What vocabulary trimming costs: the same trained weights with e5's full 250k vocabulary.

A run trained with frozen word embeddings holds rows of e5's own table, so putting the full
table and tokenizer back gives the model that trimming approximates; ``gatecli eval`` on
both folders measures the quality change, and :func:`segmentation_change` counts the turns
whose pieces differ (they fall back to smaller pieces or ``<unk>``).

Usage:
    python -m gatecli_train.untrimmed --run runs/gate-small-distilled \\
        --model models/gatecli_models/gate-small --out artifacts/gate-small-untrimmed
    gatecli eval --model artifacts/gate-small-untrimmed --suite all --json untrimmed.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import torch

from gatecli import artifact
from gatecli.records import read_jsonl
from gatecli.template import serialize
from gatecli_train import convert_e5, export, pipeline
from gatecli_train.calibrate import folder_calibration
from gatecli_train.config import ExportConfig
from gatecli_train.model import default_head_defs


def _texts(path: Path, template: dict[str, Any], limit: int = 0) -> list[str]:
    texts = [serialize(r["input"], template) for r in read_jsonl(path)]
    return texts[:limit] if limit else texts


def segmentation_change(trimmed: Any, full: Any, texts: list[str]) -> dict[str, float]:
    """Share of texts segmented differently by the trimmed tokenizer, and with ``<unk>``."""
    unk = trimmed.token_to_id("<unk>")
    differ = with_unk = 0
    for text in texts:
        t = trimmed.encode(text)
        differ += t.tokens != full.encode(text).tokens
        with_unk += unk in t.ids
    n = max(1, len(texts))
    return {"n": len(texts), "segmented_differently": differ / n, "with_unk": with_unk / n}


def build(run_dir: Path, model_dir: Path, out_dir: Path, parity: list[str]) -> dict[str, Any]:
    """Write ``out_dir``: the run's weights with the full table, the shipped calibration."""
    model, trimmed = pipeline.load_run_model(run_dir, default_head_defs())
    full_encoder, full_tok = convert_e5.load()
    table = full_encoder.get_input_embeddings().weight.data
    pieces = sorted(trimmed.get_vocab().items(), key=lambda kv: kv[1])
    rows = torch.tensor([full_tok.token_to_id(p) for p, _ in pieces])
    kept = model.encoder.get_input_embeddings().weight.data[torch.tensor([i for _, i in pieces])]
    drift = float((kept - table[rows]).abs().max())
    if drift > 1e-6:
        raise ValueError(f"{run_dir} changed its word embeddings (max {drift:.2e}): not frozen")
    emb = torch.nn.Embedding(table.shape[0], table.shape[1], padding_idx=1)
    emb.weight.data.copy_(table)
    model.encoder.set_input_embeddings(emb)
    model.encoder.config.vocab_size = table.shape[0]
    # Everything but the vocabulary is the folder's: its temperatures and thresholds (per
    # language too), template, catalog and policy, so the two folders differ in the table.
    cfg = artifact.load_model_folder(model_dir).config
    report = export.write_model_folder(
        out_dir, model, full_tok,
        ExportConfig(name=f"{cfg.name}-fullvocab", version=cfg.version),
        max_length=cfg.max_length, parity_texts=parity, calibration=folder_calibration(cfg),
        template=cfg.template, catalog_path=model_dir / artifact.CATALOG_FILE,
        policy_path=model_dir / artifact.POLICY_FILE,
    )  # fmt: skip
    return {"onnx_bytes": report.onnx_bytes, "int8_agreement": report.int8_decision_agreement}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", type=Path, required=True, help="run folder of the trimmed model")
    ap.add_argument("--model", type=Path, required=True, help="its exported model folder")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=Path("data"))
    args = ap.parse_args()
    files = [args.data / "corpus" / "test.jsonl.gz", *sorted((args.data / "eval").glob("*.gz"))]
    template = artifact.load_model_folder(args.model).config.template
    texts = [t for f in files for t in _texts(f, template)]
    result = build(args.run, args.model, args.out, _texts(files[0], template, 1000))
    from tokenizers import Tokenizer

    trimmed = Tokenizer.from_file(str(args.model / "tokenizer.json"))
    full = Tokenizer.from_file(str(args.out / "tokenizer.json"))
    result["segmentation"] = segmentation_change(trimmed, full, texts)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
