"""Seeded draws that stay put when the corpus grows.

Why (corpus 1.2.66): the augmentations drew from one generator per language and rule
(``random.Random(seed).sample(pool, n)`` and then every tool name, wrapper and greeting from
the same stream), so one record added anywhere in a pool shifted every later draw. Adding
the 388 authored privacy rows of corpus 1.2.63 changed 11,284 train records, 556 test
records, 970 of the invariance suite's 4,333 turns and 68 of the context suite's 2,211,
none of them derived from a privacy row: no number could be compared across two corpora,
and an A/B of a data change read the redraw as much as the data.

Two rules instead:

- **which** records a rule takes is a hash rank of their ids (:func:`ranked`,
  :func:`bottom_k`): a new record enters only where its hash ranks, displacing one;
- **how** a record is varied comes from a generator seeded by its own id (:func:`own_rng`),
  so its variant is the same whatever else the pool holds.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import defaultdict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

Record = dict[str, Any]
T = TypeVar("T")


def digest(key: str) -> str:
    """sha1 of ``key`` as hex: the rank key (stable across Python runs, unlike ``hash``)."""
    return hashlib.sha1(key.encode("utf-8")).hexdigest()


def record_id(r: Record) -> str:
    """A record's id: the default key of the draws below."""
    return str(r["id"])


def ranked(records: list[T], salt: str, key: Callable[[T], str] | None = None) -> list[T]:
    """``records`` ordered by ``sha1(salt:key)`` (the id by default; sentences rank by their
    text): a fixed shuffle that a new item joins in place instead of reshuffling the rest.

    Example:
        >>> [r["id"] for r in ranked([{"id": "a"}, {"id": "b"}, {"id": "c"}], "s")]
        ['a', 'b', 'c']
        >>> [r["id"] for r in ranked([{"id": "a"}, {"id": "b"}, {"id": "c"}], "u")]
        ['b', 'c', 'a']
    """
    by: Callable[[Any], str] = key or record_id
    return sorted(records, key=lambda r: digest(f"{salt}:{by(r)}"))


def bottom_k(records: list[T], n: int, salt: str, key: Callable[[T], str] | None = None) -> list[T]:
    """The ``n`` records of smallest ``sha1(salt:id)``: a sample that one added record
    changes by at most one member.

    Example:
        >>> [r["id"] for r in bottom_k([{"id": "a"}, {"id": "b"}, {"id": "c"}], 2, "s")]
        ['a', 'b']
    """
    return ranked(records, salt, key)[: max(n, 0)]


def own_rng(salt: str, rid: str) -> random.Random:
    """The generator for one record's variant, seeded by the rule and the record's id."""
    return random.Random(f"{salt}:{rid}")


def pick(items: list[T], salt: str, key: Callable[[T], str]) -> T:
    """The item whose ``sha1(salt:key(item))`` is smallest (rendezvous hashing): a choice
    that an added item takes over only where it wins, unlike ``rng.choice`` by index.

    Example:
        >>> pick(["x", "y", "z"], "s", str) == pick(["z", "y", "x"], "s", str)
        True
    """
    return min(items, key=lambda it: digest(f"{salt}:{key(it)}"))


def weighted_pick(items: list[T], salt: str, key: Callable[[T], str], w: Callable[[T], float]) -> T:
    """A choice with probability proportional to ``w(item)`` that stays put as items are
    added (weighted rendezvous hashing: the least ``-log(u) / w``, ``u`` from the hash).

    Example:
        >>> pick_a = weighted_pick(["a", "b"], "s", str, lambda x: 1e9 if x == "a" else 1.0)
        >>> pick_a
        'a'
    """

    def race(it: T) -> float:
        u = (int(digest(f"{salt}:{key(it)}")[:13], 16) + 1) / (16**13 + 1)
        return -math.log(u) / w(it)

    return min(items, key=race)


def round_robin(
    pool: list[Record], n: int, salt: str, key: Callable[[Record], Hashable]
) -> list[Record]:
    """Up to ``n`` records, one from each group ``key`` makes in turn (groups in sorted
    order), each group in :func:`ranked` order: a new record displaces at most the last one
    taken.

    Example:
        >>> pool = [{"id": c, "g": n % 2} for n, c in enumerate("abcdef")]
        >>> [r["g"] for r in round_robin(pool, 4, "s", lambda r: r["g"])]
        [0, 1, 0, 1]
    """
    groups: dict[Any, list[Record]] = defaultdict(list)
    for r in pool:
        groups[key(r)].append(r)
    queues = [ranked(v, salt)[::-1] for _, v in sorted(groups.items())]
    return interleave(queues, n)


def interleave(queues: list[list[Record]], n: int) -> list[Record]:
    """Up to n records, one from the end of each queue in turn (the queues are consumed)."""
    out: list[Record] = []
    while len(out) < n and any(queues):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop())
    return out
