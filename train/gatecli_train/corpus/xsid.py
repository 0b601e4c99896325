"""xSID (en, zh): its dev split becomes training records, its test split an eval suite.

Split out of :mod:`intents` to keep modules short; the labels come from the same intent map
(``intent_maps.XSID``) and text refinements (:mod:`label_rules`) as the other intent sources.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gatecli_train.corpus import intent_maps as M
from gatecli_train.corpus.intents import _emit, _noted, _refined, label_variants


def read_xsid(path: Path) -> list[dict[str, Any]]:
    """Parse xSID CoNLL blocks into {id, text, intent, slots}."""
    rows: list[dict] = []
    cur: dict[str, Any] = {"slots": set()}
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        if not line.strip():
            if "text" in cur:
                rows.append(cur)
            cur = {"slots": set()}
        elif line.startswith("# "):
            key, _, val = line[2:].partition(" = ")
            cur[key.strip()] = val.strip()
        else:
            parts = line.split("\t")
            if len(parts) >= 4 and parts[3] != "O":
                cur["slots"].add(parts[3][2:])
    return rows


def xsid_labels(row: dict[str, Any], lang: str = "en") -> list[dict]:
    mapped = M.XSID.get(row["intent"], ([], "skip", None))
    text = row["text"].replace(" ", "") if lang == "zh" else row["text"]
    rule, why = _refined(row["intent"], text, None, mapped, lang)
    if rule is None:
        return []
    present = {"time": "datetime" in row["slots"]}
    return _noted(label_variants(rule, present, row["intent"]), why)


def load_xsid_dev(raw: Path) -> list[dict[str, Any]]:
    out: list[dict] = []
    for lang in ("en", "zh"):
        for row in read_xsid(raw / f"xsid/xSID-0.7/{lang}.valid.conll"):
            n = row.get("id", str(len(out)))
            _emit(
                out,
                "xsid",
                "valid",
                f"{lang}.{n}",
                lang,
                row["text"],
                f"xsid:valid:{n}",
                xsid_labels(row, lang),
            )
    return out
