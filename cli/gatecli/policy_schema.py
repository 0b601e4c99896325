"""The contract of the gate policy: what ``policy.yaml`` may declare and what a result must be.

Rules and guards are data so that a model folder (or a user) can change the gate without
touching code (spec §3). This module turns the YAML into checked, immutable declarations
once, at load time, so that a typo fails loudly with the rule's name instead of silently
never matching at runtime; :mod:`gatecli.policy` only evaluates them. The output side of
the same contract (seed 002 §9.3, spec §2.1) is :func:`consistency_errors`.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gatecli.records import DECISIONS

SEVERITIES = ("pass", "warn", "route", "ask", "block")  # merge order, lowest first (seed 002 §5)
RULE_TYPES = (
    "capability_gate", "scenario_gate", "business_guard", "payload_validation", "execution_gate",
)  # fmt: skip
# Spec §2.1: which turn decisions a gate severity may produce, and their next_action.
DECISIONS_FOR = {
    "pass": ("execute",), "warn": ("execute",), "ask": ("ask",),
    "route": ("connect", "safety"), "block": ("refuse",),
}  # fmt: skip
NEXT_ACTION = {
    "ask": "ask_clarification", "connect": "route", "refuse": "unsupported", "safety": "route",
}  # fmt: skip
EXECUTE_ACTIONS = ("continue", "confirm_execution")
GUARD_STATUS = {"pass": "passed", "warn": "warned", "route": "routed", "block": "blocked"}
CLARIFY_SOURCES = ("predicted_slots", "missing_required_slots")

BOOL_CONDITIONS = (
    "has_events", "unconnected_system", "unoffered_event", "offered_event",
    "catalog_tool_list", "missing_required_slot", "confirm_event",
)  # fmt: skip
PLACEHOLDERS = ("system", "decision", "events", "slots", "tags")  # usable in then texts
THEN_KEYS = (
    "severity", "decision", "reason", "route_hint", "blocked_reason", "warning",
    "next_action", "clarify", "drop_events", "stop", "payload", "set_decision",
)  # fmt: skip


class PolicyError(ValueError):
    """``policy.yaml`` is malformed; the message names the rule and the fix."""


class Facts(Protocol):
    """What a condition can look at (implemented by the engine's per-turn state).

    Read-only properties, so that any object whose attributes hold these values (the
    engine's mutable lists, a test's namespace) satisfies the protocol.
    """

    @property
    def decision(self) -> str: ...
    @property
    def tags(self) -> Sequence[str]: ...
    @property
    def events(self) -> Sequence[str]: ...
    @property
    def slots(self) -> Sequence[str]: ...

    def unconnected(self) -> list[str]: ...
    def unoffered(self) -> list[str]: ...
    def offered(self) -> list[str]: ...
    def catalog_tools(self) -> bool: ...
    def missing_required(self) -> list[str]: ...
    def confirm_events(self) -> list[str]: ...
    def next_action(self) -> str: ...


@dataclass(frozen=True)
class Rule:
    """A rule or guard declaration. Guards also carry ``skip_reason`` (seed 002 §8.2)."""

    rule_id: str
    rule_type: str
    when: Mapping[str, Any]
    then: Mapping[str, Any]
    skip_reason: str | None = None

    @property
    def severity(self) -> str | None:
        return self.then.get("severity")


@dataclass(frozen=True)
class Policy:
    """A compiled policy: decision precedence, then rules, guards and finalize rules in order."""

    precedence: tuple[tuple[str, float], ...]
    rules: tuple[Rule, ...]
    guards: tuple[Rule, ...]
    finalize: tuple[Rule, ...]
    # decision.segment_min_prob: the least probability a sentence scored alone needs to
    # override its turn (the segment rule); the precedence floor applies when it is higher.
    segment_min_prob: tuple[tuple[str, float], ...] = ()


def matches(when: Mapping[str, Any], f: Facts) -> bool:
    """True when every condition holds (``any_of`` holds when one of its branches does).

    Example:
        >>> from types import SimpleNamespace as NS
        >>> matches({"any_tag": ["hypothetical"]}, NS(tags=["hypothetical"]))
        True
    """
    return all(CONDITIONS[key](f, want) for key, want in when.items())


# Condition name -> test. The keys are the whole condition vocabulary of policy.yaml.
CONDITIONS: dict[str, Callable[[Facts, Any], bool]] = {
    "any_of": lambda f, branches: any(matches(b, f) for b in branches),
    "decision": lambda f, v: f.decision in v,
    "any_tag": lambda f, v: any(t in f.tags for t in v),
    "all_tags": lambda f, v: all(t in f.tags for t in v),
    "no_tag": lambda f, v: not any(t in f.tags for t in v),
    "any_event": lambda f, v: any(e in f.events for e in v),
    "any_slot": lambda f, v: any(s in f.slots for s in v),
    "next_action": lambda f, v: f.next_action() in v,
    "has_events": lambda f, v: bool(f.events) == v,
    "unconnected_system": lambda f, v: bool(f.unconnected()) == v,
    "unoffered_event": lambda f, v: bool(f.unoffered()) == v,
    "offered_event": lambda f, v: bool(f.offered()) == v,
    "catalog_tool_list": lambda f, v: f.catalog_tools() == v,
    "missing_required_slot": lambda f, v: bool(f.missing_required()) == v,
    "confirm_event": lambda f, v: bool(f.confirm_events()) == v,
}
LABEL_GROUPS = {
    "any_tag": "tags", "all_tags": "tags", "no_tag": "tags",
    "any_event": "events", "any_slot": "slots",
}  # fmt: skip


def compile_policy(
    data: Mapping[str, Any], labels: Mapping[str, Sequence[str]] | None = None
) -> Policy:
    """Check a parsed ``policy.yaml`` and freeze it; raise :class:`PolicyError` on any flaw.

    ``labels`` (``{"tags": [...], "events": [...], "slots": [...]}``, usually from the
    catalog) makes names in conditions checked too, so a renamed tag cannot go unnoticed.

    Example:
        >>> p = compile_policy({"rules": [{"rule_id": "r", "rule_type": "capability_gate",
        ...     "when": {}, "then": {"severity": "pass", "reason": "ok"}}]})
        >>> p.rules[0].severity
        'pass'
    """
    if not isinstance(data, Mapping):
        raise PolicyError("policy: top level must be a mapping")
    unknown = set(data) - {"format_version", "decision", "rules", "guards", "finalize"}
    if unknown:
        raise PolicyError(f"policy: unknown top-level key(s) {sorted(unknown)}")
    prec = []
    for i, item in enumerate((data.get("decision") or {}).get("precedence") or ()):
        where = f"policy: decision.precedence[{i}]"
        if not isinstance(item, Mapping) or item.get("label") not in DECISIONS:
            raise PolicyError(f"{where}: needs label (one of {DECISIONS}) and min_prob")
        p = item.get("min_prob")
        if not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise PolicyError(f"{where} ({item['label']}): min_prob must be a number in [0, 1]")
        prec.append((str(item["label"]), float(p)))
    seg = _segment_min_prob((data.get("decision") or {}).get("segment_min_prob"), prec)
    seen: set[str] = set()
    parts = {
        key: tuple(
            _rule(r, f"{key}[{i}]", kind, labels, seen) for i, r in enumerate(_seq(data, key))
        )
        for key, kind in (("rules", "rule"), ("guards", "guard"), ("finalize", "finalize"))
    }
    return Policy(precedence=tuple(prec), segment_min_prob=seg, **parts)


def _segment_min_prob(value: Any, prec: list[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    """``decision.segment_min_prob`` checked: a mapping of precedence labels to [0, 1]."""
    if value is None:
        return ()
    where = "policy: decision.segment_min_prob"
    if not isinstance(value, Mapping):
        raise PolicyError(f"{where}: must be a mapping of label -> min_prob")
    labels = [lab for lab, _ in prec]
    out = []
    for lab, p in value.items():
        if lab not in labels:
            raise PolicyError(f"{where}: {lab!r} is not a decision.precedence label {labels}")
        if not isinstance(p, (int, float)) or isinstance(p, bool) or not 0.0 <= p <= 1.0:
            raise PolicyError(f"{where} ({lab}): must be a number in [0, 1]")
        out.append((str(lab), float(p)))
    return tuple(out)


def _seq(data: Mapping[str, Any], key: str) -> list[Any]:
    value = data.get(key) or []
    if not isinstance(value, list):
        raise PolicyError(f"policy: {key} must be a list")
    return value


def _rule(
    raw: Any, where: str, kind: str, labels: Mapping[str, Sequence[str]] | None, seen: set[str]
) -> Rule:
    if not isinstance(raw, Mapping):
        raise PolicyError(f"policy: {where} must be a mapping")
    id_key = "guard_name" if kind == "guard" else "rule_id"
    rid = raw.get(id_key)
    if not isinstance(rid, str) or not rid:
        raise PolicyError(f"policy: {where} needs a {id_key}")
    where = f"policy: {where} ({rid})"
    if rid in seen:
        raise PolicyError(f"{where}: duplicate id")
    seen.add(rid)
    allowed = {id_key, "rule_type", "when", "then", "description"} | (
        {"skip_reason"} if kind == "guard" else set()
    )
    extra = set(raw) - allowed
    if extra:
        raise PolicyError(f"{where}: unknown key(s) {sorted(extra)}; allowed {sorted(allowed)}")
    rtype = raw.get("rule_type", "business_guard" if kind == "guard" else None)
    if rtype not in RULE_TYPES:
        raise PolicyError(f"{where}: rule_type must be one of {RULE_TYPES}, got {rtype!r}")
    when = raw.get("when") or {}
    _check_when(when, f"{where}.when", labels)
    then = raw.get("then")
    if not isinstance(then, Mapping):
        raise PolicyError(f"{where}: needs a then mapping")
    _check_then(then, f"{where}.then", kind)
    skip = raw.get("skip_reason")
    if kind == "guard" and not (isinstance(skip, str) and skip):
        raise PolicyError(
            f"{where}: a guard needs a skip_reason (seed 002 §8.1: skipped is not passed)"
        )
    return Rule(rule_id=rid, rule_type=rtype, when=dict(when), then=dict(then), skip_reason=skip)


def _check_when(when: Any, where: str, labels: Mapping[str, Sequence[str]] | None) -> None:
    if not isinstance(when, Mapping):
        raise PolicyError(f"{where} must be a mapping of conditions")
    for key, value in when.items():
        if key not in CONDITIONS:
            raise PolicyError(f"{where}: unknown condition {key!r}; known: {', '.join(CONDITIONS)}")
        if key == "any_of":
            if not isinstance(value, list) or not value:
                raise PolicyError(f"{where}.any_of must be a non-empty list of condition mappings")
            for j, branch in enumerate(value):
                _check_when(branch, f"{where}.any_of[{j}]", labels)
        elif key in BOOL_CONDITIONS:
            if not isinstance(value, bool):
                raise PolicyError(f"{where}.{key} must be true or false")
        elif not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise PolicyError(f"{where}.{key} must be a list of names")
        elif key == "decision" and set(value) - set(DECISIONS):
            raise PolicyError(f"{where}.decision: unknown {sorted(set(value) - set(DECISIONS))}")
        else:
            names = (labels or {}).get(LABEL_GROUPS.get(key, ""))
            if names and set(value) - set(names):
                bad = sorted(set(value) - set(names))
                raise PolicyError(f"{where}.{key}: {bad} not in the catalog's {LABEL_GROUPS[key]}")


def _check_then(then: Mapping[str, Any], where: str, kind: str) -> None:
    extra = set(then) - set(THEN_KEYS)
    if extra:
        raise PolicyError(f"{where}: unknown key(s) {sorted(extra)}; allowed {list(THEN_KEYS)}")
    if not isinstance(then.get("reason"), str) or not then["reason"]:
        raise PolicyError(f"{where}: needs a reason (it is reported in applied_rules)")
    for key in ("reason", "route_hint", "blocked_reason", "warning"):
        text = then.get(key)
        names = [n for _, n, _, _ in string.Formatter().parse(str(text or "")) if n is not None]
        if set(names) - set(PLACEHOLDERS):
            raise PolicyError(f"{where}.{key}: unknown placeholder(s) {names}; use {PLACEHOLDERS}")
    sev = then.get("severity")
    if kind == "finalize":
        if sev is not None or set(then) - {"reason", "drop_events"}:
            raise PolicyError(f"{where}: finalize rules may only set reason and drop_events")
        return
    if sev not in SEVERITIES:
        raise PolicyError(f"{where}: severity must be one of {SEVERITIES}, got {sev!r}")
    if kind == "guard" and sev not in GUARD_STATUS:
        raise PolicyError(
            f"{where}: a guard's severity is one of {list(GUARD_STATUS)}; use a rule for ask"
        )
    dec = then.get("decision", DECISIONS_FOR[sev][0])
    if dec not in DECISIONS_FOR[sev]:
        raise PolicyError(f"{where}: decision {dec!r} contradicts severity {sev!r} (spec §2.1)")
    hint = then.get("route_hint")
    if dec == "safety" and hint != "safety_protocol":
        raise PolicyError(f"{where}: a safety decision needs route_hint safety_protocol")
    if dec == "connect" and not (isinstance(hint, str) and hint.startswith("connect:")):
        raise PolicyError(f"{where}: a connect decision needs route_hint 'connect:<system>'")
    if sev == "block" and not then.get("blocked_reason"):
        raise PolicyError(f"{where}: severity block needs a blocked_reason (seed 002 §13)")
    if sev == "warn" and not then.get("warning"):
        raise PolicyError(f"{where}: severity warn needs a warning")
    nxt = then.get("next_action")
    if nxt is not None and (sev not in ("pass", "warn") or nxt not in EXECUTE_ACTIONS):
        raise PolicyError(f"{where}: next_action may only be {EXECUTE_ACTIONS} on pass/warn")
    clarify = then.get("clarify")
    if clarify is not None:
        ok = clarify in CLARIFY_SOURCES or (
            isinstance(clarify, list) and all(isinstance(c, str) for c in clarify)
        )
        if sev != "ask" or not ok:
            raise PolicyError(
                f"{where}: clarify (ask only) is a list of slots or one of {CLARIFY_SOURCES}"
            )
    if "set_decision" in then and then["set_decision"] not in DECISIONS:
        raise PolicyError(f"{where}.set_decision must be one of {DECISIONS}")
    for flag in ("drop_events", "stop"):
        if not isinstance(then.get(flag, False), bool):
            raise PolicyError(f"{where}.{flag} must be true or false")
    if not isinstance(then.get("payload", {}), Mapping):
        raise PolicyError(f"{where}.payload must be a mapping")


def consistency_errors(result: Any) -> list[str]:
    """Contradictions between decision, next_action, final_decision, hints and events.

    This is seed 002 §9.3 ``validate_next_action_consistency`` plus
    ``validate_guard_skipped_reason``; empty means consistent.

    ``result`` is a ``PolicyResult`` or its ``to_json()``.

    Example:
        >>> consistency_errors({"decision": "ask", "next_action": "continue", "events": [],
        ...     "missing_slots": [], "guards": [], "gate_validation": {"final_decision": "ask",
        ...     "next_action": "continue", "blocked_reasons": [], "allowed": False,
        ...     "route_hint": None, "required_clarifications": []}})[0]
        "next_action 'continue' contradicts decision 'ask' (expected ('ask_clarification',))"
    """
    r = result.to_json() if hasattr(result, "to_json") else result
    g, dec, nxt = r["gate_validation"], r["decision"], r["next_action"]
    final, errs = g["final_decision"], []
    if dec not in DECISIONS or final not in DECISIONS_FOR or dec not in DECISIONS_FOR[final]:
        errs.append(f"decision {dec!r} contradicts final_decision {final!r}")
    if nxt != g["next_action"]:
        errs.append(f"next_action {nxt!r} != gate_validation.next_action {g['next_action']!r}")
    want = ("continue", "confirm_execution") if dec == "execute" else (NEXT_ACTION.get(dec),)
    if nxt not in want:
        errs.append(f"next_action {nxt!r} contradicts decision {dec!r} (expected {want})")
    if bool(g["blocked_reasons"]) != (final == "block"):
        errs.append(f"blocked_reasons {g['blocked_reasons']} contradict final_decision {final!r}")
    if g["allowed"] != (final in ("pass", "warn")):
        errs.append(f"allowed={g['allowed']} contradicts final_decision {final!r}")
    if dec == "safety" and g["route_hint"] != "safety_protocol":
        errs.append("safety without route_hint safety_protocol")
    if dec == "connect" and not str(g["route_hint"]).startswith("connect:"):
        errs.append(f"connect with route_hint {g['route_hint']!r}")
    if dec in ("ask", "refuse", "safety") and r["events"]:
        errs.append(f"events {r['events']} emitted for {dec}")
    if r["missing_slots"] != g["required_clarifications"] or (r["missing_slots"] and dec != "ask"):
        errs.append("missing_slots must equal required_clarifications and appear only for ask")
    if nxt == "confirm_execution" and not r["events"]:
        errs.append("confirm_execution without an event")
    for gd in r["guards"]:
        skipped = gd["status"] == "skipped"
        if gd["triggered"] == skipped or (skipped and not gd["skip_reason"]):
            errs.append(f"guard {gd['guard_name']}: triggered/status/skip_reason disagree")
    return errs
