"""Assemble the final output from committed parts: JSONL as is, or Parquet with a fixed schema.

Parquet needs one schema for every part, but records carry maps whose keys vary per row
(``probabilities``, ``event_scores``, ``gate_validation``...). Scalars and label lists get
typed columns; the nested objects are stored as JSON strings, so the schema never depends
on the data. Left out: choosing what to write (:mod:`.pipeline`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from gatecli.extras import install_hint

SCALARS = {
    "line": "int64", "input_file": "int64", "turn_index": "int64", "lang": "string",
    "decision": "string", "confidence": "float64", "next_action": "string",
    "source": "string", "model": "string", "latency_ms": "float64", "error": "string",
}  # fmt: skip
LISTS = ("events", "scenario_tags", "missing_slots")
JSON_COLUMNS = ("probabilities", "event_scores", "scenario_confidence", "gate_validation",
                "guards", "coach", "fallback")  # fmt: skip
PARQUET_ROWS = 8192


def write_final(store: Any, tmp: Path, suffix: str) -> None:
    """Write every committed row of ``store`` to ``tmp`` (JSONL, or Parquet for .parquet/.pq)."""
    if suffix.lower() in (".parquet", ".pq"):
        _write_parquet(store, tmp)
        return
    with open(tmp, "wb") as out:
        for p in store.parts:
            with open(store.part_path(p.index), "rb") as f:
                shutil.copyfileobj(f, out, 1 << 20)


def parquet_schema() -> Any:
    import pyarrow as pa

    fields = [pa.field("id", pa.string())]
    fields += [pa.field(n, getattr(pa, t)()) for n, t in SCALARS.items()]
    fields += [pa.field(n, pa.list_(pa.string())) for n in LISTS]
    fields += [pa.field(n, pa.string()) for n in JSON_COLUMNS]
    return pa.schema(fields)


def flatten(row: dict[str, Any]) -> dict[str, Any]:
    """One output row as a Parquet row (id as string, nested objects as JSON text).

    Example:
        >>> flatten({"id": 7, "line": 1, "error": "bad"})["id"]
        '7'
    """
    out: dict[str, Any] = {"id": None if row.get("id") is None else str(row["id"])}
    for name in SCALARS:
        out[name] = row.get(name)
    for name in LISTS:
        out[name] = row.get(name)
    for name in JSON_COLUMNS:
        out[name] = json.dumps(row[name], ensure_ascii=False) if name in row else None
    return out


def _write_parquet(store: Any, tmp: Path) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise RuntimeError(
            f"Parquet output needs pyarrow: {install_hint('parquet', 'pyarrow')}"
        ) from None
    schema = parquet_schema()
    with pq.ParquetWriter(str(tmp), schema) as writer:
        batch: list[dict[str, Any]] = []
        for raw in store.iter_rows():
            batch.append(flatten(json.loads(raw)))
            if len(batch) >= PARQUET_ROWS:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                batch.clear()
        if batch or not store.parts:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
