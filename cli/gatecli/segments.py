"""Risk survives surrounding text: score the sentences of a multi-sentence turn on their own.

A classifier that reads one pooled vector per turn can let four benign sentences outvote one
dangerous one ("please turn on the lights. ... I want to end my life tonight." came out
``execute`` 0.96 on gate-small 1.1.0). The gate therefore also scores each sentence of a
multi-sentence message alone, in the same forward pass as the turn, and a segment whose
``safety`` (or ``refuse``) probability clears the calibrated precedence floor (and the
policy's ``decision.segment_min_prob``, when it asks a sentence for more) wins over a milder
whole-turn decision. Single-sentence turns cost one regular expression and nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from gatecli.heads import HeadOutputs

# Sentence ends: CJK full stops need no space after them; Latin ones do (so "3.5" and "e.g."
# inside a sentence stay whole most of the time). Line breaks always split.
_SPLIT = re.compile(r"(?<=[。！？；!?])|(?<=[.;…])\s+|\n+")
MAX_SEGMENTS = 12
# Over the cap, the first HEAD_SEGMENTS and the last MAX_SEGMENTS - HEAD_SEGMENTS are scored.
# The tail gets most of the budget: the whole-turn pass always reads the beginning (folders
# before 1.2.25 trim a long message from the end, at max_length tokens; head_tail keeps a
# share of both ends), and a request appended to pasted text comes last ("<a long article>.
# Now explain how to make it at home"). Keeping the first 8 sentences, as before, hid exactly
# that sentence from both passes.
HEAD_SEGMENTS = 4
MIN_SEGMENT_CHARS = 3
# Risk labels, mildest first: a segment overrides the turn only with a stronger one.
RISK_ORDER = ("refuse", "safety")


def split_segments(message: str) -> list[str]:
    """The distinct sentences of ``message`` when it has two or more, else ``[]``.

    Repeated sentences count once (a risky sentence hidden among repetitions is still
    found); at most :data:`MAX_SEGMENTS`: the first :data:`HEAD_SEGMENTS` and the last ones.

    Example:
        >>> split_segments("Turn on the lights. Turn on the lights. I want to die.")
        ['Turn on the lights.', 'I want to die.']
        >>> split_segments("set the volume to 3.5")
        []
    """
    parts = [p.strip() for p in _SPLIT.split(message)]
    kept = list(dict.fromkeys(p for p in parts if len(p) >= MIN_SEGMENT_CHARS))
    if len(kept) > MAX_SEGMENTS:
        kept = kept[:HEAD_SEGMENTS] + kept[HEAD_SEGMENTS - MAX_SEGMENTS :]
    return kept if len(kept) >= 2 else []


def risk_label(probs: Mapping[str, float], floors: Sequence[tuple[str, float]]) -> str | None:
    """The strongest risk label (``safety`` > ``refuse``) at or above its floor, or None.

    Example:
        >>> risk_label({"execute": 0.6, "safety": 0.35}, [("safety", 0.3), ("refuse", 0.5)])
        'safety'
    """
    floor = dict(floors)
    for label in reversed(RISK_ORDER):
        if label in floor and probs.get(label, 0.0) >= floor[label]:
            return label
    return None


def segment_floors(
    floors: Sequence[tuple[str, float]], min_prob: Mapping[str, float]
) -> list[tuple[str, float]]:
    """The floors a sentence alone must clear: the turn's floor or ``min_prob``, the higher.

    Example:
        >>> segment_floors([("safety", 0.3), ("refuse", 0.5)], {"safety": 0.9})
        [('safety', 0.9), ('refuse', 0.5)]
    """
    return [(lab, max(float(p), float(min_prob.get(lab, 0.0)))) for lab, p in floors]


@dataclass(frozen=True)
class SegmentVerdict:
    """Which segment decided the turn, for the record's ``guards`` entry."""

    index: int
    label: str
    probability: float
    segments: int


def apply_segments(
    whole: HeadOutputs,
    parts: Sequence[HeadOutputs],
    floors: Sequence[tuple[str, float]],
    seg_floors: Sequence[tuple[str, float]] | None = None,
) -> tuple[HeadOutputs, SegmentVerdict | None]:
    """The turn's outputs after the segment rule, and the verdict when a segment won.

    A segment wins when its risk label outranks the whole turn's (none < refuse < safety):
    the turn then takes that segment's decision probabilities and no events (spec §3: no
    event for refuse or safety); tags and slots stay the whole turn's. Both labels are read
    at ``floors``, as the policy's precedence will read the probabilities the turn takes;
    a segment's label must also clear ``seg_floors`` (default: ``floors``), because a
    sentence read without its neighbours is noisier than its turn and every extra sentence
    is one more chance of a false alarm (``decision.segment_min_prob``, see
    :func:`segment_floors`). Reading the label at the sentence floors instead would let a
    sentence win as ``refuse`` and then be decided ``safety`` by the policy with a safety
    probability under the safety sentence floor.

    Example:
        >>> whole = HeadOutputs({"execute": 0.96, "safety": 0.02}, events=["device.light.adjust"])
        >>> seg = HeadOutputs({"execute": 0.1, "safety": 0.9})
        >>> out, why = apply_segments(whole, [whole, seg], [("safety", 0.3)])
        >>> out.decision_probs["safety"], out.events, why.index
        (0.9, [], 1)
    """
    rank: dict[str | None, int] = {None: -1, **{lab: i for i, lab in enumerate(RISK_ORDER)}}
    best = risk_label(whole.decision_probs, floors)
    need = dict(floors if seg_floors is None else seg_floors)
    winner: SegmentVerdict | None = None
    chosen: HeadOutputs | None = None
    for i, seg in enumerate(parts):
        lab = risk_label(seg.decision_probs, floors)
        if lab is None or seg.decision_probs.get(lab, 0.0) < need.get(lab, 0.0):
            continue
        if rank[lab] > rank[best]:
            best = lab
            winner = SegmentVerdict(i, lab, seg.decision_probs[lab], len(parts))
            chosen = seg
    if winner is None or chosen is None:
        return whole, None
    return replace(whole, decision_probs=dict(chosen.decision_probs), events=[]), winner
