"""Eval-only ordinary suites with English in them: ``ordinary_en`` and ``mgsm``.

``ordinary_en`` is drawn from the *test* splits of CLINC150 and HWU64 (which the corpus never
reads): knowledge, definition, maths, cooking, travel-fact and small-talk intents, so the
English false-refusal rate is measured on turns the model has not seen. ``mgsm`` holds the 250
parallel grade-school maths problems in en, zh and fr: long, fully specified ``execute``
turns, a check that the decision does not change with the language.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from gatecli_train.corpus.ordinary import SEARCH, sample
from gatecli_train.corpus.records import make_record

Record = dict[str, Any]
# CLINC intents that are ordinary questions or requests needing no account; value: events.
_PLAIN = (
    "definition fun_fact meaning_of_life calories nutrition_info spelling translate recipe "
    "cook_time food_last ingredient_substitution ingredients_list meal_suggestion plug_type "
    "vaccines international_visa timezone calculator measurement_conversion flip_coin "
    "roll_dice tell_joke what_is_your_name how_old_are_you what_are_your_hobbies "
    "where_are_you_from who_made_you are_you_a_bot do_you_have_pets greeting thank_you "
    "mpg jump_start tire_change oil_change_how gas_type travel_suggestion"
)
CLINC_ORDINARY: dict[str, list[str] | None] = {
    **dict.fromkeys(_PLAIN.split(), None),  # noqa: SIM905 (a long word list reads better so)
    "weather": [SEARCH],
    "exchange_rate": [SEARCH],
}
CLINC_PER_INTENT = 8
HWU_INTENTS = ("qa_definition", "qa_factoid", "qa_maths", "general_quirky", "general_joke",
               "cooking_recipe", "datetime_convert")  # fmt: skip


def ordinary_en(raw: Path) -> list[Record]:
    """CLINC150 test (8 per ordinary intent) + HWU64 KFold_1 test ordinary intents."""
    data = json.loads((raw / "clinc150_oos/data/data_full.json").read_text(encoding="utf-8"))
    by_intent: dict[str, list[Record]] = {}
    for i, (text, intent) in enumerate(data["test"]):
        if intent not in CLINC_ORDINARY:
            continue
        by_intent.setdefault(intent, []).append(
            make_record(
                rid=f"clinc150_oos:test:{i}",
                source="clinc150_oos",
                lang="en",
                message=text,
                decision="execute",
                events=CLINC_ORDINARY[intent],
                tags=None,
                slots=None,
                split="eval_only",
                group=f"clinc:test:{i}",
                note=f"CLINC150 test intent {intent} (ordinary question/request) -> execute",
            )
        )
    out = [r for intent in sorted(by_intent) for r in
           sample(by_intent[intent], CLINC_PER_INTENT, f"clinc:{intent}")]  # fmt: skip
    for intent in HWU_INTENTS:
        path = raw / f"hwu64/KFold_1/testset/csv/{intent}.csv"
        with path.open(encoding="utf-8") as fh:
            for i, row in enumerate(csv.DictReader(fh, delimiter=";")):
                out.append(
                    make_record(
                        rid=f"hwu64:test:{intent}.{i}",
                        source="hwu64",
                        lang="en",
                        message=row["answer_from_user"] or row["answer_from_anno"],
                        decision="execute",
                        events=None,
                        tags=None,
                        slots=None,
                        split="eval_only",
                        group=f"hwu64:test:{intent}.{i}",
                        note=f"HWU64 test intent {intent} (ordinary question) -> execute",
                    )
                )
    return out


def mgsm(raw: Path) -> list[Record]:
    """250 problems x en/zh/fr -> execute, no event; a problem is one group across languages."""
    out: list[Record] = []
    for lang in ("en", "zh", "fr"):
        path = raw / f"mgsm/mgsm_{lang}.tsv"
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
        for i, (problem, _answer) in enumerate(rows):
            out.append(
                make_record(
                    rid=f"mgsm:test:{lang}.{i}",
                    source="mgsm",
                    lang=lang,
                    message=problem,
                    decision="execute",
                    events=[],
                    tags=None,
                    slots=[],
                    split="eval_only",
                    group=f"mgsm:{i}",
                    note="MGSM maths word problem -> execute, no event (eval only)",
                )
            )
    return out
