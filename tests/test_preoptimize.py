"""A folder saved with its graph optimised computes what it computed, loads without
optimising again, still reads back for ``model.init_from``, and a failed check changes
nothing (plumbing on tiny random folders; the shipped folder is checked by
test_from_onnx and the artifact tests)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from gatecli import artifact
from gatecli.gate import Gate
from gatecli.session import open_session
from gatecli_train.from_onnx import state_from_onnx
from gatecli_train.preoptimize import OptimiseError, preoptimize_folder
from gatecli_train.tiny import build_tiny_model

TURNS = [
    {"user_message": t}
    for t in (
        "turn off the lights", "帮我订一张去上海的火车票", "je veux mourir", "ok",
        "remind me to call mom tomorrow at 5 and then play some jazz in the kitchen please",
    )
]  # fmt: skip
LEVEL = ort.GraphOptimizationLevel


def _probs(folder: Path) -> list[dict[str, float]]:
    return [r["probabilities"] for r in Gate(folder, coach_fn=None).classify_batch(TURNS)]


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _level(gate: Gate) -> LEVEL:
    return gate.session.get_session_options().graph_optimization_level


@pytest.mark.parametrize("quantization", ["blockwise", "dynamic"])
def test_int8_folder_is_optimised_in_place(tmp_path: Path, quantization: str) -> None:
    folder = build_tiny_model(tmp_path / "tiny", quantize=True, quantization=quantization)
    before, weights = _probs(folder), state_from_onnx(folder / "model.onnx")
    assert _level(Gate(folder, coach_fn=None)) == LEVEL.ORT_ENABLE_ALL

    report = preoptimize_folder(folder, TURNS)

    assert report["decision_agreement"] == 1.0
    assert max(report["max_abs_diff"].values()) <= 1e-4
    gate = Gate(folder, coach_fn=None)  # integrity holds over the new model.onnx
    assert gate.config.onnx_optimized == {
        "level": "extended", "providers": ["CPUExecutionProvider"],
        "onnxruntime": ort.__version__,
    }  # fmt: skip
    assert _level(gate) == LEVEL.ORT_DISABLE_ALL  # not optimised again at load
    assert gate.config.extra["preoptimize"]["n_texts"] == len(TURNS)
    np.testing.assert_allclose(
        [list(p.values()) for p in _probs(folder)], [list(p.values()) for p in before], atol=1e-6
    )
    state, facts = state_from_onnx(folder / "model.onnx")
    assert facts == weights[1] and set(state) == set(weights[0])
    assert all(bool((state[k] == weights[0][k]).all()) for k in state)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [*artifact.REQUIRED_FILES, artifact.CARD_FILE]
    )
    # a second run finds nothing to do and changes nothing
    snap = _snapshot(folder)
    assert "skipped" in preoptimize_folder(folder, TURNS)
    assert _snapshot(folder) == snap


def test_failed_check_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    folder = build_tiny_model(tmp_path / "tiny", quantize=True)
    snap = _snapshot(folder)
    with pytest.raises(OptimiseError, match="differs"):
        preoptimize_folder(folder, TURNS, tolerance=-1.0)
    assert _snapshot(folder) == snap
    Gate(folder, coach_fn=None)


def test_graph_that_does_not_read_back_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fusion from_onnx cannot undo would break init_from: the folder keeps its graph.
    (Every fusion of today's graphs is read; ``Gelu``, which the optimised dynamic graph
    holds, is marked unread here to take that path with a real optimised graph.)"""
    from gatecli_train import from_onnx

    monkeypatch.setattr(from_onnx, "UNREAD_FUSIONS", {*from_onnx.UNREAD_FUSIONS, "Gelu"})
    folder = build_tiny_model(tmp_path / "tiny", quantize=True, quantization="dynamic")
    snap = _snapshot(folder)
    with pytest.raises(OptimiseError, match="cannot be read back"):
        preoptimize_folder(folder, TURNS)
    assert _snapshot(folder) == snap


def test_session_optimises_unless_saved_for_the_same_providers(tiny_model_dir: Path) -> None:
    path = tiny_model_dir / "model.onnx"

    def level(**kw: object) -> LEVEL:
        return open_session(path, **kw).get_session_options().graph_optimization_level  # type: ignore[arg-type]

    assert level() == LEVEL.ORT_ENABLE_ALL
    assert level(optimized_for=["CPUExecutionProvider"]) == LEVEL.ORT_DISABLE_ALL
    assert level(optimized_for=["CUDAExecutionProvider"]) == LEVEL.ORT_ENABLE_ALL


def test_malformed_optimized_entry_is_refused(tiny_model_copy: Path) -> None:
    assert artifact.load_model_folder(tiny_model_copy).config.onnx_optimized is None
    raw = json.loads((tiny_model_copy / "gatecli.json").read_text(encoding="utf-8"))
    raw["onnx"]["optimized"] = "yes"
    (tiny_model_copy / "gatecli.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(artifact.ArtifactError, match="optimized"):
        artifact.load_model_folder(tiny_model_copy, verify_hash=False)
