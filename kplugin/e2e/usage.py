"""Resource arithmetic for reports: quantities as numbers, a pod's effective requests
(as the scheduler counts them: containers, init containers and sidecars, overhead), and
what the pods placed on each node use of it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

_QUANTITY = re.compile(r"([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?")
_SUFFIX: dict[str | None, Fraction] = {
    None: Fraction(1),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    **{s: Fraction(1024**i) for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"), start=1)},
}
BINARY = ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki")

Amounts = dict[str, int]  # resource -> thousandths of its unit (millicores, millibytes)


def milli(quantity: str) -> int:
    """A quantity (already checked: names.quantity_problem) in thousandths, rounded up."""
    match = _QUANTITY.fullmatch(quantity)
    if match is None:
        raise ValueError(f"not a quantity: {quantity!r}")
    value = Fraction(match[1]) * _SUFFIX[match[2]] * 1000
    return -(-value.numerator // value.denominator)  # rounded up


def shown(resource: str, amount: int) -> str:
    """An amount as a person reads it: 1500m, 2, 4Gi."""
    if amount % 1000:
        return f"{amount}m"
    whole = amount // 1000
    if resource == "memory" or resource.startswith(("hugepages-", "ephemeral-storage")):
        for i, suffix in enumerate(BINARY):
            unit = 1024 ** (len(BINARY) - i)
            if whole and whole % unit == 0:
                return f"{whole // unit}{suffix}"
    return str(whole)


def _add(into: Amounts, more: Amounts) -> None:
    for key, value in more.items():
        into[key] = into.get(key, 0) + value


def _requests(container: dict[str, Any]) -> Amounts:
    resources = container.get("resources") or {}
    return {k: milli(v) for k, v in (resources.get("requests") or {}).items()}


def pod_requests(
    containers: Iterable[dict[str, Any]], init: Iterable[dict[str, Any]], overhead: dict[str, str]
) -> Amounts:
    """The scheduler's count: the containers' sum, or the largest init container's
    (counting the sidecars started before it) if larger, plus the overhead."""
    total: Amounts = {}
    for container in containers:
        _add(total, _requests(container))
    sidecars: Amounts = {}
    largest: Amounts = {}
    for container in init:
        own = _requests(container)
        if container.get("restartPolicy") == "Always":
            _add(total, own)
            _add(sidecars, own)
            during = dict(sidecars)
        else:
            during = dict(sidecars)
            _add(during, own)
        for key, value in during.items():
            largest[key] = max(largest.get(key, 0), value)
    for key, value in largest.items():
        total[key] = max(total.get(key, 0), value)
    _add(total, {k: milli(v) for k, v in overhead.items()})
    return total
