"""Held-out suites cut in two by record group: a half that training may select on, a half
that nothing ever chose on.

Why: checkpoints and seeds used to be picked on the dev split, which shares its sources and
templates with training. Two seeds of one recipe then differed for real on held-out sources
by more than the release gate's tolerances while their dev scores agreed to 0.002 (stop 52),
so a run was kept or dropped by the luck of its draw. Selecting on held-out sources sees that
difference; reporting on the same turns would then flatter the kept run, so each suite is cut
in two once, by a hash of the record's group (a dialogue, a base and its variants, one
problem in three languages stay on one side), and a run that selected on the ``select`` half
is evaluated with ``gatecli eval --half report``.

Only :data:`SELECTION_SUITES` are cut: sources held out of the corpus whole, where the model
has to transfer (ordinary users, other datasets, held-out dialogues). Safety-only suites
(SimpleSafetyTests, HarmBench) stay whole: their recall is an absolute gate and a selection
score cannot read a one-class suite. Suites derived from the test split (invariance,
risk_in_context, the tool lists) are not sources held out and stay whole too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, Literal

Half = Literal["select", "report"]
HALVES: tuple[Half, Half] = ("select", "report")
SELECTION_SUITES = (
    "ordinary_en", "ordinary_zh", "ordinary_fr", "oasst1_fr", "mgsm", "passages_heldout",
    "when2call", "xstest", "coconot", "xsid", "home_assistant", "context",
)  # fmt: skip
_SALT = "gatecli-heldout-half:"


def half_of(group: str) -> Half:
    """The half a record group falls in (stable across machines and Python versions).

    Example:
        >>> half_of("ask.zh.216") in HALVES
        True
    """
    return HALVES[hashlib.sha256((_SALT + group).encode("utf-8")).digest()[0] & 1]


def take(records: Iterable[dict[str, Any]], half: str) -> list[dict[str, Any]]:
    """The records of ``half``, by ``group`` (:func:`gatecli.evaluation.suites.load_suite`
    sets it, the record's id where the file has none)."""
    return [r for r in records if half_of(r["group"]) == half]


def cut(suite: str, records: list[dict[str, Any]], half: str | None) -> list[dict[str, Any]]:
    """``records`` of a suite as evaluated with ``--half``: a selection suite's half, every
    other suite whole; ``half=None`` keeps everything."""
    if half is None or suite not in SELECTION_SUITES:
        return records
    return take(records, half)
