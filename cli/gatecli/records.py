"""The contract's records as types, and the few rules every layer must apply the same way.

The spec (``gate-spec.md``) defines an input record (§1), four heads (§2), the escalation
band (§4), an output record (§5) and a labeled data record (§6). They are plain JSON, so
they stay plain dicts at run time; the TypedDicts here let mypy and readers see their
shape, and the names, defaults and rules below are defined once: the gate validates with
:func:`validate_record`, and the escalator, batch labeling and the evaluation all ask
:func:`in_ask_band`, so ``classify``, ``label`` and ``eval`` report the same escalations.
Left out: label vocabularies beyond the decision head (events, tags and slots come from the
catalog that ships with each model) and anything that reads a model folder.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, NotRequired, Required, TypedDict

# --- names (spec §2) -------------------------------------------------------------------

HEAD_NAMES = ("decision", "events", "scenario_tags", "missing_slots")
MULTI_HEADS = ("events", "scenario_tags", "missing_slots")
DECISIONS = ("execute", "ask", "connect", "refuse", "safety")
Decision = Literal["execute", "ask", "connect", "refuse", "safety"]
# Spec §4: these never leave the machine, not even as a question to an LLM.
NEVER_ESCALATE = ("safety", "refuse")
PROVENANCES = ("mapped", "augmented", "authored")

# --- escalation defaults (spec §4; a model folder's gatecli.json may override them) -----

ASK_MARGIN = 0.15
MAX_SHARE = 0.2


def escalation_defaults() -> dict[str, float]:
    """A fresh copy of the escalation defaults (``ask_margin``, ``max_share``).

    Example:
        >>> escalation_defaults()
        {'ask_margin': 0.15, 'max_share': 0.2}
    """
    return {"ask_margin": ASK_MARGIN, "max_share": MAX_SHARE}


# --- records ---------------------------------------------------------------------------


class ChatTurn(TypedDict):
    role: str
    content: str


class UserProfile(TypedDict, total=False):
    skill_level: str
    known_preferences: list[str]


class GateInput(TypedDict, total=False):
    """Spec §1: one turn to classify; only ``user_message`` is required."""

    user_message: Required[str]
    id: str | int | None
    conversation_context: str | list[ChatTurn]
    available_files: list[Any]
    available_tools: list[str]
    connected_accounts: list[str]
    user_profile: UserProfile
    turn_index: int  # set by the chat reader: index of the message in ``messages``


class AppliedRuleJSON(TypedDict):
    rule_id: str
    decision: str
    reason: str


class GateValidationJSON(TypedDict):
    allowed: bool
    final_decision: str
    blocked_reasons: list[str]
    warnings: list[str]
    route_hint: str | None
    required_clarifications: list[str]
    next_action: str
    applied_rules: list[AppliedRuleJSON]


class GuardJSON(TypedDict):
    guard_name: str
    triggered: bool
    status: str
    skip_reason: str | None
    decision_reason: str
    payload: dict[str, Any]


class Fallback(TypedDict, total=False):
    """What escalation did: ``status`` is one of the values in :mod:`gatecli.llm.escalate`."""

    status: Required[str]
    reason: str
    correlation_id: str
    llm_ms: float


class GateOutput(TypedDict):
    """Spec §5: one classified turn (``line`` is added by the readers' callers)."""

    id: str | int | None
    turn_index: int
    lang: str
    decision: str
    confidence: float
    probabilities: dict[str, float]
    events: list[str]
    event_scores: dict[str, float]
    scenario_tags: list[str]
    scenario_confidence: dict[str, str]
    missing_slots: list[str]
    next_action: str
    gate_validation: GateValidationJSON
    guards: list[GuardJSON]
    coach: dict[str, Any] | None
    source: str
    fallback: Fallback
    model: str
    latency_ms: float
    line: NotRequired[int]


class ErrorRow(TypedDict):
    """A row that could not be classified, kept in its place (spec §5)."""

    id: str | int | None
    error: str
    line: NotRequired[int | None]
    turn_index: NotRequired[int]


class Labels(TypedDict):
    """Spec §6 labels; ``None`` means unknown for this record (masked, never "none")."""

    decision: str | None
    events: list[str] | None
    scenario_tags: list[str] | None
    missing_slots: list[str] | None


class DataRecord(TypedDict):
    """Spec §6: one labeled turn of the corpus or of an evaluation suite."""

    id: str
    source: str
    lang: str
    input: GateInput
    labels: Labels
    provenance: str
    note: str
    split: NotRequired[str]
    group: NotRequired[str]


# --- input validation (spec §1) ----------------------------------------------------------

LIST_FIELDS = ("available_tools", "connected_accounts")


def _tname(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def validate_record(record: Any) -> str | None:
    """Return why a gate-input record cannot be classified, or None when it can.

    Example:
        >>> validate_record({"user_message": "hi", "connected_accounts": 3})
        'connected_accounts must be a list of strings, got int'
    """
    if not isinstance(record, Mapping):
        return f"record must be a JSON object, got {_tname(record)}"
    if "user_message" not in record:
        return "missing user_message"
    msg = record["user_message"]
    if not isinstance(msg, str):
        return f"user_message must be a string, got {_tname(msg)}"
    if not msg.strip():
        return "user_message is empty"
    rid = record.get("id")
    if rid is not None and (isinstance(rid, bool) or not isinstance(rid, (str, int))):
        return f"id must be a string or an integer, got {_tname(rid)}"
    for key in LIST_FIELDS:
        v = record.get(key)
        if v is not None and not isinstance(v, list):
            return f"{key} must be a list of strings, got {_tname(v)}"
        bad = [x for x in v or () if not isinstance(x, str)]
        if bad:
            hint = (
                " (the tool names, not OpenAI tool objects: a chat record's `tools` takes those)"
                if key == "available_tools" and isinstance(bad[0], Mapping)
                else ""
            )
            return f"{key} must be a list of strings, got a list holding {_tname(bad[0])}{hint}"
    files = record.get("available_files")
    if files is not None and not isinstance(files, list):
        return f"available_files must be a list, got {_tname(files)}"
    ctx = record.get("conversation_context")
    if ctx is not None and not isinstance(ctx, (str, list)):
        return f"conversation_context must be a string or a list of turns, got {_tname(ctx)}"
    profile = record.get("user_profile")
    if profile is not None and not isinstance(profile, Mapping):
        return f"user_profile must be an object, got {_tname(profile)}"
    turn = record.get("turn_index")
    if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int) or turn < 0):
        return f"turn_index must be a non-negative integer, got {turn!r:.40}"
    try:  # every output row is UTF-8 JSON: what cannot be written is refused here, per row
        json.dumps(record, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        return "the record contains invalid Unicode (a lone surrogate, e.g. \\ud800)"
    except ValueError:
        return "the record contains NaN or Infinity, which JSON does not allow"
    except TypeError as exc:  # e.g. bytes or a timestamp from a Parquet column
        return f"the record holds a value JSON cannot represent ({exc})"
    return None


def record_id(record: Any) -> str | int | None:
    """The ``id`` of a record if it is a usable one (a string or an integer), else None."""
    rid = record.get("id") if isinstance(record, Mapping) else None
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


# --- the ask band (spec §4) --------------------------------------------------------------


def in_ask_band(
    decision: str | None, probabilities: Mapping[str, float], ask_margin: float = ASK_MARGIN
) -> tuple[bool, str]:
    """Whether a classified turn is in the ask band, and why (or why not).

    In the band: the turn's decision is ``ask`` (the model's or the policy's: its answer is
    a question, which is what the LLM coach writes), the top label is ``ask``, or ``p(ask)``
    is within ``ask_margin`` of the top label. Never when the decision or the top label is
    ``safety`` or ``refuse``. This is the only definition: the escalator calls it to decide,
    batch labeling and the evaluation call it to count.

    Example:
        >>> in_ask_band("ask", {"execute": 0.90, "ask": 0.05})[0]
        True
        >>> in_ask_band("execute", {"execute": 0.6, "ask": 0.3})[0]
        False
    """
    probs = probabilities or {}
    top = max(probs, key=lambda k: probs[k]) if probs else decision
    if decision in NEVER_ESCALATE or top in NEVER_ESCALATE:
        return False, f"{decision if decision in NEVER_ESCALATE else top} stays local"
    p_ask = float(probs.get("ask", 0.0))
    p_top = float(probs.get(top, 0.0)) if top is not None else 0.0
    if decision == "ask" or top == "ask":
        return True, f"ask band: decision {decision}, p(ask)={p_ask:.2f}"
    if p_ask >= p_top - ask_margin:
        return True, f"ask band: p(ask)={p_ask:.2f} within {ask_margin:g} of {top}"
    return False, f"outside the ask band (p(ask)={p_ask:.2f}, {top}={p_top:.2f})"


def escalates(result: Mapping[str, Any], ask_margin: float = ASK_MARGIN) -> bool:
    """:func:`in_ask_band` for an output record (an error row never escalates).

    Example:
        >>> escalates({"decision": "ask", "probabilities": {"execute": 0.9, "ask": 0.05}})
        True
    """
    if "error" in result:
        return False
    return in_ask_band(result.get("decision"), result.get("probabilities") or {}, ask_margin)[0]


# --- JSONL files of records ---------------------------------------------------------------

OnError = Callable[[int, str], None]


def iter_jsonl(path: str | Path, on_error: OnError | None = None) -> Iterator[tuple[int, Any]]:
    """``(line, value)`` for each non-blank line of a ``.jsonl`` or ``.jsonl.gz`` file.

    The one reader of record files (corpus splits, suites, authored turns). A line that is
    not JSON raises ``ValueError`` naming the file and line, or, with ``on_error``, is
    reported to it and skipped. Gate *inputs* are read by :mod:`gatecli.readers`, which
    keeps every row (bad ones as error rows) instead.

    Example:
        >>> [v for _, v in iter_jsonl("data/corpus/dev.jsonl.gz")][0]["source"]  # doctest: +SKIP
        'hwu64'
    """
    p = Path(path)
    with (
        gzip.open(p, "rt", encoding="utf-8") if p.suffix == ".gz" else open(p, encoding="utf-8")
    ) as fh:
        for n, text in enumerate(fh, 1):
            if not text.strip():
                continue
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                message = f"invalid JSON ({exc.msg} at column {exc.colno})"
                if on_error is None:
                    raise ValueError(f"{p}:{n}: {message}") from None
                on_error(n, message)
                continue
            yield n, value


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """The values of a record file (see :func:`iter_jsonl`), without line numbers."""
    for _, value in iter_jsonl(path):
        yield value
