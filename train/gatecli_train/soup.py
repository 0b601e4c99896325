"""A uniform weight average of fine-tuned models that share one start ("model soup").

Why: two runs of one recipe (gate-small 1.2.40 and 1.2.44, one epoch each from 1.2.36 on
corpora that differ only in redrawn tool lists) landed as far apart on the held-out suites
as the data changes they were meant to judge (README "Training"): which run ships was a draw.
Averaging the weights of runs fine-tuned from the same model keeps them in one basin of the
loss, so the average is a model of its own, not a blend of outputs: one forward pass, the same
graph and speed, and less of any single run's noise (Wortsman et al., 2022, "Model soups").
It is only meaningful for such runs: the ingredients must have one shape and one vocabulary,
which :func:`average` checks, and a recipe says where they came from (``[model] soup``).
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from tokenizers import Tokenizer

from gatecli_train.model import GateModel


def average(models: list[GateModel]) -> GateModel:
    """A copy of ``models[0]`` holding the mean of every parameter and buffer over ``models``.

    Integer buffers (position ids) are the same in every ingredient and are kept as they are.
    """
    if not models:
        raise ValueError("a soup needs at least one model")
    states = [m.state_dict() for m in models]
    first = states[0]
    for i, state in enumerate(states[1:], start=1):
        if state.keys() != first.keys():
            raise ValueError(f"soup ingredient {i} has other parameters than ingredient 0")
        for key, value in state.items():
            if value.shape != first[key].shape:
                raise ValueError(
                    f"soup ingredient {i}: {key} is {tuple(value.shape)}, "
                    f"ingredient 0 has {tuple(first[key].shape)}"
                )
    mean = {
        key: (torch.stack([s[key].double() for s in states]).mean(0)).to(first[key].dtype)
        if first[key].is_floating_point()
        else first[key]  # integer buffers (position ids) are equal by construction
        for key in first
    }
    out = copy.deepcopy(models[0])
    out.load_state_dict(mean)
    return out.eval()


def mix(
    loaded: list[tuple[GateModel, Tokenizer]], specs: tuple[str, ...]
) -> tuple[GateModel, Tokenizer, dict[str, Any]]:
    """The average of ``loaded`` (the models ``specs`` name, in order), their one tokenizer
    and the base record a run keeps.

    Ingredients with other vocabularies are refused: the same row of the embedding matrix
    would mean another word in each, and the mean would mean none."""
    if not loaded:
        raise ValueError("[model] soup lists no ingredient")
    tok = loaded[0][1]
    for spec, (_, t) in zip(specs[1:], loaded[1:], strict=True):
        if t.get_vocab() != tok.get_vocab():
            raise ValueError(f"soup ingredient {spec} has another vocabulary than {specs[0]}")
    models = [m for m, _ in loaded]
    what = f"uniform weight average of {len(specs)} models"
    if len(specs) == 1:  # a soup of one: the model's weights unchanged, no training step
        what = f"the weights of {specs[0]} unchanged (a soup of one: no training step)"
    base: dict[str, Any] = {
        "base": what,
        "soup": list(specs),
        "layers": models[0].encoder.config.num_hidden_layers,
    }
    return average(models), tok, base
