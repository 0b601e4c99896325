"""The one place an onnxruntime session is built (the gate, the export parity check, tools).

Thread counts and graph optimisation decide both speed and, slightly, the logits; building
every session here means the parity check at export measures the same kind of session the
gate will run. Left out: what runs in the session (:mod:`gatecli.gate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import onnxruntime as ort

CPU = ("CPUExecutionProvider",)


def open_session(
    path: str | Path,
    *,
    intra_op_threads: int = 1,
    inter_op_threads: int = 1,
    providers: Sequence[str] | None = None,
    optimized_for: Sequence[str] | None = None,
) -> ort.InferenceSession:
    """An ``InferenceSession`` on ``path``, CPU by default.

    The graph is optimised at load (all levels), unless it was saved optimised
    (:func:`save_optimized`) for exactly these ``providers`` (``optimized_for``): then
    optimising again would find nothing to fuse and costs tens of milliseconds of every
    cold start (gate-small on 2 cores: benchmarks/README.md). Raises whatever onnxruntime
    raises for an unreadable model (callers name the file).

    Example:
        >>> sess = open_session("models/gatecli_models/gate-small/model.onnx")  # doctest: +SKIP
        >>> [o.name for o in sess.get_outputs()][0]  # doctest: +SKIP
        'decision_logits'
    """
    chosen = list(providers or CPU)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = int(intra_op_threads)
    opts.inter_op_num_threads = int(inter_op_threads)
    done = optimized_for is not None and list(optimized_for) == chosen
    opts.graph_optimization_level = (
        ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        if done
        else ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    )
    return ort.InferenceSession(str(path), opts, providers=chosen)


def save_optimized(
    src: str | Path, dst: str | Path, providers: Sequence[str] = CPU
) -> dict[str, Any]:
    """Write ``src`` to ``dst`` with onnxruntime's graph optimisations applied, up to the
    extended level (fusions: biases into ``MatMulNBits``, GELU, the attention scale into
    ``FusedMatMul``), and return what ``gatecli.json`` records as ``onnx.optimized``.

    Not the layout level: onnxruntime warns that a graph saved past the extended level may
    hold optimisations for this machine's CPU only; the extended level is what its docs
    allow offline for the same execution providers. Same outputs as optimising at load
    (checked by ``gatecli_train.preoptimize`` on real turns before a folder takes it).
    """
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.optimized_model_filepath = str(dst)
    ort.InferenceSession(str(src), opts, providers=list(providers))
    return {"level": "extended", "providers": list(providers), "onnxruntime": ort.__version__}
