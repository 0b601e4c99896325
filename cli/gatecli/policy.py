"""The policy engine: calibrated head outputs + catalog facts -> one consistent gate result.

The model only gives probabilities; what the gate *does* with them (who outranks whom,
which catalog facts turn ``execute`` into ``connect`` or ``ask``, which scenario guards fire)
is declared in ``policy.yaml`` and interpreted here (spec §3, seed 002). The engine is pure
and cheap (no model calls) so it can be re-run with another policy on stored predictions.
The merge (``block > ask > route > warn > pass``) and the spec §2.1 table are fixed here
because they are the contract every policy must satisfy, not policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from gatecli import yamlfile
from gatecli.catalog import Catalog
from gatecli.heads import HeadOutputs
from gatecli.policy_schema import (
    DECISIONS_FOR,
    GUARD_STATUS,
    NEXT_ACTION,
    SEVERITIES,
    Policy,
    PolicyError,
    Rule,
    compile_policy,
    consistency_errors,
    matches,
)
from gatecli.records import DECISIONS
from gatecli.template import canonical_tools

__all__ = ["PolicyError", "PolicyResult", "apply_policy", "consistency_errors", "load_policy"]


@dataclass
class AppliedRule:
    rule_id: str
    decision: str
    reason: str


@dataclass
class GuardResult:
    guard_name: str
    triggered: bool
    status: str
    skip_reason: str | None = None
    decision_reason: str = ""
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass
class GateValidation:
    allowed: bool
    final_decision: str
    blocked_reasons: list[str]
    warnings: list[str]
    route_hint: str | None
    required_clarifications: list[str]
    next_action: str
    applied_rules: list[AppliedRule]


@dataclass
class PolicyResult:
    """The policy part of an output record (spec §5): decision ... guards."""

    decision: str
    next_action: str
    events: list[str]
    missing_slots: list[str]
    gate_validation: GateValidation
    guards: list[GuardResult]
    model_decision: str = ""

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        del out["model_decision"]
        return out


class _Fired(NamedTuple):
    """A rule or guard that matched, with its text filled in at the moment it fired."""

    rule: Rule
    severity: str
    reason: str
    route_hint: str | None
    blocked_reason: str | None
    warning: str | None
    clarify: list[str]


class _Turn:
    """Mutable per-turn state that conditions read (the :class:`gatecli.policy_schema.Facts`)."""

    def __init__(self, pred: HeadOutputs, record: Any, catalog: Catalog, decision: str):
        self.pred, self.catalog, self.decision = pred, catalog, decision
        is_map = isinstance(record, Mapping)
        self.accounts = record.get("connected_accounts") if is_map else None
        self.tools = record.get("available_tools") if is_map else None
        self.tags, self.slots = list(pred.tags), list(pred.slots)
        self.events: list[str] = list(dict.fromkeys(pred.events))
        self.fired: list[_Fired] = []

    def unconnected(self) -> list[str]:
        return self.catalog.unconnected_systems(self.events, self.accounts)

    def unoffered(self) -> list[str]:
        """Selected events needing a tool that the turn's list does not offer (none without a
        list; :meth:`_tool_events`).

        A tool counts as offering an event only when its name is the event's, in any
        spelling (``set_alarm`` is not ``alarm.set``), or one the catalog declares for it
        (the event's ``tools``): agents name their tools freely, so the runtime cannot tell
        that an undeclared ``schedule_event`` serves ``calendar.schedule.create``.
        The model reads the list (template field ``tools``) and was trained to say
        ``connect`` when no listed tool serves the request; a rule that overrides the
        model's ``connect`` from catalog facts must not fire where the list, not an
        account, is why it said so. The list is read as the template reads it, so ``[]``,
        ``None`` or blank names restrict nothing (an empty field must not change a decision).
        """
        if not self.events or not self._named_tools:  # no list: nothing is left out
            return []
        return [e for e in self._tool_events() if e not in self._offering]

    def offered(self) -> list[str]:
        """Selected events needing a tool that the turn's list offers (none without a list)."""
        if not self.events:
            return []
        return [e for e in self._tool_events() if e in self._offering]

    def _tool_events(self) -> list[str]:
        """Selected events that need a tool: a list neither offers nor lacks the others
        (``needs_tool: false``: saying goodbye is the agent's own act)."""
        free = self.catalog.tool_free_events
        return [e for e in self.events if e not in free]

    @cached_property
    def _offering(self) -> frozenset[str]:
        """Events the list offers: named in any spelling, or by a tool name the catalog
        declares for them (an event's ``tools``: ``web_search`` for the search event)."""
        named = self._named_tools
        return named | self.catalog.events_for_tools(named)

    @cached_property
    def _named_tools(self) -> frozenset[str]:
        """The tool list as the template reads it, once per turn (rules ask several times)."""
        return frozenset(canonical_tools(self.tools, self.catalog.event_names, words=True))

    def catalog_tools(self) -> bool:
        """The turn lists tools and the catalog knows what every one serves: a catalog event
        (any spelling), a name an event declares (its ``tools``) or a ``known_tools`` name.

        Such a list is closed: an event it does not offer is an action the agent does not
        have (the spec's input example lists its tools in event names; Home Assistant's LLM
        API lists its intents, which the catalog declares). A list with any freely named tool
        is not, since the runtime cannot tell what ``schedule_event`` serves. Read as the
        template reads it: ``[]``, ``None`` and blank names make no list.
        """
        names = self._named_tools
        return bool(names) and all(self.catalog.knows_tool(n) for n in names)

    def missing_required(self) -> list[str]:
        req = [s for e in self.events for s in self.catalog.event(e).required_slots]
        return [s for s in dict.fromkeys(req) if s in self.slots]

    def confirm_events(self) -> list[str]:
        return [e for e in self.events if self.catalog.event(e).confirm]

    def next_action(self) -> str:
        return _merge(self.fired, self.events)[2]

    def connect_system(self) -> str:
        """The system to connect: one that a chosen event requires and is not connected.

        With no chosen event, only the single best-scored event is asked (a system that
        some lower-ranked event would need is another request's system, never this one's);
        when it needs nothing unconnected either, the hint is the generic ``account``.
        Chosen events that need no unconnected system but that the turn's tool list leaves
        out (:meth:`unoffered`) lack a tool, not an account: the hint is ``tool``.
        """
        found = self.unconnected()
        if not found and self.unoffered():
            return "tool"
        if not found and not self.events and self.pred.event_scores:
            best = max(self.pred.event_scores, key=self.pred.event_scores.__getitem__)
            found = self.catalog.unconnected_systems([best], self.accounts)
        return found[0] if found else "account"

    def fill(self, text: str | None) -> str | None:
        if not text or "{" not in text:
            return text
        values = {
            "system": self.connect_system() if "{system}" in text else "",
            "decision": self.decision,
            "events": ", ".join(self.events) or "none",
            "slots": ", ".join(self.slots) or "none",
            "tags": ", ".join(self.tags) or "none",
        }
        return text.format_map(values)

    def fire(self, rule: Rule, final: str = "") -> _Fired:
        """Record a matching rule (texts filled now, then its effects), return the record."""
        t = rule.then
        fired = _Fired(
            rule, t.get("severity") or final, self.fill(t["reason"]) or "",
            self.fill(t.get("route_hint")), self.fill(t.get("blocked_reason")),
            self.fill(t.get("warning")), self._clarify(t.get("clarify")),
        )  # fmt: skip
        if t.get("severity"):
            self.fired.append(fired)
        if t.get("drop_events"):
            self.events = []
        if t.get("set_decision"):  # later conditions see the corrected decision
            self.decision = t["set_decision"]
        return fired

    def _clarify(self, spec: Any) -> list[str]:
        if spec == "missing_required_slots":
            return self.missing_required()
        if spec == "predicted_slots":
            if self.slots or not self.pred.slot_scores:
                return list(self.slots)
            return [max(self.pred.slot_scores, key=self.pred.slot_scores.__getitem__)]
        return list(spec or [])


def model_decision(probs: Mapping[str, float], precedence: Sequence[tuple[str, float]]) -> str:
    """Precedence labels (safety, refuse) win above their floor even when not the argmax.

    Example:
        >>> model_decision({"execute": 0.6, "safety": 0.35}, [("safety", 0.3)])
        'safety'
    """
    if not probs:
        raise ValueError("decision_probs is empty; the decision head gave no probabilities")
    for label, floor in precedence:
        if probs.get(label, 0.0) >= floor:
            return label
    top = max(probs, key=probs.__getitem__)
    if top not in DECISIONS:
        raise ValueError(f"decision label {top!r} is not one of {DECISIONS}")
    return top


def apply_policy(
    pred: HeadOutputs,
    record: Mapping[str, Any],
    catalog: Catalog,
    policy: Mapping[str, Any] | Policy,
    *,
    decision_thresholds: Mapping[str, float] | None = None,
) -> PolicyResult:
    """Turn one turn's head outputs into decision, events, gate_validation and guards.

    ``decision_thresholds`` (the artifact's calibrated per-label minimums of the decision
    head) override the policy's ``min_prob`` for the labels in ``decision.precedence``.

    Example:
        >>> pred = HeadOutputs({"execute": 0.9, "ask": 0.1}, events=["media.play"])
        >>> apply_policy(pred, {}, Catalog.default(), load_policy()).events
        ['media.play']
    """
    pol = policy if isinstance(policy, Policy) else compile_policy(policy)
    over = decision_thresholds or {}
    model = model_decision(
        pred.decision_probs, [(lab, float(over.get(lab, p))) for lab, p in pol.precedence]
    )
    turn = _Turn(pred, record, catalog, model)
    stopped_by = None
    for rule in pol.rules:
        if matches(rule.when, turn):
            turn.fire(rule)
            if rule.then.get("stop"):
                stopped_by = rule.rule_id
                break
    guards: list[GuardResult] = []
    for g in pol.guards:
        if stopped_by or not matches(g.when, turn):
            why = f"preempted_by:{stopped_by}" if stopped_by else g.skip_reason
            guards.append(GuardResult(g.rule_id, False, "skipped", why))
        else:
            f = turn.fire(g)
            status, payload = GUARD_STATUS[f.severity], dict(g.then.get("payload", {}))
            guards.append(GuardResult(g.rule_id, True, status, None, f.reason, payload))
    final, decision, next_action, hint = _merge(turn.fired, turn.events)
    clar = _texts(turn.fired, "ask", "clarify") if final == "ask" else []
    applied = [AppliedRule(f.rule.rule_id, f.severity, f.reason) for f in turn.fired]
    turn.decision = decision
    for r in pol.finalize:
        if matches(r.when, turn):
            applied.append(AppliedRule(r.rule_id, final, turn.fire(r, final).reason))
    gate = GateValidation(
        allowed=final in ("pass", "warn"),
        final_decision=final,
        blocked_reasons=_texts(turn.fired, "block", "blocked_reason"),
        warnings=_texts(turn.fired, "warn", "warning"),
        route_hint=hint,
        required_clarifications=clar,
        next_action=next_action,
        applied_rules=applied,
    )
    return PolicyResult(decision, next_action, list(turn.events), list(clar), gate, guards, model)


def _texts(fired: Sequence[_Fired], severity: str, name: str) -> list[str]:
    """The distinct values of one field over the fired rules of one severity, in order."""
    vals = [getattr(f, name) for f in fired if f.severity == severity]
    flat = [v for val in vals for v in (val if isinstance(val, list) else [val])]
    return list(dict.fromkeys(v for v in flat if v))


def _merge(fired: Sequence[_Fired], events: Sequence[str]) -> tuple[str, str, str, str | None]:
    """(final_decision, decision, next_action, route_hint): block > ask > route > warn > pass."""
    final = max((f.severity for f in fired), key=SEVERITIES.index, default="pass")
    level = ("pass", "warn") if final in ("pass", "warn") else (final,)
    top = [f for f in fired if f.severity in level]
    decision = next((f.rule.then["decision"] for f in top if "decision" in f.rule.then), None)
    decision = decision or DECISIONS_FOR[final][0]
    hint = next((f.route_hint for f in top if f.route_hint), None)
    if decision != "execute":
        return final, decision, NEXT_ACTION[decision], hint
    confirm = any(f.rule.then.get("next_action") == "confirm_execution" for f in top)
    return final, decision, "confirm_execution" if confirm and events else "continue", hint


def default_policy_path() -> Path:
    """The packaged default ``policy.yaml`` (copied into every model folder).

    Example:
        >>> default_policy_path().name
        'policy.yaml'
    """
    return Path(str(resources.files("gatecli") / "assets" / "policy.yaml"))


def load_policy(
    source: str | Path | Mapping[str, Any] | None = None, catalog: Catalog | None = None
) -> Policy:
    """Read (a path), check and compile a policy; names are checked against ``catalog``.

    Example:
        >>> len(load_policy(catalog=Catalog.default()).guards)
        8
    """
    where = "policy"
    if source is None or isinstance(source, (str, Path)):
        path = Path(source) if source is not None else default_policy_path()
        where = str(path)
        try:
            source = yamlfile.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise PolicyError(f"{where}: unreadable ({exc})") from exc
    labels = None if catalog is None else {
        "tags": catalog.scenario_tags, "events": catalog.event_names, "slots": catalog.missing_slots
    }  # fmt: skip
    try:
        return compile_policy(source, labels)
    except PolicyError as exc:
        if where == "policy":
            raise
        raise PolicyError(f"{where}: {exc}") from exc
