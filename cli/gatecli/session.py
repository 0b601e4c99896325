"""The one place an onnxruntime session is built (the gate, the export parity check, tools).

Thread counts and graph optimisation decide both speed and, slightly, the logits; building
every session here means the parity check at export measures the same kind of session the
gate will run. Left out: what runs in the session (:mod:`gatecli.gate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import onnxruntime as ort


def open_session(
    path: str | Path,
    *,
    intra_op_threads: int = 1,
    inter_op_threads: int = 1,
    providers: Sequence[str] | None = None,
) -> ort.InferenceSession:
    """An ``InferenceSession`` on ``path`` with all graph optimisations, CPU by default.

    Raises whatever onnxruntime raises for an unreadable model (callers name the file).

    Example:
        >>> sess = open_session("models/gatecli_models/gate-small/model.onnx")  # doctest: +SKIP
        >>> [o.name for o in sess.get_outputs()][0]  # doctest: +SKIP
        'decision_logits'
    """
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = int(intra_op_threads)
    opts.inter_op_num_threads = int(inter_op_threads)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(
        str(path), opts, providers=list(providers or ["CPUExecutionProvider"])
    )
