"""Home Assistant intents: expand the sentence templates (training) and read the tests (eval).

The templates are expanded with hassil's parser but our own seeded random walk, because
hassil's exhaustive sampler yields the first N sentences of a product (all alike) and the
entity/area names are runtime lists the templates do not carry.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import yaml

from gatecli_train.corpus.records import make_record

LANGS = {"en": "en", "fr": "fr", "zh-cn": "zh"}
SEARCH = "knowledge.web.search"
INTENT_EVENTS: dict[str, list[str]] = {
    "HassLightSet": ["device.light.adjust"],
    "HassSetVolume": ["device.volume.adjust"],
    "HassSetVolumeRelative": ["device.volume.adjust"],
    "HassMediaPlayerMute": ["device.volume.adjust"],
    "HassMediaPlayerUnmute": ["device.volume.adjust"],
    "HassMediaPause": ["media.control"],
    "HassMediaUnpause": ["media.control"],
    "HassMediaNext": ["media.control"],
    "HassMediaPrevious": ["media.control"],
    "HassMediaSearchAndPlay": ["media.play"],
    "HassStartTimer": ["alarm.set"],
    "HassGetWeather": [SEARCH],
    "HassListAddItem": ["list.update"],
    "HassShoppingListAddItem": ["list.update"],
    "HassListCompleteItem": ["list.update"],
    "HassShoppingListCompleteItem": ["list.update"],
    "HassVacuumStart": ["device.power.toggle"],
    "HassVacuumReturnToBase": ["device.power.toggle"],
    "HassGetCurrentTime": [],
    "HassGetCurrentDate": [],
    "HassGetState": [],
    "HassClimateGetTemperature": [],
    "HassClimateSetTemperature": [],
    "HassNevermind": [],
    **{
        k: ["alarm.manage"]
        for k in [
            "HassCancelTimer",
            "HassCancelAllTimers",
            "HassDecreaseTimer",
            "HassIncreaseTimer",
            "HassPauseTimer",
            "HassUnpauseTimer",
            "HassTimerStatus",
        ]
    },
}
# Sensor/state questions expand into unnatural sentences with our made-up names.
TEMPLATE_SKIP = {"HassGetState"}
TOGGLE_DOMAINS = {"fan", "switch", "vacuum", "homeassistant", "media_player", "input_boolean"}

NAMES = {
    "en": {
        "light": ["ceiling light", "desk lamp", "porch light"],
        "fan": ["bedroom fan", "ceiling fan"],
        "media_player": ["TV", "kitchen speaker"],
        "weather": ["Paris", "home"],
        "vacuum": ["robot vacuum"],
        "_": ["coffee machine", "heater", "fan", "TV", "dehumidifier"],
    },
    "fr": {
        "light": ["plafonnier", "lampe de bureau", "lumière du salon"],
        "fan": ["ventilateur", "ventilateur de la chambre"],
        "media_player": ["télé", "enceinte"],
        "weather": ["Paris", "Lyon"],
        "vacuum": ["aspirateur robot"],
        "_": ["machine à café", "radiateur", "ventilateur", "télé"],
    },
    "zh-cn": {
        "light": ["吊灯", "台灯", "客厅灯"],
        "fan": ["风扇", "卧室风扇"],
        "media_player": ["电视", "音箱"],
        "weather": ["北京", "上海"],
        "vacuum": ["扫地机器人"],
        "_": ["咖啡机", "电暖器", "风扇", "电视", "加湿器"],
    },
}
AREAS = {
    "en": ["kitchen", "living room", "bedroom", "office"],
    "fr": ["cuisine", "salon", "chambre", "bureau"],
    "zh-cn": ["客厅", "厨房", "卧室", "书房"],
}
WILDCARDS = {
    "en": {
        "shopping_list_item": ["milk", "eggs", "batteries"],
        "todo_list_item": ["call mom", "laundry"],
        "search_query": ["jazz", "the Beatles", "a podcast about history"],
        "timer_name": ["pasta", "laundry"],
        "message": ["dinner is ready"],
        "zone": ["home", "work"],
        "todo_list": ["shopping list", "to-do list"],
    },
    "fr": {
        "shopping_list_item": ["du lait", "des œufs", "du pain"],
        "timer_name": ["pâtes", "gâteau"],
        "message": ["le dîner est prêt"],
        "zone": ["la maison", "le travail"],
        "todo_list": ["liste de courses"],
        "todo_list_item": ["du lait", "appeler maman"],
        "search_query": ["du jazz", "Stromae"],
    },
    "zh-cn": {
        "timer_name": ["煮面", "洗衣"],
        "response": ["好的"],
        "todo_list": ["购物清单"],
        "todo_list_item": ["牛奶", "鸡蛋"],
        "shopping_list_item": ["牛奶", "鸡蛋"],
        "search_query": ["周杰伦的歌", "轻音乐"],
    },
}


_CJK_GAP = re.compile(
    r"(?<=[\u3000-\u9fff\uff00-\uffef]) +(?=[\u3000-\u9fff\uff00-\uffef\d])|"
    r"(?<=\d) +(?=[\u3000-\u9fff])"
)


def tidy(text: str, lang: str) -> str:
    """Template pieces are space-joined; Chinese does not put spaces between words."""
    text = " ".join(text.split())
    return _CJK_GAP.sub("", text) if lang == "zh-cn" else text


def events_for(intent: str, domain: str | None) -> list[str] | None:
    """Catalog events of an HA intent in a domain; None when we leave it out (locks, covers)."""
    if intent in ("HassTurnOn", "HassTurnOff"):
        if domain == "light":
            return ["device.light.adjust"]
        return ["device.power.toggle"] if (domain or "homeassistant") in TOGGLE_DOMAINS else None
    return INTENT_EVENTS.get(intent)


def _domain(path: Path, intent_data: dict) -> str | None:
    for key in ("slots", "requires_context"):
        dom = (intent_data.get(key) or {}).get("domain")
        if isinstance(dom, str):
            return dom
    stem = path.stem
    return stem.split("_Hass")[0] if "_Hass" in stem else None


def _expand(expr: Any, rng: random.Random, lists: dict, rules: dict, lang: str, dom: str | None):
    from hassil.expression import Alternative, ListReference, Permutation, RuleReference, TextChunk
    from hassil.expression import Sequence as Seq
    from hassil.intents import RangeSlotList, TextSlotList

    rec = lambda e: _expand(e, rng, lists, rules, lang, dom)  # noqa: E731
    if isinstance(expr, TextChunk):
        return expr.original_text
    if isinstance(expr, Alternative):
        return rec(rng.choice(expr.items))
    if isinstance(expr, Permutation):
        items = list(expr.items)
        rng.shuffle(items)
        return " ".join(rec(i) for i in items)
    if isinstance(expr, Seq):
        return "".join(rec(i) for i in expr.items)
    if isinstance(expr, RuleReference):
        return rec(rules[expr.rule_name].expression)
    if isinstance(expr, ListReference):
        name = expr.list_name
        if name == "name":
            pool = NAMES[lang]
            return rng.choice(pool.get(dom or "_", pool["_"]))
        if name in ("area", "floor"):
            return rng.choice(AREAS[lang])
        slot_list = lists.get(name)
        if isinstance(slot_list, TextSlotList) and slot_list.values:
            return rec(rng.choice(slot_list.values).text_in)
        if isinstance(slot_list, RangeSlotList):
            return str(rng.choice(range(slot_list.start, slot_list.stop + 1, slot_list.step)))
        if name in WILDCARDS[lang]:
            return rng.choice(WILDCARDS[lang][name])
        raise KeyError(name)
    raise TypeError(type(expr))


def load_templates(raw: Path, per_intent: int = 60, seed: int = 13) -> list[dict[str, Any]]:
    """Sample up to ``per_intent`` distinct sentences per (language, intent, domain)."""
    from hassil import Intents

    out: list[dict[str, Any]] = []
    for lang_dir, lang in LANGS.items():
        base = raw / "home_assistant_intents/sentences" / lang_dir
        common = yaml.safe_load((base / "_common.yaml").read_text(encoding="utf-8"))
        pools: dict[tuple[str, str | None], set[str]] = {}
        for path in sorted(p for p in base.rglob("*.yaml") if not p.name.startswith("_")):
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
            for intent, body in (doc.get("intents") or {}).items():
                for data in body.get("data", []):
                    dom = _domain(path, data)
                    if events_for(intent, dom) is None or intent in TEMPLATE_SKIP:
                        continue
                    d = {
                        "language": common["language"],
                        "intents": {intent: {"data": [data]}},
                        "lists": common.get("lists", {}),
                        "expansion_rules": common.get("expansion_rules", {}),
                    }
                    parsed = Intents.from_dict(d)
                    idata = parsed.intents[intent].data[0]
                    rules = {**parsed.expansion_rules, **idata.expansion_rules}
                    lists = {**parsed.slot_lists, **idata.slot_lists}
                    rng = random.Random(f"{seed}:{path.name}:{intent}")
                    pool = pools.setdefault((intent, dom), set())
                    for sent in idata.sentences:
                        for _ in range(4):
                            try:
                                text = tidy(
                                    _expand(sent.expression, rng, lists, rules, lang_dir, dom),
                                    lang_dir,
                                )
                            except KeyError:
                                break
                            if text:
                                pool.add(text)
        for (intent, dom), pool in sorted(pools.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
            rng = random.Random(f"{seed}:{lang}:{intent}:{dom}")
            chosen = sorted(pool)
            chosen = sorted(rng.sample(chosen, min(per_intent, len(chosen))))
            events = events_for(intent, dom) or []
            for i, text in enumerate(chosen):
                key = f"{lang}.{intent}.{dom or 'any'}.{i}"
                out.append(
                    make_record(
                        rid=f"home_assistant_intents:templates:{key}",
                        source="home_assistant_intents",
                        lang=lang,
                        message=text,
                        decision="execute",
                        events=events,
                        tags=[],
                        slots=[],
                        note=f"HA {intent} (domain {dom}) template -> {events}",
                        group=f"ha:{lang}:{text}",
                    )
                )
    return out


def load_tests(raw: Path) -> list[dict[str, Any]]:
    """The upstream test sentences as the eval suite ``home_assistant``."""
    out: list[dict[str, Any]] = []
    for lang_dir, lang in LANGS.items():
        base = raw / "home_assistant_intents/tests" / lang_dir
        for path in sorted(p for p in base.rglob("*.yaml") if not p.name.startswith("_")):
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            ent_dom = {e.get("name"): e.get("domain") for e in doc.get("entities", []) or []}
            for t_i, test in enumerate(doc.get("tests") or []):
                intent_blk = test.get("intent") or {}
                intent = intent_blk.get("name") or (path.parent.name if path.parent != base else "")
                slots = intent_blk.get("slots") or test.get("slots") or {}
                dom = slots.get("domain") if isinstance(slots.get("domain"), str) else None
                if dom is None and isinstance(slots.get("name"), str):
                    dom = ent_dom.get(slots["name"])
                if dom is None and "_Hass" in path.stem:
                    dom = path.stem.split("_Hass")[0]
                events = events_for(intent, dom)
                if events is None:
                    continue
                rel = path.relative_to(base).with_suffix("").as_posix()
                for s_i, text in enumerate(test.get("sentences") or []):
                    out.append(
                        make_record(
                            rid=f"home_assistant_intents:tests:{lang}.{rel}.{t_i}.{s_i}",
                            source="home_assistant_intents",
                            lang=lang,
                            message=str(text),
                            decision="execute",
                            events=events,
                            tags=[],
                            slots=[],
                            note=f"HA test {intent} (domain {dom}) -> {events}",
                            group=f"ha-test:{lang}:{rel}:{t_i}",
                            split="eval_only",
                        )
                    )
    return out
