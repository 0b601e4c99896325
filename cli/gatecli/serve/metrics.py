"""Prometheus text exposition (format 0.0.4), written here rather than pulled in.

The service needs counters, a gauge callback and histograms with fixed buckets, updated
from the event loop and from gate worker threads; that is one lock and ~100 lines, so the
``[serve]`` extra stays at starlette + uvicorn. Label values are escaped as the format
requires; families render in registration order with their ``# HELP`` and ``# TYPE``.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

LabelKey = tuple[str, ...]
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(names: Sequence[str], values: LabelKey, extra: str = "") -> str:
    parts = [f'{n}="{_escape(v)}"' for n, v in zip(names, values, strict=True)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _num(x: float) -> str:
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


class _Family:
    def __init__(self, name: str, help_text: str, kind: str, labels: Sequence[str]) -> None:
        self.name, self.help, self.kind, self.label_names = name, help_text, kind, tuple(labels)

    def header(self) -> list[str]:
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} {self.kind}"]

    def lines(self) -> list[str]:
        raise NotImplementedError


F = TypeVar("F", bound=_Family)


class Counter(_Family):
    def __init__(self, name: str, help_text: str, labels: Sequence[str], lock: threading.Lock):
        super().__init__(name, help_text, "counter", labels)
        self._values: dict[LabelKey, float] = {}
        self._lock = lock

    def inc(self, *values: str, by: float = 1.0) -> None:
        with self._lock:
            self._values[values] = self._values.get(values, 0.0) + by

    def get(self, *values: str) -> float:
        return self._values.get(values, 0.0)

    def lines(self) -> list[str]:
        items = sorted(self._values.items()) or ([((), 0.0)] if not self.label_names else [])
        return [f"{self.name}{_labels(self.label_names, k)} {_num(v)}" for k, v in items]


class Gauge(_Family):
    """A value read at scrape time (queue depth, requests in flight)."""

    def __init__(
        self,
        name: str,
        help_text: str,
        read: Callable[[], float],
        labels: Mapping[str, str] | None = None,
    ) -> None:
        fixed = dict(labels or {})
        super().__init__(name, help_text, "gauge", tuple(fixed))
        self._read, self._key = read, tuple(fixed.values())

    def lines(self) -> list[str]:
        return [f"{self.name}{_labels(self.label_names, self._key)} {_num(self._read())}"]


class Histogram(_Family):
    def __init__(
        self,
        name: str,
        help_text: str,
        labels: Sequence[str],
        buckets: Sequence[float],
        lock: threading.Lock,
    ) -> None:
        super().__init__(name, help_text, "histogram", labels)
        self.buckets = tuple(float(b) for b in buckets)
        self._data: dict[LabelKey, tuple[list[int], list[float]]] = {}  # counts, [sum]
        self._lock = lock

    def observe(self, value: float, *values: str) -> None:
        i = bisect.bisect_left(self.buckets, value)
        with self._lock:
            counts, total = self._data.setdefault(values, ([0] * (len(self.buckets) + 1), [0.0]))
            counts[i] += 1
            total[0] += value

    def lines(self) -> list[str]:
        out: list[str] = []
        for key, (counts, total) in sorted(self._data.items()):
            running = 0
            for bound, c in zip((*self.buckets, math.inf), counts, strict=True):
                running += c
                le = f'le="{_num(bound)}"'
                out.append(f"{self.name}_bucket{_labels(self.label_names, key, le)} {running}")
            out.append(f"{self.name}_sum{_labels(self.label_names, key)} {_num(total[0])}")
            out.append(f"{self.name}_count{_labels(self.label_names, key)} {running}")
        return out


class Registry:
    """The service's metric families; :meth:`render` is the body of ``GET /metrics``.

    Example:
        >>> reg = Registry()
        >>> hits = reg.counter("demo_total", "Demo hits.", ["path"])
        >>> hits.inc("/x")
        >>> print(reg.render().splitlines()[2])
        demo_total{path="/x"} 1
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._families: list[_Family] = []

    def counter(self, name: str, help_text: str, labels: Sequence[str] = ()) -> Counter:
        return self._add(Counter(name, help_text, labels, self._lock))

    def gauge(
        self,
        name: str,
        help_text: str,
        read: Callable[[], float],
        labels: Mapping[str, str] | None = None,
    ) -> Gauge:
        return self._add(Gauge(name, help_text, read, labels))

    def histogram(
        self, name: str, help_text: str, labels: Sequence[str], buckets: Sequence[float]
    ) -> Histogram:
        return self._add(Histogram(name, help_text, labels, buckets, self._lock))

    def _add(self, family: F) -> F:
        self._families.append(family)
        return family

    def render(self) -> str:
        with self._lock:
            lines = [ln for fam in self._families for ln in (*fam.header(), *fam.lines())]
        return "\n".join(lines) + "\n"
