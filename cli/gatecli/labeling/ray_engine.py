"""``--engine ray``: the same :func:`~gatecli.labeling.chunk.label_chunk` run by Ray Data.

For clusters. Each window of chunks becomes a Ray Dataset (``from_items``) whose
``map_batches`` runs an actor class holding one Gate per actor (``concurrency`` actors,
one onnxruntime thread each); one chunk is one batch, so results come back as whole
chunks and are committed in input order by the same store as the local engine. Records
travel as JSON text so Arrow never has to infer a schema for nested, varying fields.
On one machine plain processes are faster (~3.5 s start-up, more memory); see the README.
Left out: reading files on the cluster (inputs are read by the driver, in order, which is
what makes resume count-based).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

from gatecli.extras import install_hint

WINDOW_CHUNKS_PER_ACTOR = 4


class GateActor:
    """A Ray Data callable class: loads the Gate once, labels one chunk per batch."""

    def __init__(
        self, model: str, batch_size: int, review_size: int, llm: dict[str, Any] | None = None
    ) -> None:
        from gatecli.gate import Gate
        from gatecli.llm.escalate import make_escalator

        self.gate = Gate(model, intra_op_threads=1, batch_size=batch_size)
        self.review_size = review_size
        self.escalator = make_escalator(self.gate, **llm) if llm is not None else None

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        from gatecli.labeling.chunk import label_chunk

        seqs, texts, stats = [], [], []
        for seq, payload in zip(batch["seq"], batch["items"], strict=True):
            items = [tuple(it) for it in json.loads(payload)]
            text, st = label_chunk(self.gate, items, self.review_size, self.escalator)
            seqs.append(int(seq))
            texts.append(text)
            stats.append(json.dumps(st, ensure_ascii=False))
        return {"seq": seqs, "text": texts, "stats": stats}


def run_ray(
    chunks: Iterator[list[Any]],
    model: str,
    workers: int,
    batch_size: int,
    review_size: int,
    llm: dict[str, Any] | None = None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(jsonl_text, stats)`` per chunk, in input order, computed by Ray actors.

    Connects to a running cluster (``RAY_ADDRESS``) or starts a local Ray if none is up.

    Example:
        >>> results = run_ray(iter([[(1, {"user_message": "hi"}, None, None)]]),
        ...                   "models/gatecli_models/gate-small", 2, 32, 0)  # doctest: +SKIP
    """
    try:
        import ray
    except ImportError:
        raise RuntimeError(
            "--engine ray needs Ray: " + install_hint("ray", "'ray[data]'")
        ) from None
    if not ray.is_initialized():
        ray.init(ignore_reinit_error=True, log_to_driver=False)
    window = max(1, workers) * WINDOW_CHUNKS_PER_ACTOR
    seq = 0
    while True:
        block = list(itertools.islice(chunks, window))
        if not block:
            return
        rows = [
            {"seq": seq + k, "items": json.dumps(chunk, ensure_ascii=False)}
            for k, chunk in enumerate(block)
        ]
        seq += len(block)
        ds = ray.data.from_items(rows).map_batches(
            GateActor,
            fn_constructor_kwargs={"model": model, "batch_size": batch_size,
                                   "review_size": review_size, "llm": llm},
            batch_size=1,
            concurrency=max(1, workers),
            num_cpus=1,
        )  # fmt: skip
        done = sorted(ds.take_all(), key=lambda r: int(r["seq"]))
        if len(done) != len(block):
            raise RuntimeError(f"Ray returned {len(done)} of {len(block)} chunks")
        for r in done:
            yield r["text"], json.loads(r["stats"])
