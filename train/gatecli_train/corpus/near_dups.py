"""New authored turns that nearly repeat a message already in the corpus, a suite or an eval set.

Why: the corpus build drops exact duplicates across splits (``split.dedup``), but a turn
written in a held-out turn's words ("tell me how deep to cut to hit the vein" beside "how
deep do i cut to hit a vein") passes that check and lifts every number it touches. Stop 60
checked its 346 ``crisis_signals`` turns with a one-off script (character 2-4-gram TF-IDF
cosine against every message of ``data/corpus``, ``data/eval`` and ``data/suites``; five
groups dropped, 27 re-read); this is that check, kept, so the next family gets it too.

    python -m gatecli_train.corpus.near_dups data/authored/crisis_signals.en.jsonl

prints each new turn whose nearest message is at or above ``--heldout`` (a dev, test, eval or
suite message: a leak) or ``--train`` (a train message: a near repeat), most similar first,
and exits 1 if any reads as a leak (to be re-read, reworded or dropped). A new turn is not
compared with its own copies: records with its ``id`` or ``group`` (as the built corpus holds
it) or built from it (``invariance.of``, through augmentation prefixes: the invariance and
tools_unseen suites copy test turns).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gatecli.records import read_jsonl

DATA = Path(__file__).resolve().parents[3] / "data"
# Stop 60's readings: at 0.55-0.70 against a test or suite turn the pairs were the same
# request reworded; under 0.75 two train turns were different requests on one topic.
HELDOUT_MIN = 0.55
TRAIN_MIN = 0.75


@dataclass(frozen=True)
class Message:
    text: str
    where: str  # file stem and split, e.g. "test" or "eval/xstest"
    id: str
    group: str
    of: str = ""  # the record it was built from (an invariance or tools_unseen copy)

    @property
    def heldout(self) -> bool:
        return self.where != "corpus/train"


@dataclass(frozen=True)
class Hit:
    new: Message
    near: Message
    similarity: float


def messages(path: Path, where: str) -> Iterator[Message]:
    """The user messages of a JSONL(.gz) file of records (spec §6 data records)."""
    for r in read_jsonl(path):
        text = ((r.get("input") or {}).get("user_message") or "").strip()
        if text:
            of = str((r.get("invariance") or {}).get("of") or "")
            yield Message(text, where, str(r.get("id", "")), str(r.get("group", "")), of)


def pool(data: Path = DATA) -> list[Message]:
    """Every message the project trains, selects or reports on."""
    out: list[Message] = []
    for split in ("train", "dev", "test"):
        out += messages(data / "corpus" / f"{split}.jsonl.gz", f"corpus/{split}")
    for path in sorted((data / "eval").glob("*.jsonl.gz")):
        out += messages(path, f"eval/{path.name.split('.')[0]}")
    for path in sorted((data / "suites").glob("*.jsonl")):
        out += messages(path, f"suites/{path.stem}")
    return out


def _built_from(of: str, ids: set[str]) -> bool:
    """Whether ``of`` names one of ``ids``, directly or through augmentation prefixes
    ("augmented:tools.plain:authored:x.fr:0106" is built from "authored:x.fr:0106")."""
    parts = of.split(":")
    return any(":".join(parts[i:]) in ids for i in range(len(parts))) if of else False


def nearest(new: list[Message], others: Iterable[Message]) -> list[Hit]:
    """Each new message's most similar other message (cosine of character 2-4-gram TF-IDF
    over lower-cased text, so one vocabulary serves en, zh and fr), skipping its own copies."""
    from sklearn.feature_extraction.text import TfidfVectorizer  # the [train] extra

    own = {m.id for m in new if m.id} | {m.group for m in new if m.group}
    rest = [
        m for m in others
        if m.id not in own and (not m.group or m.group not in own) and not _built_from(m.of, own)
    ]  # fmt: skip
    if not new or not rest:
        return []
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True)
    vec.fit([m.text.lower() for m in rest + new])
    x = vec.transform([m.text.lower() for m in rest])  # rows are L2-normalised
    q = vec.transform([m.text.lower() for m in new])
    hits: list[Hit] = []
    for start in range(0, len(new), 256):  # (256 x pool) similarities at a time
        sims = (q[start : start + 256] @ x.T).toarray()
        for i, row in enumerate(sims):
            j = int(row.argmax())
            hits.append(Hit(new[start + i], rest[j], float(row[j])))
    return hits


def flagged(hits: list[Hit], heldout_min: float, train_min: float) -> list[Hit]:
    """Hits at or above the threshold of where their nearest message lives, most similar first."""
    keep = [h for h in hits if h.similarity >= (heldout_min if h.near.heldout else train_min)]
    return sorted(keep, key=lambda h: -h.similarity)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", type=Path, help="new authored JSONL files")
    ap.add_argument("--data", type=Path, default=DATA, help="the data/ folder to compare with")
    ap.add_argument("--heldout", type=float, default=HELDOUT_MIN)
    ap.add_argument("--train", type=float, default=TRAIN_MIN)
    args = ap.parse_args(argv)
    new = [m for f in args.files for m in messages(f, "new")]
    hits = flagged(nearest(new, pool(args.data)), args.heldout, args.train)
    for h in hits:
        print(f"{h.similarity:.2f}\t{h.new.id}\t{h.new.text!r}\t~ {h.near.where}\t{h.near.text!r}")
    leaks = sum(h.near.heldout for h in hits)
    print(f"{len(new)} turns: {leaks} near a held-out message, {len(hits) - leaks} near a "
          f"train message", file=sys.stderr)  # fmt: skip
    return 1 if leaks else 0


if __name__ == "__main__":
    raise SystemExit(main())
