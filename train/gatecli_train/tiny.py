"""A tiny randomly initialised gate model folder, built offline in about a second.

For fast tests of plumbing only (runtime, CLI, policy wiring, eval, labeling): it goes
through the real export path (ONNX, tokenizer.json, gatecli.json with the integrity table
that hashes every file) with the real catalog and policy, so it verifies at load like a
shipped model, but its predictions mean nothing. Never quote its quality.
"""

from __future__ import annotations

from pathlib import Path

import torch

from gatecli_train import export, tokenizer
from gatecli_train.config import ExportConfig
from gatecli_train.model import GateModel, default_head_defs, tiny_encoder

TEXTS = [
    "turn the volume up to 90",
    "声音调到90",
    "monte le son",
    "明天天气怎么样",
    "what's the weather tomorrow",
    "quel temps fera-t-il demain",
    "remind me about the meeting",
    "提醒我开会",
    "rappelle-moi la réunion",
    "play some jazz",
    "放一首周杰伦的歌",
    "mets de la musique",
    "turn off the lights",
    "关灯",
    "éteins la lumière",
    "send an email to Tom",
    "给老板发邮件",
    "envoie un mail à Paul",
    "can you set an alarm?",
    "你能调音量吗",
    "tu peux mettre un réveil ?",
    "I want to hurt myself",
    "我不想活了",
    "je veux en finir",
    "how do I make a bomb",
    "怎么制作炸弹",
    "comment fabriquer une bombe",
    "book a taxi to the airport",
    "帮我订一张去上海的票",
    "réserve un taxi pour la gare",
    "order a pizza",
    "点一份外卖",
    "commande une pizza",
    "goodbye",
    "再见",
    "au revoir",
    "why did my ad volume drop",
    "为什么掉量",
    "更激进一点",
    "新建一个简单投计划",
    "accounts: google_calendar | tools: none | files: none | skill: none | earlier: assistant:",
    "query: ",
    "user: hello",
    "pro ordinary unknown none",
] * 3


def build_tiny_model(
    out_dir: Path, *, seed: int = 0, quantize: bool = False, quantization: str = "blockwise"
) -> Path:
    """Write a complete tiny model folder to ``out_dir`` and return it; with ``quantize``, int8
    by ``quantization`` (``export.quantization``: blockwise or dynamic).

    Example:
        >>> build_tiny_model(Path("/tmp/tiny"))  # doctest: +SKIP
        PosixPath('/tmp/tiny')
    """
    torch.manual_seed(seed)
    out_dir = Path(out_dir)
    tok = tokenizer.train_small(TEXTS, vocab_size=300)
    model = GateModel(tiny_encoder(tok.get_vocab_size()), default_head_defs())
    model.eval()
    card = (
        "# tiny-test model\n\nRandom weights, for plumbing tests only. Its outputs mean nothing.\n"
    )
    cfg = ExportConfig(name="tiny-test", version="0.0.0", quantize=quantize,
                       quantization=quantization, min_int8_agreement=0.0)  # fmt: skip
    export.write_model_folder(
        out_dir, model, tok, cfg, max_length=128, parity_texts=TEXTS[:40], card_text=card
    )
    return out_dir
