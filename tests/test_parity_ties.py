"""The parity report says whether int8 flips are fp32 ties (``export.TIE_MARGIN``): a flip of
a turn whose two best fp32 logits are 0.05 apart is rounding breaking a tie, one at a gap of 2
is quantisation damage. Reported beside the gated argmax agreement, not instead of it."""

from __future__ import annotations

import numpy as np

from gatecli_train.export import HeadParity, _compare


def test_a_flip_of_a_tie_counts_against_argmax_agreement_but_not_untied() -> None:
    fp32 = np.array([[1.00, 0.95], [2.0, 0.0], [0.0, 3.0]], dtype=np.float32)
    q8 = np.array([[0.90, 1.00], [2.0, 0.1], [0.1, 2.9]], dtype=np.float32)
    report = {"decision": HeadParity("decision_logits", [0, 2])}
    agree, untied, problems = {"decision": 0}, {"decision": (0, 0)}, []
    _compare(report, agree, {"decision": fp32}, {"decision_logits": fp32},
             {"decision_logits": q8}, problems, untied)  # fmt: skip
    assert problems == []
    assert agree["decision"] == 2  # the tie flipped
    assert report["decision"].fp32_ties == 1
    assert untied["decision"] == (2, 2)  # both decided turns kept their decision


def test_a_flip_of_a_decided_turn_counts_in_untied() -> None:
    fp32 = np.array([[2.0, 0.0]], dtype=np.float32)
    q8 = np.array([[0.0, 2.0]], dtype=np.float32)
    report = {"decision": HeadParity("decision_logits", [0, 2])}
    agree, untied = {"decision": 0}, {"decision": (0, 0)}
    _compare(report, agree, {"decision": fp32}, {"decision_logits": fp32},
             {"decision_logits": q8}, [], untied)  # fmt: skip
    assert report["decision"].fp32_ties == 0 and untied["decision"] == (0, 1)
