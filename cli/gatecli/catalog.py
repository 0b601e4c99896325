"""Typed view of a model's action catalog (``catalog.yaml``, spec §2.2).

The catalog is the only place that knows which system an event needs, which slots must be
known before it fires and whether it needs a confirmation; the policy engine reads these
facts from here so that a user's own catalog changes behaviour without code changes.
Account names from ``connected_accounts`` are free text written by integrators, so they are
matched to systems case-insensitively and through the aliases the catalog declares.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from gatecli import yamlfile
from gatecli.template import normalize_name, tool_words

DEFAULT_DECISIONS = ("execute", "ask", "connect", "refuse", "safety")
RISKS = ("low", "high")


class CatalogError(ValueError):
    """The catalog is malformed; the message names the entry and what to fix."""


@dataclass(frozen=True)
class EventSpec:
    """One catalog event: what it needs before it may fire."""

    name: str
    description: str = ""
    risk: str = "low"
    confirm: bool = False
    requires: tuple[str, ...] = ()
    required_slots: tuple[str, ...] = ()
    # Tool names that agents give this event's tool, as tool_words (``searchWeb`` and
    # ``search_web`` are one): a listed tool with one of them offers the event (policy).
    tools: tuple[str, ...] = ()
    # False for an event the agent carries out without a tool (session.terminate: the
    # conversation ends): no tool list can lack it.
    needs_tool: bool = True


@dataclass(frozen=True)
class Catalog:
    """Events, systems (with account aliases) and the label lists of every head."""

    events: dict[str, EventSpec]
    systems: dict[str, tuple[str, ...]] = field(default_factory=dict)
    decisions: tuple[str, ...] = DEFAULT_DECISIONS
    scenario_tags: tuple[str, ...] = ()
    missing_slots: tuple[str, ...] = ()
    # Tool names (as tool_words) that serve none of the events: with the events' own
    # ``tools``, the names whose use the catalog knows, so a list of only such names is closed.
    known_tools: frozenset[str] = frozenset()

    @property
    def event_names(self) -> list[str]:
        return list(self.events)

    def event(self, name: str) -> EventSpec:
        """The event's spec; an event unknown to the catalog needs nothing."""
        return self.events.get(name) or EventSpec(name=name)

    @cached_property
    def _events_by_tool(self) -> dict[str, tuple[str, ...]]:
        by_tool: dict[str, list[str]] = {}
        for spec in self.events.values():
            for tool in spec.tools:
                by_tool.setdefault(tool, []).append(spec.name)
        return {tool: tuple(events) for tool, events in by_tool.items()}

    def knows_tool(self, tool: str) -> bool:
        """Whether the catalog says what ``tool`` serves: an event's name or one of its
        declared ``tools`` (any spelling), or a name in ``known_tools`` (it serves none).

        Why: a tool list is closed (what it does not offer, the agent cannot do) only when the
        runtime can read every name on it; Home Assistant's LLM API lists ``HassTurnOn`` and
        also ``GetLiveContext``, which serves no catalog event but is no unknown either.

        Example:
            >>> cat = Catalog.default()
            >>> cat.knows_tool("HassLightSet"), cat.knows_tool("GetLiveContext")
            (True, True)
            >>> cat.knows_tool("alarm_set"), cat.knows_tool("run_my_script")
            (True, False)
        """
        key = tool_words(tool)
        return key in self._event_words or key in self._events_by_tool or key in self.known_tools

    @cached_property
    def _event_words(self) -> frozenset[str]:
        return frozenset(tool_words(e) for e in self.events)

    @cached_property
    def tool_free_events(self) -> frozenset[str]:
        """Events that need no tool (``needs_tool: false``): a tool list never lacks them.

        Why: "bye" under a closed list (the spec's own form, event names only; Home
        Assistant's intents) was routed to ``connect:tool`` because no listed tool serves
        session.terminate, while ending the conversation is the agent's own act.

        Example:
            >>> sorted(Catalog.default().tool_free_events)
            ['session.terminate']
        """
        return frozenset(e.name for e in self.events.values() if not e.needs_tool)

    def events_for_tools(self, tools: Iterable[str]) -> set[str]:
        """Events whose declared ``tools`` name one of ``tools`` (any spelling).

        Why: a tool named for its event (``alarm_set``) is read by name, but the tool an agent
        registers for most requests shares no word with them: "what's the weather in Paris"
        is served by ``web_search``. The model reads such a list badly (gate-small 1.2.40 said
        ``connect`` on most search requests whose list offered ``web_search``); a name the
        catalog declares is a fact, like an account alias, not a guess.

        Example:
            >>> sorted(Catalog.default().events_for_tools(["searchWeb", "set_volume"]))
            ['knowledge.web.search']
        """
        by_tool = self._events_by_tool
        return {e for t in tools for e in by_tool.get(tool_words(t), ())}

    def systems_for_account(self, account: str) -> set[str]:
        """Systems an account name satisfies (an alias may serve several, e.g. outlook).

        Example:
            >>> Catalog.default().systems_for_account("Google-Calendar")
            {'calendar'}
        """
        key = normalize_account(account)
        return {sys for sys, aliases in self.systems.items() if key in aliases}

    def connected_systems(self, accounts: Iterable[Any] | None) -> set[str]:
        """All systems satisfied by ``record["connected_accounts"]`` (None or junk: none).

        Example:
            >>> sorted(Catalog.default().connected_systems(["outlook"]))
            ['calendar', 'email']
        """
        if accounts is None or isinstance(accounts, (str, bytes)):
            accounts = [accounts] if isinstance(accounts, str) else []
        out: set[str] = set()
        for acc in accounts:
            if isinstance(acc, str) and acc.strip():
                out |= self.systems_for_account(acc)
        return out

    def unconnected_systems(
        self, events: Iterable[str], accounts: Iterable[Any] | None
    ) -> list[str]:
        """Systems the given events require that no connected account satisfies, in order.

        Example:
            >>> Catalog.default().unconnected_systems(["calendar.schedule.create"], [])
            ['calendar']
        """
        have = self.connected_systems(accounts)
        out: list[str] = []
        for ev in events:
            for sys in self.event(ev).requires:
                if sys not in have and sys not in out:
                    out.append(sys)
        return out

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Catalog:
        """Build and check a catalog from parsed YAML; raise :class:`CatalogError`.

        Example:
            >>> Catalog.from_mapping({"events": [{"name": "media.play"}]}).event_names
            ['media.play']
        """
        if not isinstance(data, Mapping):
            raise CatalogError("catalog: top level must be a mapping")
        systems: dict[str, tuple[str, ...]] = {}
        for name, spec in (data.get("systems") or {}).items():
            aliases = spec.get("aliases") if isinstance(spec, Mapping) else spec
            aliases = [] if aliases is None else aliases
            if not isinstance(aliases, list):
                raise CatalogError(f"catalog: systems.{name}.aliases must be a list")
            systems[str(name)] = tuple(
                dict.fromkeys(normalize_account(str(a)) for a in [name, *aliases])
            )
        slots = tuple(str(s) for s in data.get("missing_slots") or ())
        events: dict[str, EventSpec] = {}
        for i, raw in enumerate(data.get("events") or ()):
            events_entry = _event(i, raw, systems, slots)
            if events_entry.name in events:
                raise CatalogError(f"catalog: events[{i}] duplicates {events_entry.name!r}")
            events[events_entry.name] = events_entry
        known = data.get("known_tools") or []
        if not isinstance(known, list):
            raise CatalogError("catalog: known_tools must be a list of tool names")
        return cls(
            events=events,
            systems=systems,
            decisions=tuple(data.get("decisions") or DEFAULT_DECISIONS),
            scenario_tags=tuple(str(t) for t in data.get("scenario_tags") or ()),
            missing_slots=slots,
            known_tools=frozenset(k for k in (tool_words(str(t)) for t in known) if k),
        )

    @classmethod
    def load(cls, path: str | Path) -> Catalog:
        """Read a catalog file.

        Example:
            >>> Catalog.load(default_catalog_path()).events["alarm.set"].required_slots
            ('time',)
        """
        text = Path(path).read_text(encoding="utf-8")
        try:
            return cls.from_mapping(yamlfile.safe_load(text) or {})
        except CatalogError as exc:
            raise CatalogError(f"{path}: {exc}") from exc

    @classmethod
    def default(cls) -> Catalog:
        """The catalog shipped with gatecli (``cli/gatecli/assets/catalog.yaml``).

        Example:
            >>> "calendar" in Catalog.default().systems
            True
        """
        return cls.load(default_catalog_path())


def normalize_account(name: str) -> str:
    """``"Google Calendar"``, ``"google-calendar"`` and ``"GOOGLE_CALENDAR"`` are one name.

    Example:
        >>> normalize_account(" Google-Calendar ")
        'google_calendar'
    """
    return normalize_name(name)


def default_catalog_path() -> Path:
    """Path of the packaged default catalog (works for editable and wheel installs).

    Example:
        >>> default_catalog_path().name
        'catalog.yaml'
    """
    return Path(str(resources.files("gatecli") / "assets" / "catalog.yaml"))


def _event(i: int, raw: Any, systems: Mapping[str, Any], slots: tuple[str, ...]) -> EventSpec:
    where = f"catalog: events[{i}]"
    if not isinstance(raw, Mapping) or not raw.get("name"):
        raise CatalogError(f"{where} needs a mapping with a name")
    name = str(raw["name"])
    risk = str(raw.get("risk", "low"))
    if risk not in RISKS:
        raise CatalogError(f"{where} ({name}): risk must be one of {RISKS}, got {risk!r}")
    requires = tuple(str(s) for s in raw.get("requires") or ())
    unknown = [s for s in requires if s not in systems]
    if unknown:
        raise CatalogError(
            f"{where} ({name}): requires unknown system(s) {unknown}; declare them under systems"
        )
    tools = raw.get("tools") or []
    if not isinstance(tools, list):
        raise CatalogError(f"{where} ({name}): tools must be a list of tool names")
    tool_keys = tuple(dict.fromkeys(k for k in (tool_words(str(t)) for t in tools) if k))
    needs_tool = raw.get("needs_tool", True)
    if not isinstance(needs_tool, bool):
        raise CatalogError(f"{where} ({name}): needs_tool must be true or false")
    if tools and not needs_tool:
        raise CatalogError(f"{where} ({name}): an event with needs_tool: false lists no tools")
    req_slots = tuple(str(s) for s in raw.get("required_slots") or ())
    bad = [s for s in req_slots if slots and s not in slots]
    if bad:
        raise CatalogError(
            f"{where} ({name}): required_slots {bad} not in missing_slots {list(slots)}"
        )
    return EventSpec(
        name=name,
        description=str(raw.get("description", "")),
        risk=risk,
        confirm=bool(raw.get("confirm", False)),
        requires=requires,
        required_slots=req_slots,
        tools=tool_keys,
        needs_tool=needs_tool,
    )
