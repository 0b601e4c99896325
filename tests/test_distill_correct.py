"""A teacher that contradicts a known decision label is overruled on that row only
(``[distill] correct_teacher``): rows it gets right and rows without a label keep its soft
outputs, so what it knows beyond the labels survives while the corpus's relabelled turns are
learned at full strength."""

from __future__ import annotations

import torch

from gatecli_train.distill import correct_decision


def test_only_rows_with_a_contradicted_known_label_change() -> None:
    teacher = {
        "decision": torch.tensor([[3.0, 1.0, 0.0], [3.0, 1.0, 0.0], [3.0, 1.0, 0.0]]),
        "events": torch.tensor([[1.0], [2.0], [3.0]]),
    }
    targets = {"decision": torch.tensor([0, 2, 2])}
    masks = {"decision": torch.tensor([True, True, False])}  # the last row: label unknown
    out, n = correct_decision(teacher, targets, masks, margin=10.0)
    assert n == 1
    assert out["decision"][0].tolist() == [3.0, 1.0, 0.0]  # teacher right: kept
    assert out["decision"][1].tolist() == [0.0, 0.0, 10.0]  # teacher wrong: the label
    assert out["decision"][2].tolist() == [3.0, 1.0, 0.0]  # no label: kept
    assert torch.equal(out["events"], teacher["events"])  # other heads untouched


def test_a_teacher_that_agrees_everywhere_is_returned_as_is() -> None:
    teacher = {"decision": torch.tensor([[0.0, 2.0]])}
    out, n = correct_decision(
        teacher, {"decision": torch.tensor([1])}, {"decision": torch.tensor([True])}
    )
    assert n == 0 and out is teacher
