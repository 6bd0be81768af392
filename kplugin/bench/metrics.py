"""The figures, computed as scheduler_perf computes them.

- SchedulingThroughput: a 1-second ticker reads how many measured pods are bound. Ticks
  before the first bound pod are ignored, the first one with pods only sets the start,
  an interval in which nothing was bound is merged into the next, whose rate (pods over
  the real elapsed time) is then recorded once per interval it spans. Average is the
  mean of those samples, PercN the nearest-rank percentile (util.go's
  throughputCollector, 1.28 to 1.37).
- Latencies: the scheduler's own histograms from /metrics, the bucket counts at the end
  of the measured phase minus those at its start, with Prometheus' linear interpolation
  inside a bucket (testutil's bucketQuantile), in milliseconds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

# --- /metrics ---------------------------------------------------------------------------

_SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')

Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Sample:
    name: str
    labels: Labels
    value: float

    def label(self, key: str) -> str:
        return dict(self.labels).get(key, "")


def parse(text: str, prefixes: Sequence[str] = ("scheduler_",)) -> list[Sample]:
    """The samples of Prometheus' text format whose names start with one of
    ``prefixes`` (comments and other families are skipped unparsed)."""
    samples = []
    for line in text.splitlines():
        if not line or line[0] == "#" or not line.startswith(tuple(prefixes)):
            continue
        match = _SAMPLE.fullmatch(line.strip())
        if match is None:
            continue
        labels = tuple(
            (m[1], m[2].replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\"))
            for m in _LABEL.finditer(match[3] or "")
        )
        try:
            value = float(match[4])
        except ValueError:
            continue
        samples.append(Sample(match[1], labels, value))
    return samples


@dataclass(frozen=True)
class Histogram:
    """Cumulative bucket counts by upper bound (the last is +Inf), with sum and count."""

    bounds: tuple[float, ...]
    counts: tuple[float, ...]
    total: float = 0.0
    count: float = 0.0

    def __sub__(self, earlier: Histogram) -> Histogram:
        if earlier.bounds != self.bounds:
            return self
        return Histogram(
            self.bounds,
            tuple(a - b for a, b in zip(self.counts, earlier.counts, strict=True)),
            self.total - earlier.total,
            self.count - earlier.count,
        )

    def __add__(self, other: Histogram) -> Histogram:
        if not other.bounds:
            return self
        if not self.bounds:
            return other
        return Histogram(
            self.bounds,
            tuple(a + b for a, b in zip(self.counts, other.counts, strict=True)),
            self.total + other.total,
            self.count + other.count,
        )

    def quantile(self, q: float) -> float:
        """Prometheus' bucketQuantile: linear within the bucket; in the +Inf bucket, the
        last finite bound; the first bucket interpolates from 0."""
        if self.count <= 0 or len(self.bounds) < 2:
            return math.nan
        rank = q * self.counts[-1]
        index = next(i for i, c in enumerate(self.counts) if c >= rank)
        if index == len(self.bounds) - 1:
            return self.bounds[-2]
        start = 0.0 if index == 0 else self.bounds[index - 1]
        below = 0.0 if index == 0 else self.counts[index - 1]
        in_bucket = self.counts[index] - below
        if in_bucket <= 0:
            return self.bounds[index]
        return start + (self.bounds[index] - start) * (rank - below) / in_bucket

    @property
    def average(self) -> float:
        return self.total / self.count if self.count > 0 else math.nan


EMPTY = Histogram((), ())


def histograms(
    samples: Iterable[Sample], name: str, by: Sequence[str], where: Mapping[str, str]
) -> dict[Labels, Histogram]:
    """The histogram ``name``, summed over the labels not in ``by``, keeping only the
    series whose labels match ``where``; keyed by the ``by`` labels' values."""
    buckets: dict[Labels, dict[float, float]] = {}
    sums: dict[Labels, float] = {}
    counts: dict[Labels, float] = {}
    for sample in samples:
        if not sample.name.startswith(name) or any(sample.label(k) != v for k, v in where.items()):
            continue
        key = tuple((k, sample.label(k)) for k in by)
        suffix = sample.name[len(name) :]
        if suffix == "_bucket":
            le = sample.label("le")
            bound = math.inf if le == "+Inf" else float(le)
            series = buckets.setdefault(key, {})
            series[bound] = series.get(bound, 0.0) + sample.value
        elif suffix == "_sum":
            sums[key] = sums.get(key, 0.0) + sample.value
        elif suffix == "_count":
            counts[key] = counts.get(key, 0.0) + sample.value
    result = {}
    for key, series in buckets.items():
        bounds = tuple(sorted(series))
        result[key] = Histogram(bounds, tuple(series[b] for b in bounds), sums.get(key, 0.0), counts.get(key, 0.0))
    return result


def value(samples: Iterable[Sample], name: str, where: Mapping[str, str]) -> float:
    """The sum of the gauge or counter ``name`` over the series matching ``where``."""
    return sum(s.value for s in samples if s.name == name and all(s.label(k) == v for k, v in where.items()))


# --- summaries ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    """Average and percentiles, in the unit of the figure (DataItem's data)."""

    average: float
    perc50: float
    perc90: float
    perc95: float
    perc99: float
    count: float = 0.0  # samples or observations behind it

    def data(self) -> dict[str, float]:
        return {
            "Average": self.average,
            "Perc50": self.perc50,
            "Perc90": self.perc90,
            "Perc95": self.perc95,
            "Perc99": self.perc99,
        }

    def ratio(self, baseline: Summary) -> Summary:
        def over(a: float, b: float) -> float:
            return a / b if b and not math.isnan(a) and not math.isnan(b) else math.nan

        return Summary(
            over(self.average, baseline.average),
            over(self.perc50, baseline.perc50),
            over(self.perc90, baseline.perc90),
            over(self.perc95, baseline.perc95),
            over(self.perc99, baseline.perc99),
        )

    @property
    def empty(self) -> bool:
        return self.count == 0


NO_DATA = Summary(math.nan, math.nan, math.nan, math.nan, math.nan, 0)


def throughput_summary(samples: Sequence[float]) -> Summary:
    """util.go's collect(): the mean of the samples and nearest-rank percentiles."""
    if not samples:
        return NO_DATA
    ordered = sorted(samples)
    n = len(ordered)

    def rank(p: int) -> float:
        return ordered[math.ceil(n * p / 100) - 1]

    return Summary(sum(ordered) / n, rank(50), rank(90), rank(95), rank(99), n)


def latency_summary(histogram: Histogram, scale: float = 1000.0) -> Summary:
    """A histogram in seconds as a Summary in milliseconds (bucketQuantile)."""
    if histogram.count <= 0:
        return NO_DATA
    return Summary(
        histogram.average * scale,
        histogram.quantile(0.50) * scale,
        histogram.quantile(0.90) * scale,
        histogram.quantile(0.95) * scale,
        histogram.quantile(0.99) * scale,
        histogram.count,
    )


class ThroughputSampler:
    """scheduler_perf's throughput collector, fed by a ticker: ``tick(now, scheduled)``
    once a second with the cumulative count of measured pods bound."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.points: list[tuple[float, float]] = []  # (tick time, rate): the picture's line
        self.started: float | None = None
        self._last_count = 0
        self._last_time = 0.0
        self._skipped = 0

    def tick(self, now: float, scheduled: int) -> None:
        if scheduled == 0:
            return
        if self.started is None:  # the first tick with pods: only the baseline
            self.started = now
            self._last_count, self._last_time = scheduled, now
            return
        new = scheduled - self._last_count
        if new == 0:
            self._skipped += 1
            return
        rate = new / (now - self._last_time)
        self.samples.extend([rate] * (self._skipped + 1))
        self.points.append((now, rate))
        self._skipped = 0
        self._last_count, self._last_time = scheduled, now
