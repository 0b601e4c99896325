"""``[model] soup``: the uniform weight average of runs and the ingredients it refuses.

Tiny random models (plumbing): the average is checked against the mean it must be, and the
refusals against ingredients that share no meaning (other vocabulary, other shape). The whole
recipe path (averaged, calibrated, exported, no step trained) is in test_train_pipeline.
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gatecli_train import soup, tokenizer  # noqa: E402
from gatecli_train.model import GateModel, default_head_defs, tiny_encoder  # noqa: E402
from gatecli_train.pipeline import Start, load_trained, save_run  # noqa: E402
from gatecli_train.tiny import TEXTS  # noqa: E402


def _model(seed: int, vocab: int = 300, layers: int = 2) -> GateModel:
    torch.manual_seed(seed)
    enc = tiny_encoder(vocab)
    if layers != 2:
        enc.encoder.layer = enc.encoder.layer[:layers]
        enc.config.num_hidden_layers = layers
    return GateModel(enc, default_head_defs())


def test_average_is_the_mean_of_every_weight() -> None:
    models = [_model(s) for s in (0, 1, 2)]
    before = [{k: v.clone() for k, v in m.state_dict().items()} for m in models]
    avg = soup.average(models).state_dict()
    states = [m.state_dict() for m in models]
    for key, value in avg.items():
        expected = sum(s[key].double() for s in states) / 3
        if value.is_floating_point():
            assert torch.allclose(value.double(), expected, atol=1e-6), key
        else:  # integer buffers (position ids) are the same in every ingredient
            assert torch.equal(value, states[0][key]), key
    # the ingredients are left as they were, and the average is none of them
    assert all(torch.equal(b[k], s[k]) for b, s in zip(before, states, strict=True) for k in s)
    assert not any(torch.equal(s[k], avg[k]) for s in states for k in s if "heads" in k)


def test_average_of_one_model_is_that_model() -> None:
    m = _model(0)
    avg = soup.average([m]).state_dict()
    assert all(torch.equal(v, m.state_dict()[k]) for k, v in avg.items())


def test_ingredients_of_another_shape_are_refused() -> None:
    with pytest.raises(ValueError, match="ingredient 1"):
        soup.average([_model(0), _model(1, layers=1)])
    with pytest.raises(ValueError, match="word_embeddings"):
        soup.average([_model(0), _model(1, vocab=301)])
    with pytest.raises(ValueError, match="at least one"):
        soup.average([])


def test_runs_with_another_vocabulary_are_refused(tmp_path: Path) -> None:
    """One row of the embedding matrix must mean one word in every ingredient."""
    tok_a = tokenizer.train_small(TEXTS, vocab_size=300)
    tok_b = tokenizer.train_small([t.upper() for t in TEXTS], vocab_size=300)
    assert tok_a.get_vocab() != tok_b.get_vocab()
    runs = []
    for name, tok in (("a", tok_a), ("b", tok_a), ("c", tok_b)):
        run = tmp_path / name
        run.mkdir()
        model = _model(len(runs), vocab=tok.get_vocab_size())
        save_run(run, Start(model, tok, {"base": "tiny"}))
        runs.append(str(run))
    heads = default_head_defs()

    def load(specs: tuple[str, ...]) -> tuple:  # what pipeline.start_model does for a soup
        return soup.mix([load_trained(spec, heads)[:2] for spec in specs], specs)

    model, tok, base = load((runs[0], runs[1]))
    assert base["soup"] == runs[:2] and base["base"] == "uniform weight average of 2 models"
    assert tok.get_vocab() == tok_a.get_vocab()
    with pytest.raises(ValueError, match="another vocabulary"):
        load((runs[0], runs[2]))
