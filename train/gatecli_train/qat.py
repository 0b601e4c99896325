"""Quantisation-aware fine-tuning for onnxruntime's dynamic int8 kernels (``MatMulInteger``).

Why: on the 2-core AVX-512 VNNI machine dynamic int8 halves the latency of the 8-bit
``MatMulNBits`` blocks the export ships, but changes about 2.4% of decisions against fp32
(the parity floor is 0.5%), and keeping any subset of MatMuls fp32 either fails the floor or
loses the speed (``benchmarks/README.md``, "Kernels with zero points"). The error comes from
the activations: dynamic quantisation rounds each MatMul input to 256 levels spread over that
tensor's whole range. Training with the same rounding in the forward pass (and the identity
in the backward pass, the straight-through estimator) is meant to move the weights to where the
rounding no longer flips decisions. Measured once (``gate-small-qat.toml``, 386 steps at 1e-5):
it did not; agreement stayed at 0.976 (``benchmarks/README.md``).

What is simulated, as ``quantize_dynamic(per_channel=True, weight_type=QInt8)`` runs it at
batch 1: the input of every encoder ``Linear`` as asymmetric uint8 over the sample's range
(which always includes 0), its weight as symmetric int8 per output channel. The heads stay
fp32, as the export keeps their Gemms.

**7-bit weights** (``[export] weight_bits = 7``, onnxruntime's ``reduce_range``): weights in
[-64, 64] instead of [-127, 127]. Why (stop 56): on x86 without VNNI (AVX2, AVX-512F) the
u8 x s8 kernel adds pairs of products in int16, and 255 * 127 * 2 overflows it, so the graph
is not what was simulated: the shipped weights' dynamic int8 graph agreed with its 8-bit
fake-quantised model on 0.983-0.990 of test turns on an AVX2 machine (0.9677 on the
export's 3,000 parity turns; 1.2.11 read 0.995 on a VNNI one), while with 7-bit weights
(255 * 64 * 2 < 32,768) graph and simulation agreed on every one of 600. The same graph runs
on VNNI machines unchanged.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from torch import nn

from gatecli_train.model import GateModel


def fake_quant_input(x: torch.Tensor) -> torch.Tensor:
    """``x`` rounded as ``DynamicQuantizeLinear`` rounds it, one range per sample.

    Example:
        >>> x = torch.tensor([[[0.0, 1.0, 2.55]]])
        >>> fake_quant_input(x).tolist()
        [[[0.0, 1.0, 2.549999952316284]]]
    """
    dims = tuple(range(1, x.dim()))
    lo = x.detach().amin(dim=dims, keepdim=True).clamp(max=0.0)
    hi = x.detach().amax(dim=dims, keepdim=True).clamp(min=0.0)
    scale = ((hi - lo) / 255.0).clamp(min=1e-8)
    zero = torch.round(-lo / scale)
    q = (torch.clamp(torch.round(x / scale) + zero, 0, 255) - zero) * scale
    return x + (q - x).detach()


# symmetric weight range per weight_bits, as onnxruntime's get_qmin_qmax_for_qType gives it
# (QInt8, symmetric; reduce_range for 7)
WEIGHT_QMAX = {8: 127, 7: 64}


def fake_quant_weight(w: torch.Tensor, bits: int = 8) -> torch.Tensor:
    """``w`` (out x in, as ``nn.Linear`` holds it) rounded to symmetric int8 per output row,
    in [-127, 127] (8 bits) or onnxruntime's ``reduce_range`` [-64, 64] (7 bits).

    Example:
        >>> w = fake_quant_weight(torch.tensor([[1.27, -0.5, 0.003]]))
        >>> [round(v, 4) for v in w[0].tolist()]
        [1.27, -0.5, 0.0]
        >>> [round(v, 4) for v in fake_quant_weight(torch.tensor([[1.28, -0.5]]), 7)[0].tolist()]
        [1.28, -0.5]
    """
    qmax = WEIGHT_QMAX[bits]
    scale = (w.detach().abs().amax(dim=1, keepdim=True) / qmax).clamp(min=1e-12)
    q = torch.clamp(torch.round(w / scale), -qmax, qmax) * scale
    return w + (q - w).detach()


def _forward(
    self: nn.Linear, x: torch.Tensor, bits: int = 8, inv: torch.Tensor | None = None
) -> torch.Tensor:
    if inv is None:
        return nn.functional.linear(fake_quant_input(x), fake_quant_weight(self.weight, bits),
                                    self.bias)  # fmt: skip
    # smoothed (gatecli_train.smoothing): the graph multiplies the input by 1 / s and holds
    # the weight times s, and rounds both of those
    w = fake_quant_weight(self.weight / inv[None, :], bits)
    return nn.functional.linear(fake_quant_input(x * inv), w, self.bias)


@dataclass(frozen=True)
class GraphRounding:
    """What an exported dynamic int8 graph rounds (read by
    :func:`gatecli_train.from_onnx.rounding_from_onnx`): the ``Linear`` modules it runs as
    int8 (by name in the GateModel) and, for smoothed inputs, the ``1 / s`` it multiplies
    them by."""

    rounded: frozenset[str]
    inv_scales: dict[str, torch.Tensor] = field(default_factory=dict)
    # 7 where every int8 weight is within reduce_range's [-64, 64], else 8
    weight_bits: int = 8


@contextmanager
def fake_quantised(
    model: GateModel, weight_bits: int = 8, graph: GraphRounding | None = None
) -> Iterator[int]:
    """Within the block every ``nn.Linear`` of the encoder runs fake-quantised (weights in
    ``weight_bits``, 8 or 7); yields their count. With ``graph``, only the Linears that graph
    rounds, smoothed as it smooths them (its MatMuls kept fp32 stay fp32): the model then
    computes what that export computes, one turn at a time. The state dict keeps its keys
    (only ``forward`` is swapped), so checkpoints, selection and export read the same
    weights; leave the block before exporting to ONNX."""
    if weight_bits not in WEIGHT_QMAX:
        raise ValueError(f"weight_bits must be one of {sorted(WEIGHT_QMAX)}, not {weight_bits}")
    names = {m: name for name, m in model.named_modules()}
    linears = [m for m in model.encoder.modules() if isinstance(m, nn.Linear)
               and (graph is None or names[m] in graph.rounded)]  # fmt: skip
    if graph is not None and len(linears) != len(graph.rounded):
        missing = sorted(graph.rounded - {names[m] for m in linears})
        raise ValueError(f"the graph rounds Linears this model does not have: {missing[:3]}")
    for m in linears:
        inv = None if graph is None else graph.inv_scales.get(names[m])
        fwd = functools.partial(_forward, bits=weight_bits, inv=inv)
        m.forward = types.MethodType(fwd, m)  # type: ignore[method-assign]
    try:
        yield len(linears)
    finally:
        for m in linears:
            del m.forward  # back to the class's forward


@contextmanager
def plain(model: GateModel) -> Iterator[None]:
    """Within a :func:`fake_quantised` block, the plain fp32 forward again for the block
    inside this one: a guarded selection (``select_max_drop``) holds a QAT run to what ships
    today, the starting weights as they run unrounded, not to their rounded twin."""
    swapped = [m for m in model.encoder.modules() if isinstance(m, nn.Linear)
               and "forward" in m.__dict__]  # fmt: skip
    saved = [m.__dict__.pop("forward") for m in swapped]
    try:
        yield
    finally:
        for m, fwd in zip(swapped, saved, strict=True):
            m.forward = fwd  # type: ignore[method-assign]
