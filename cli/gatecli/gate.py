"""The local gate: serialise, tokenise, one ONNX forward pass per micro-batch, then policy.

Everything that comes from the model folder (labels, thresholds, template, catalog,
compiled policy, output names) is read once in :class:`Gate`'s constructor; ``classify``
only serialises, tokenises (``encode_batch``), pads into reused buffers, runs the session
and assembles records, so the per-turn cost stays close to a bare ``session.run``.
Left out on purpose: the LLM fallback (``gatecli.llm``) and reading files
(:mod:`gatecli.readers`); the ``coach_fn`` hook fills ``coach`` (default: the local
template question of :mod:`gatecli.coach` for ``ask``; ``None`` turns it off).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from gatecli import artifact
from gatecli.artifact import ArtifactError, HeadSpec
from gatecli.catalog import Catalog
from gatecli.heads import HeadOutputs, postprocess
from gatecli.langid import detect
from gatecli.policy import apply_policy, load_policy
from gatecli.records import validate_record
from gatecli.segments import (
    SegmentVerdict,
    apply_segments,
    risk_label,
    segment_floors,
    split_segments,
)
from gatecli.session import open_session
from gatecli.template import serialize

# event_scores lists every event scored at least this, plus every emitted event.
EVENT_SCORE_FLOOR = 0.05
CoachFn = Callable[[Mapping[str, Any], dict[str, Any]], "dict[str, Any] | None"]
_PAD_CANDIDATES = ("<pad>", "[PAD]", "<|pad|>", "<|endoftext|>")


def pad_token_id(tok: Tokenizer) -> int:
    """The id batches are padded with: the tokenizer's pad token (``<pad>``, ``[PAD]``, ...),
    else 0. The export's parity check pads with the same id.

    Example:
        >>> pad_token_id(Tokenizer.from_file("models/gatecli_models/gate-small/tokenizer.json"))
        1
    """
    found = (tok.token_to_id(t) for t in _PAD_CANDIDATES)
    return next((i for i in found if i is not None), 0)


class Gate:
    """A loaded model folder that classifies gate-input records (spec §1 -> §5).

    Not picklable; one instance may be shared by threads (buffers are per thread).

    Example:
        >>> gate = Gate("models/gatecli_models/gate-small")  # doctest: +SKIP
        >>> gate.classify({"user_message": "声音调到90"})["decision"]  # doctest: +SKIP
        'execute'
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        intra_op_threads: int = 1,
        inter_op_threads: int = 1,
        batch_size: int = 32,
        verify_hash: bool = True,
        coach_fn: CoachFn | None | str = "local",
        providers: list[str] | None = None,
        segment_guard: bool = True,
    ) -> None:
        self.folder = artifact.load_model_folder(model_dir, verify_hash=verify_hash)
        cfg = self.config = self.folder.config
        if "decision" not in cfg.heads:
            raise ArtifactError(f"{self.folder.path}: gatecli.json has no decision head")
        self.batch_size = max(1, int(batch_size))
        if coach_fn == "local":  # every ask gets a question in the user's language, no LLM
            from gatecli.coach import local_coach

            coach_fn = local_coach
        self.coach_fn = coach_fn if callable(coach_fn) else None
        self.max_length = cfg.max_length
        self.heads: dict[str, HeadSpec] = dict(cfg.heads)
        self._template = cfg.template
        self._output_names = [h.output for h in self.heads.values()]
        self._bands = sorted(cfg.confidence_bands.items(), key=lambda kv: -float(kv[1]))
        decision = self.heads["decision"]
        self._decision_thresholds = dict(decision.thresholds)
        # Per-language calibrated thresholds (format 3): picked by the language detect()
        # gives the turn, the same call calibration grouped dev turns by.
        self._lang_thresholds = {
            lang: decision.thresholds_for(lang) for lang in decision.thresholds_by_lang
        }
        try:
            self.catalog = Catalog.from_mapping(self.folder.catalog)
            self.policy = load_policy(self.folder.policy, self.catalog)
        except ValueError as exc:
            raise ArtifactError(f"{self.folder.path}: {exc}") from exc
        # The segment rule reads labels at the policy's precedence floors (calibrated ones
        # from the artifact where it has them); a sentence alone must also clear the
        # policy's decision.segment_min_prob where that is higher.
        self.segment_guard = bool(segment_guard)
        self._floors = self._floors_from(self._decision_thresholds)
        self._lang_floors = {
            lang: self._floors_from(th) for lang, th in self._lang_thresholds.items()
        }
        seg_min = dict(self.policy.segment_min_prob)
        self._seg_floors = segment_floors(self._floors, seg_min)
        self._lang_seg_floors = {
            lang: segment_floors(fl, seg_min) for lang, fl in self._lang_floors.items()
        }
        try:
            tok = Tokenizer.from_file(str(self.folder.tokenizer_path))
        except Exception as exc:  # tokenizers raises plain Exception subclasses
            raise ArtifactError(
                f"{self.folder.tokenizer_path} is not a tokenizer.json ({exc})"
            ) from exc
        tok.no_padding()
        tok.no_truncation()  # the template trims; truncation would hide overlong text
        self._tok = tok
        self._pad_id = pad_token_id(tok)
        try:
            self.session = open_session(
                self.folder.model_path, intra_op_threads=intra_op_threads,
                inter_op_threads=inter_op_threads, providers=providers,
                optimized_for=(cfg.onnx_optimized or {}).get("providers"),
            )  # fmt: skip
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
            raise ArtifactError(f"{self.folder.model_path} cannot be loaded ({exc})") from exc
        outputs = {o.name for o in self.session.get_outputs()}
        missing = [n for n in self._output_names if n not in outputs]
        if missing:
            raise ArtifactError(
                f"{self.folder.model_path} lacks outputs {missing} named in gatecli.json"
            )
        self._inputs = list(cfg.onnx_inputs)
        self._local = threading.local()

    def _floors_from(self, thresholds: Mapping[str, float]) -> list[tuple[str, float]]:
        return [(lab, float(thresholds.get(lab, floor))) for lab, floor in self.policy.precedence]

    def risk_floors(self, lang: str) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """The precedence floors a whole turn in ``lang`` is read at, and those a sentence
        scored alone must clear (``decision.segment_min_prob`` of the policy, when higher)."""
        return (
            self._lang_floors.get(lang, self._floors),
            self._lang_seg_floors.get(lang, self._seg_floors),
        )

    @property
    def tokenizer(self) -> Tokenizer:
        """The folder's tokenizer, padding and truncation off (the template trims)."""
        return self._tok

    @property
    def model_id(self) -> str:
        return self.config.model_id

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` encodes to, special tokens included (the template's budget unit)."""
        return len(self._tok.encode(text).ids)

    def classify(
        self, records: Mapping[str, Any] | Iterable[Mapping[str, Any]]
    ) -> dict[str, Any] | list[dict[str, Any]]:
        """Classify one record (returns a dict) or many (a list in the same order).

        An invalid record gives ``{"id", "error"}`` in its place instead of raising.

        Example:
            >>> gate.classify([{"user_message": "hi"}, {"user_message": ""}])  # doctest: +SKIP
            [{'id': None, 'turn_index': 0, 'decision': 'execute', ...},
             {'id': None, 'error': 'user_message is empty'}]
        """
        if isinstance(records, Mapping):
            return self.classify_batch([records])[0]
        return self.classify_batch(list(records))

    def classify_batch(self, records: list[Any]) -> list[dict[str, Any]]:
        """Classify a list: sort by token length, run micro-batches, restore the order."""
        t0 = time.perf_counter()
        out: list[dict[str, Any] | None] = [None] * len(records)
        idx: list[int] = []
        for i, rec in enumerate(records):
            err = validate_record(rec)
            if err is None:
                idx.append(i)
            else:
                rid = rec.get("id") if isinstance(rec, Mapping) else None
                out[i] = {"id": rid if isinstance(rid, (str, int)) else None, "error": err}
        seqs, bad = self._encode([records[i] for i in idx])
        for k, err in bad.items():
            out[idx[k]] = {"id": records[idx[k]].get("id"), "error": err}
        ok = [k for k in range(len(idx)) if k not in bad]
        # Multi-sentence messages: each sentence is scored alone in the same passes.
        owner: dict[int, list[int]] = {}
        if self.segment_guard:
            seg_recs: list[dict[str, Any]] = []
            for k in ok:
                for seg in split_segments(records[idx[k]]["user_message"]):
                    owner.setdefault(k, []).append(len(seqs) + len(seg_recs))
                    seg_recs.append({"user_message": seg})
            if seg_recs:
                seqs = seqs + self._encode(seg_recs)[0]
        todo = ok + [s for segs in owner.values() for s in segs]
        order = sorted(todo, key=lambda k: len(seqs[k]))
        per_turn_encode = (time.perf_counter() - t0) / max(1, len(records))
        preds: dict[int, HeadOutputs] = {}
        cost: dict[int, float] = {}
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            t1 = time.perf_counter()
            for k, pred in zip(chunk, self.predict_ids([seqs[k] for k in chunk]), strict=True):
                preds[k] = pred
            share = (time.perf_counter() - t1) / len(chunk)
            for k in chunk:
                cost[k] = share
        for k in ok:
            pred, verdict = preds[k], None
            lang = detect(records[idx[k]]["user_message"])
            turn_risky = False
            if k in owner:
                floors, seg_floors = self.risk_floors(lang)
                pred, verdict = apply_segments(
                    pred, [preds[s] for s in owner[k]], floors, seg_floors
                )
                # no sentence won: pred is still the whole turn's, read at the same floors
                turn_risky = verdict is None and risk_label(pred.decision_probs, floors) is not None
            rec = out[idx[k]] = self._record(records[idx[k]], pred, lang)
            rec["guards"].append(
                _segment_guard(verdict, k in owner, self.segment_guard, turn_risky)
            )
            spent = cost[k] + sum(cost[s] for s in owner.get(k, ()))
            rec["latency_ms"] = round((spent + per_turn_encode) * 1000.0, 3)
        return out  # type: ignore[return-value]

    def _encode(
        self, records: Sequence[Mapping[str, Any]]
    ) -> tuple[list[list[int]], dict[int, str]]:
        """Token ids per record, trimmed to ``max_length`` exactly as training trims.

        Most turns fit untrimmed: they are serialised once and tokenised in one
        ``encode_batch``; only overflowing ones go through the template's trimming loop.
        """
        limit, tmpl = self.max_length, self._template
        long_msg = limit * 8  # the template's own message cut (chars per token bound)
        texts: list[str] = []
        for rec in records:
            texts.append("" if len(rec["user_message"]) > long_msg else serialize(rec, tmpl))
        bad: dict[int, str] = {}
        for k, text in enumerate(texts):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                bad[k] = "record contains invalid Unicode (a lone surrogate)"
                texts[k] = ""
        seqs = [e.ids for e in self._tok.encode_batch(texts)]
        for k, rec in enumerate(records):
            if k not in bad and (not texts[k] or len(seqs[k]) > limit):
                text = serialize(rec, tmpl, count_tokens=self.count_tokens, max_length=limit)
                seqs[k] = self._tok.encode(text).ids[:limit]
        return seqs, bad

    def _buffers(self, n: int, width: int) -> tuple[np.ndarray, np.ndarray]:
        size = n * width
        local = self._local
        if getattr(local, "size", 0) < size:
            local.size = max(size, self.batch_size * self.max_length)
            local.ids = np.empty(local.size, dtype=np.int64)
            local.mask = np.empty(local.size, dtype=np.int64)
        ids = local.ids[:size].reshape(n, width)
        mask = local.mask[:size].reshape(n, width)
        ids.fill(self._pad_id)
        mask.fill(0)
        return ids, mask

    def predict_ids(self, seqs: list[list[int]]) -> list[HeadOutputs]:
        """One forward pass over token-id lists (padded here) -> calibrated head outputs."""
        return postprocess(self.heads, self.logits_ids(seqs))

    def logits_ids(self, seqs: list[list[int]]) -> dict[str, np.ndarray]:
        """One forward pass over token-id lists -> raw logits per head, before temperature
        (what calibration fits: ``gatecli calibrate`` refits this model's own outputs).
        A graph whose rows depend on each other (``onnx.max_batch``: dynamic int8) runs in
        passes of at most that many, so a turn's outputs never depend on its batch-mates."""
        most = self.config.onnx_max_batch
        if most and len(seqs) > most:
            parts = [self._forward(seqs[i : i + most]) for i in range(0, len(seqs), most)]
            return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        return self._forward(seqs)

    def _forward(self, seqs: list[list[int]]) -> dict[str, np.ndarray]:
        width = max(len(s) for s in seqs)
        ids, mask = self._buffers(len(seqs), width)
        for r, s in enumerate(seqs):
            ids[r, : len(s)] = s
            mask[r, : len(s)] = 1
        feed: dict[str, np.ndarray] = {}
        for name in self._inputs:
            if name == "input_ids":
                feed[name] = ids
            elif name == "attention_mask":
                feed[name] = mask
            else:  # token_type_ids and the like: zeros
                feed[name] = np.zeros_like(ids)
        outs = self.session.run(self._output_names, feed)
        return dict(zip(self.heads, outs, strict=True))

    def _band(self, p: float) -> str:
        for name, floor in self._bands:
            if p >= float(floor):
                return name
        return "low"

    def _record(self, rec: Mapping[str, Any], pred: HeadOutputs, lang: str) -> dict[str, Any]:
        thresholds = self._lang_thresholds.get(lang, self._decision_thresholds)
        res = apply_policy(pred, rec, self.catalog, self.policy, decision_thresholds=thresholds)
        probs = pred.decision_probs
        scores = pred.event_scores
        shown = {e: s for e, s in scores.items() if s >= EVENT_SCORE_FLOOR or e in pred.events}
        g = res.gate_validation
        out: dict[str, Any] = {
            "id": rec.get("id"),
            "turn_index": rec.get("turn_index", 0),
            "lang": lang,
            "decision": res.decision,
            "confidence": probs.get(res.model_decision, max(probs.values())),
            "probabilities": probs,
            "events": res.events,
            "event_scores": dict(sorted(shown.items(), key=lambda kv: -kv[1])),
            "scenario_tags": list(pred.tags),
            "scenario_confidence": {t: self._band(pred.tag_scores[t]) for t in pred.tags},
            "missing_slots": res.missing_slots,
            "next_action": res.next_action,
            "gate_validation": {
                "allowed": g.allowed,
                "final_decision": g.final_decision,
                "blocked_reasons": g.blocked_reasons,
                "warnings": g.warnings,
                "route_hint": g.route_hint,
                "required_clarifications": g.required_clarifications,
                "next_action": g.next_action,
                "applied_rules": [
                    {"rule_id": r.rule_id, "decision": r.decision, "reason": r.reason}
                    for r in g.applied_rules
                ],
            },
            "guards": [_guard(gr) for gr in res.guards],
            "coach": None,
            "source": "local",
            "fallback": {"status": "not_needed"},
            "model": self.config.model_id,
            "latency_ms": 0.0,
        }
        if self.coach_fn is not None:
            out["coach"] = self.coach_fn(rec, out)
        return out


def _segment_guard(
    verdict: SegmentVerdict | None, multi: bool, on: bool, turn_risky: bool = False
) -> dict[str, Any]:
    """The segment rule as a guard entry: triggered, or skipped with the reason.

    ``turn_already_risky``: the whole turn is already refuse or safety at the policy's
    floors, and no sentence outranks it; a reader must not take the skip for "no sentence
    was risky" (the whole-turn pass reads the end of a long message too, so a request
    appended to a pasted text is often caught there first)."""
    if verdict is None:
        why = "no_risky_segment"
        if not on:
            why = "disabled"
        elif not multi:
            why = "single_sentence"
        elif turn_risky:
            why = "turn_already_risky"
        return {"guard_name": "segment_risk_guard", "triggered": False, "status": "skipped",
                "skip_reason": why, "decision_reason": "", "payload": {}}  # fmt: skip
    return {
        "guard_name": "segment_risk_guard",
        "triggered": True,
        "status": "routed" if verdict.label == "safety" else "blocked",
        "skip_reason": None,
        "decision_reason": f"sentence {verdict.index + 1} of {verdict.segments} alone is "
        f"{verdict.label} ({verdict.probability:.2f}): risk outranks the surrounding text",
        "payload": {"segment": verdict.index, "segments": verdict.segments},
    }


def _guard(gr: Any) -> dict[str, Any]:
    """The policy's GuardResult as JSON (what ``asdict`` gives, at a tenth of the cost)."""
    return {
        "guard_name": gr.guard_name,
        "triggered": gr.triggered,
        "status": gr.status,
        "skip_reason": gr.skip_reason,
        "decision_reason": gr.decision_reason,
        "payload": dict(gr.payload),
    }
