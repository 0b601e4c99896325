"""Export a trained :class:`GateModel` to a runtime model folder, with parity checks.

ONNX with one named output per head (``<head>_logits``) and dynamic batch/sequence axes,
then int8 quantisation (:mod:`gatecli_train.quantize`). The parity check follows
optimum's ``validate_model_outputs``: outputs are matched by name to the heads the folder
declares, then checked head by head (shape, then the largest logit difference of torch vs
ONNX fp32, then fp32 vs int8), every failure is collected, and the export raises one
:class:`ParityError` naming each failing head. A silently broken export is worse than none.
Batches are padded with the tokenizer's own pad id, as the runtime pads them.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from tokenizers import Tokenizer

from gatecli import artifact
from gatecli.artifact import DEFAULT_CATALOG, DEFAULT_POLICY
from gatecli.gate import pad_token_id
from gatecli.session import open_session
from gatecli.template import template_from_catalog
from gatecli_train import quantize as quant
from gatecli_train import staging
from gatecli_train.calibrate import Calibration
from gatecli_train.config import ExportConfig
from gatecli_train.model import ExportWrapper, GateModel
from gatecli_train.qat import GraphRounding
from gatecli_train.smoothing import Smoothing

ONNX_INPUTS = ["input_ids", "attention_mask"]


class ParityError(RuntimeError):
    """ONNX outputs drifted from torch (or int8 from fp32) beyond the stated tolerance."""


@dataclass
class HeadParity:
    """One head's parity numbers (``int8_*`` are None without an int8 model)."""

    output: str
    shape: list[int]
    fp32_max_abs_diff: float = 0.0
    int8_max_abs_diff: float | None = None
    int8_argmax_agreement: float | None = None  # single-label heads only
    # [train] qat runs: int8 vs the fake-quantised torch model, one turn at a time.
    int8_qat_agreement: float | None = None
    # Single-label heads: texts whose two best fp32 logits are within TIE_MARGIN (a tie any
    # rounding may break), and the int8 agreement on the other texts. Reported, not gated.
    fp32_ties: int | None = None
    int8_agreement_untied: float | None = None


@dataclass
class ExportReport:
    fp32_max_abs_diff: float
    int8_decision_agreement: float | None
    n_parity_texts: int
    onnx_bytes: int
    # What the int8 decisions are held to: the fp32 graph, or for a [train] qat run the
    # fake-quantised torch model it was trained, selected and calibrated as.
    int8_reference: str = "fp32"
    notes: list[str] = field(default_factory=list)
    heads: dict[str, HeadParity] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def output_name(head: str) -> str:
    """The ONNX output (and ``gatecli.json`` ``output``) of a head."""
    return f"{head}_logits"


def export_onnx(model: GateModel, path: Path, opset: int = 17) -> None:
    """Trace ``model`` to ONNX (fp32). ``.eval()`` before and after: the exporter can leave
    the module in training mode (dropout on), which would poison later parity checks."""
    model.eval()
    wrapper = ExportWrapper(model).eval()
    names = [output_name(h.name) for h in model.head_defs]
    dummy = (torch.ones(2, 8, dtype=torch.long), torch.ones(2, 8, dtype=torch.long))
    axes: dict[str, dict[int, str]] = {n: {0: "batch", 1: "sequence"} for n in ONNX_INPUTS}
    axes.update({n: {0: "batch"} for n in names})
    with torch.no_grad():
        torch.onnx.export(
            wrapper,
            dummy,
            str(path),
            input_names=ONNX_INPUTS,
            output_names=names,
            dynamic_axes=axes,
            opset_version=opset,
            dynamo=False,
        )
    model.eval()


def quantize_model(
    src: Path, dst: Path, cfg: ExportConfig, calibration: list[dict[str, Any]] | None = None
) -> list[str]:
    """int8 model ``dst`` from fp32 ``src`` by ``cfg.quantization`` (blockwise | dynamic);
    ``calibration`` feeds are what ``cfg.smooth_alpha`` measures activation ranges on."""
    if cfg.quantization == "blockwise":
        return quant.quantize_blockwise(  # accuracy_level 0 = fp32 activations
            src, dst, cfg.keep_fp32, cfg.accuracy_level or None, cfg.weight_symmetric
        )
    smoothing = None
    if cfg.smooth_alpha > 0:
        if not calibration:
            raise ValueError("export.smooth_alpha needs calibration texts")
        smoothing = Smoothing(cfg.smooth_alpha, calibration)
    return quant.quantize_dynamic_int8(
        src, dst, cfg.keep_fp32, smoothing, reduce_range=cfg.weight_bits == 7,
        blockwise=cfg.keep_blockwise, accuracy_level=cfg.accuracy_level or None,
        symmetric=cfg.weight_symmetric,
    )  # fmt: skip


def _encode(tokenizer: Tokenizer, texts: list[str], max_length: int) -> tuple[Any, Any]:
    """Padded ``(input_ids, attention_mask)`` for a batch, padded as the gate pads."""
    ids = [e.ids[:max_length] for e in tokenizer.encode_batch(texts)]
    width = max(len(i) for i in ids)
    input_ids = np.full((len(ids), width), pad_token_id(tokenizer), dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for r, row in enumerate(ids):
        input_ids[r, : len(row)] = row
        mask[r, : len(row)] = 1
    return input_ids, mask


def _outputs(session: Any, names: list[str], where: Path) -> None:
    """Every head's output exists in the ONNX graph, by name (extra outputs are fine)."""
    have = {o.name for o in session.get_outputs()}
    missing = [n for n in names if n not in have]
    if missing:
        raise ParityError(f"{where.name} lacks outputs {missing} (has {sorted(have)})")


# Top-two fp32 logit gap under which a single-label head's argmax is a tie. Measured on
# gate-small 1.2.22's 3,000 parity turns (2026-12-04): 16 of its 18 int8 flips had a gap under
# 0.1 (execute/connect at p 0.50/0.50) and 2.9% of all turns do; the two others 0.22 and 0.38.
TIE_MARGIN = 0.1


def _compare(
    report: dict[str, HeadParity],
    agree: dict[str, int],
    ref: dict[str, Any],
    fp32: dict[str, Any],
    q8: dict[str, Any],
    problems: list[str],
    untied: dict[str, tuple[int, int]],
) -> None:
    """Fold one batch into the per-head numbers (``ref`` by head, ONNX by output name)."""
    for n, rep in report.items():
        want, got = ref[n], fp32[rep.output]
        if got.shape != want.shape:
            problems.append(f"{n}: ONNX shape {list(got.shape)} != torch {list(want.shape)}")
            continue
        rep.shape[0] += got.shape[0]
        rep.fp32_max_abs_diff = max(rep.fp32_max_abs_diff, float(np.abs(got - want).max()))
        if rep.output in q8:
            q = q8[rep.output]
            rep.int8_max_abs_diff = max(rep.int8_max_abs_diff or 0.0, float(np.abs(q - got).max()))
            if n in agree:
                same = q.argmax(-1) == got.argmax(-1)
                agree[n] += int(same.sum())
                top2 = np.sort(got, axis=-1)[:, -2:]
                tied = (top2[:, 1] - top2[:, 0]) < TIE_MARGIN
                rep.fp32_ties = (rep.fp32_ties or 0) + int(tied.sum())
                untied[n] = (
                    untied[n][0] + int(same[~tied].sum()),
                    untied[n][1] + int((~tied).sum()),
                )


def parity_check(
    model: GateModel,
    fp32_path: Path,
    int8_path: Path | None,
    tokenizer: Tokenizer,
    texts: list[str],
    max_length: int,
    cfg: ExportConfig,
    *,
    batch: int = 32,
    qat: bool = False,
) -> ExportReport:
    """Torch vs ONNX fp32 on every head, fp32 vs int8 decisions, keyed by output name.

    A dynamic int8 graph is also compared with its simulation, one turn at a time: the torch
    model fake-quantised as that graph rounds it (:func:`gatecli_train.qat.fake_quantised`
    with :func:`gatecli_train.from_onnx.rounding_from_onnx`: its MatMuls kept fp32 stay fp32,
    smoothed inputs rounded as ``x / s`` and ``W * s``), which tells an export fault from the
    rounding's own cost (1.2.72: 0.988 with fp32). With ``qat`` (a ``[train] qat`` run)
    exported without smoothing (what training simulated; smoothing rounds other inputs) the
    int8 decisions are held to that simulation instead of fp32: the fake-quantised model is
    what training selected and calibration fitted, and its fp32 twin is not (the 1.2.11 QAT
    run's 3,000 parity turns: int8 vs fake-quantised 0.995, int8 vs fp32 0.978). Agreement
    with fp32 is reported either way.
    Raises :class:`ParityError` listing every head outside its tolerance.
    """
    model.eval()
    heads = {h.name: h for h in model.head_defs}
    names = [output_name(n) for n in heads]
    fp32_sess = open_session(fp32_path)
    _outputs(fp32_sess, names, fp32_path)
    int8_sess = open_session(int8_path) if int8_path is not None else None
    if int8_sess is not None and int8_path is not None:
        _outputs(int8_sess, names, int8_path)
    report = {n: HeadParity(output_name(n), [0, len(h.labels)]) for n, h in heads.items()}
    agree = {n: 0 for n, h in heads.items() if not h.multilabel}
    untied = {n: (0, 0) for n in agree}  # (agreeing, counted) over texts that are not ties
    problems: list[str] = []
    total = 0
    for start in range(0, len(texts), batch):
        ids, mask = _encode(tokenizer, texts[start : start + batch], max_length)
        with torch.no_grad():
            ref = model(torch.from_numpy(ids), torch.from_numpy(mask))
        feed = {"input_ids": ids, "attention_mask": mask}
        fp32 = dict(zip(names, fp32_sess.run(names, feed), strict=True))
        q8 = dict(zip(names, int8_sess.run(names, feed), strict=True)) if int8_sess else {}
        total += ids.shape[0]
        _compare(report, agree, {n: t.numpy() for n, t in ref.items()}, fp32, q8, problems, untied)
    for n, rep in report.items():
        if n in agree and int8_sess is not None and total:
            rep.int8_argmax_agreement = agree[n] / total
            rep.int8_agreement_untied = untied[n][0] / max(untied[n][1], 1)
        if rep.fp32_max_abs_diff > cfg.max_abs_diff:
            problems.append(f"{n}: torch vs ONNX fp32 max abs logit diff "
                            f"{rep.fp32_max_abs_diff:.2e} > {cfg.max_abs_diff:.0e}")  # fmt: skip
    decision = report["decision"].int8_argmax_agreement if "decision" in report else None
    reference = "fp32"
    dynamic = cfg.quantization == "dynamic" and int8_sess is not None
    if dynamic and int8_path is not None and "decision" in report:
        from gatecli_train.from_onnx import rounding_from_onnx

        rep = report["decision"]
        rep.int8_qat_agreement = _qat_agreement(model, int8_sess, rep.output, tokenizer, texts,
                                                max_length, cfg.weight_bits,
                                                rounding_from_onnx(int8_path))  # fmt: skip
        if qat and not cfg.smooth_alpha:  # training simulated the unsmoothed rounding
            decision, reference = rep.int8_qat_agreement, "fake-quantised torch (qat), batch 1"
    if decision is not None and decision < cfg.min_int8_agreement:
        rep = report["decision"]
        problems.append(f"decision: int8 agreement with {reference} {decision:.4f} < "
                        f"{cfg.min_int8_agreement} on {total} texts ({rep.fp32_ties} fp32 ties "
                        f"within {TIE_MARGIN} logit; on the others "
                        f"{rep.int8_agreement_untied or 0.0:.4f})")  # fmt: skip
    if problems:
        raise ParityError("parity check failed: " + "; ".join(dict.fromkeys(problems)))
    worst = max((r.fp32_max_abs_diff for r in report.values()), default=0.0)
    size = (int8_path or fp32_path).stat().st_size
    return ExportReport(worst, decision, len(texts), size, heads=report, int8_reference=reference)


def _qat_agreement(model: GateModel, int8_sess: Any, output: str, tokenizer: Tokenizer,
                   texts: list[str], max_length: int, weight_bits: int = 8,
                   graph: GraphRounding | None = None) -> float:  # fmt: skip
    """Share of ``texts`` whose decision argmax the int8 graph and the fake-quantised torch
    model agree on, one text at a time (no padding: the simulation's per-sample range and
    onnxruntime's per-tensor range are then the same range)."""
    from gatecli_train.qat import fake_quantised

    same = 0
    with torch.no_grad(), fake_quantised(model, weight_bits, graph):
        for text in texts:
            ids, mask = _encode(tokenizer, [text], max_length)
            want = model(torch.from_numpy(ids), torch.from_numpy(mask))["decision"]
            got = int8_sess.run([output], {"input_ids": ids, "attention_mask": mask})[0]
            same += int(int(want.argmax(-1)[0]) == int(got.argmax(-1)[0]))
    return same / max(1, len(texts))


def write_model_folder(
    out_dir: Path,
    model: GateModel,
    tokenizer: Tokenizer,
    cfg: ExportConfig,
    *,
    max_length: int,
    parity_texts: list[str],
    calibration: Calibration | None = None,
    calibration_texts: list[str] | None = None,
    template: dict[str, Any] | None = None,
    catalog_path: Path = DEFAULT_CATALOG,
    policy_path: Path = DEFAULT_POLICY,
    card_text: str | None = None,
    extra: dict[str, Any] | None = None,
    qat: bool = False,
    carried: Sequence[Path] = (),
) -> ExportReport:
    """Write a complete runtime model folder (the artifact contract) and return the parity
    report. ``cfg`` is the recipe's ``[export]`` section (name, version, quantisation,
    tolerances); ``calibration`` gives temperatures and thresholds (none: 1.0 and 0.5);
    ``calibration_texts`` (dev turns, never the parity texts) are what smoothing measures;
    ``qat`` (a ``[train] qat`` run) holds dynamic int8 decisions to the fake-quantised model.
    ``carried`` files (a source folder's ``CHANGELOG.md``) are copied in under their own
    names inside the staged write, so the folder appears with them or not at all.

    Example:
        >>> write_model_folder(Path("/tmp/m"), model, tok, ExportConfig(name="m"),
        ...                    max_length=96, parity_texts=texts)  # doctest: +SKIP
    """
    written = {*artifact.HASHED_FILES, artifact.CONFIG_FILE, artifact.CARD_FILE}
    clash = sorted(p.name for p in carried if p.name in written)
    if clash:
        raise ValueError(f"carried files would replace the export's own: {', '.join(clash)}")
    # Built in a sibling and moved into place whole (staging): a failed parity check leaves
    # out_dir as it was, never a model.onnx without its gatecli.json.
    with staging.staged_folder(out_dir) as stage:
        fp32 = stage / "model.fp32.onnx"
        export_onnx(model, fp32)
        final = stage / artifact.MODEL_FILE
        int8_tmp = stage / "model.int8.onnx" if cfg.quantize else None
        # dynamic int8 rounds each MatMul input over the whole batch: one turn per pass, in the
        # parity check as in the runtime (onnx.max_batch)
        dynamic = cfg.quantize and cfg.quantization == "dynamic"
        texts = (calibration_texts or [])[: cfg.smooth_texts]
        feeds = [
            dict(zip(ONNX_INPUTS, _encode(tokenizer, texts[i : i + 32], max_length), strict=True))
            for i in range(0, len(texts), 32)
        ]
        notes = quantize_model(fp32, int8_tmp, cfg, feeds) if int8_tmp is not None else []
        try:
            report = parity_check(
                model, fp32, int8_tmp, tokenizer, parity_texts, max_length, cfg, qat=qat,
                batch=1 if dynamic else 32,
            )  # fmt: skip
        except ParityError as first:
            if int8_tmp is None or cfg.quantization != "blockwise" or not cfg.zero_point_fallback:
                raise
            # The other block encoding, once: which one agrees better depends on the weights
            # (1.2.35: zero points 0.9933, symmetric 0.9977; 1.2.37: symmetric 0.9877, zero
            # points 0.9987), and a release should not fail on the one the recipe inherited.
            other = replace(cfg, weight_symmetric=not cfg.weight_symmetric)
            notes = quantize_model(fp32, int8_tmp, other, feeds)
            try:
                report = parity_check(
                    model, fp32, int8_tmp, tokenizer, parity_texts, max_length, other, qat=qat
                )
            except ParityError as second:
                raise ParityError(f"{first}; the other block encoding: {second}") from second
            notes.append(f"weight_symmetric = {cfg.weight_symmetric} failed ({first}); "
                         f"weight_symmetric = {other.weight_symmetric} kept")  # fmt: skip
        if int8_tmp is not None and int8_tmp.exists():
            int8_tmp.replace(final)
            fp32.unlink()
        else:
            fp32.replace(final)
        report.onnx_bytes = final.stat().st_size
        report.notes.extend(notes)
        tokenizer.save(str(stage / artifact.TOKENIZER_FILE))
        shutil.copyfile(catalog_path, stage / artifact.CATALOG_FILE)
        shutil.copyfile(policy_path, stage / artifact.POLICY_FILE)
        cal = calibration or Calibration()
        heads = {
            h.name: artifact.HeadSpec(
                name=h.name,
                kind=h.kind,
                labels=list(h.labels),
                output=output_name(h.name),
                temperature=float(cal.temperatures.get(h.name, 1.0)),
                thresholds=dict(cal.thresholds.get(h.name, {})),
                thresholds_by_lang=dict(cal.thresholds_by_lang.get(h.name, {})),
            )
            for h in model.head_defs
        }
        config = artifact.ModelConfig(
            name=cfg.name,
            version=cfg.version,
            heads=heads,
            max_length=max_length,
            template=template
            or template_from_catalog(yaml.safe_load(catalog_path.read_text(encoding="utf-8"))),
            onnx_inputs=list(ONNX_INPUTS),
            model_sha256=artifact.sha256_file(final),
            onnx_max_batch=1 if dynamic else None,
            extra={"parity": report.to_json(), **(extra or {})},
        )
        # Last, once every file is in place: write_config hashes model.onnx, tokenizer.json,
        # catalog.yaml, policy.yaml and its own content into the integrity table.
        artifact.write_config(stage, config)
        if card_text is not None:
            (stage / artifact.CARD_FILE).write_text(card_text, encoding="utf-8")
        for path in carried:
            shutil.copyfile(path, stage / path.name)
        return report
