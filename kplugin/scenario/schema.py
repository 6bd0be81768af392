"""The parts of Kubernetes objects a scenario carries (tolerations, affinity, topology
spread, containers' resources and ports, taints, ...), as small schemas that check a
value key by key: unknown keys, wrong types, enum values, names, label keys and values,
quantities. Each problem is a UsageError naming the key path; walking only along a
schema also bounds the depth of what is read.

The API server is the final word on what it accepts; these checks catch, before
anything starts, what a hand-written scenario or a hand-edited list gets wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kplugin.core import names

Fail = Callable[[str, str], Exception]  # (where, problem) -> the error to raise


def shown(value: Any) -> str:
    """A value as an error message shows it: repr, cut short."""
    text = (
        repr(value)
        if not isinstance(value, int) or abs(value) < 10**30
        else f"<an integer of {len(str(value))} digits>"
    )
    return text if len(text) <= 80 else text[:77] + "..."


def scalar(value: Any) -> str | None:
    """A YAML scalar as Kubernetes reads a string field, or None (booleans are not
    strings: a label value must be the string "true")."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and abs(value) < 10**18:
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value == value and abs(value) < 1e18:
        return str(value)
    return None


class Kind(Protocol):
    """One kind of value; ``check`` returns it as the API wants it, or raises."""

    def check(self, value: Any, where: str, fail: Fail) -> Any: ...


@dataclass(frozen=True)
class Text(Kind):
    rule: str = ""  # "", "dns-label", "dns-subdomain", "qualified", "label-value"
    limit: int = 4096

    def check(self, value: Any, where: str, fail: Fail) -> Any:
        if not isinstance(value, str):
            raise fail(where, f"{shown(value)} must be a string")
        problem = {
            "dns-label": names.dns1123_label_problem,
            "dns-subdomain": names.dns1123_subdomain_problem,
            "qualified": names.qualified_name_problem,
            "label-value": names.label_value_problem,
        }.get(self.rule, lambda v: None if len(v) <= self.limit else f"is longer than {self.limit}")(value)
        if problem:
            raise fail(where, f"{shown(value)} {problem}")
        return value


@dataclass(frozen=True)
class Int(Kind):
    low: int = -(2**31)
    high: int = 2**31 - 1

    def check(self, value: Any, where: str, fail: Fail) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or not self.low <= value <= self.high:
            raise fail(where, f"{shown(value)} must be a whole number from {self.low} to {self.high}")
        return value


@dataclass(frozen=True)
class Bool(Kind):
    def check(self, value: Any, where: str, fail: Fail) -> Any:
        if not isinstance(value, bool):
            raise fail(where, f"{shown(value)} must be true or false")
        return value


@dataclass(frozen=True)
class OneOf(Kind):
    choices: tuple[str, ...]

    def check(self, value: Any, where: str, fail: Fail) -> Any:
        if value not in self.choices:
            choices = ", ".join(c or "''" for c in self.choices)
            raise fail(where, f"{shown(value)} is not one of {choices}")
        return value


@dataclass(frozen=True)
class Quantity(Kind):
    def check(self, value: Any, where: str, fail: Fail) -> Any:
        text = scalar(value)
        if text is None or names.quantity_problem(text):
            raise fail(where, f"{shown(value)} is not a quantity (e.g. 2, 500m, 4Gi)")
        return text


@dataclass(frozen=True)
class LabelValue(Kind):
    def check(self, value: Any, where: str, fail: Fail) -> Any:
        text = scalar(value)
        if text is None or names.label_value_problem(text):
            raise fail(where, f'{shown(value)} is not a label value (quote it: "true")')
        return text


@dataclass(frozen=True)
class AnnotationValue(Kind):
    def check(self, value: Any, where: str, fail: Fail) -> Any:
        if not isinstance(value, str):
            raise fail(where, f'{shown(value)} is not a string (quote it: "true")')
        if len(value) > 256 * 1024:
            raise fail(where, "is longer than 256 KiB")
        return value


@dataclass(frozen=True)
class Map(Kind):
    """A mapping with keys of one rule and values of one kind (labels, quantities)."""

    key_kind: str  # shown in messages, e.g. "a label key (e.g. example.com/gpu)"
    value: Kind

    def check(self, value: Any, where: str, fail: Fail) -> Any:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise fail(where, f"must be a mapping, not {type(value).__name__}")
        out = {}
        for key, item in value.items():
            if names.qualified_name_problem(key):
                raise fail(where, f"{shown(key)} is not {self.key_kind}")
            out[key] = self.value.check(item, f"{where}.{key}", fail)
        return dict(sorted(out.items()))


@dataclass(frozen=True)
class List(Kind):
    item: Kind
    most: int = 100_000

    def check(self, value: Any, where: str, fail: Fail) -> Any:
        if value is None:
            return []
        if not isinstance(value, list):
            raise fail(where, "must be a list")
        if len(value) > self.most:
            raise fail(where, f"has {len(value)} entries (at most {self.most})")
        return [self.item.check(item, f"{where}[{i}]", fail) for i, item in enumerate(value)]


@dataclass(frozen=True)
class Obj(Kind):
    """A mapping with known keys, each of its own kind; ``required`` must be present."""

    fields: dict[str, Kind]
    required: tuple[str, ...] = ()

    def check(self, value: Any, where: str, fail: Fail) -> Any:
        if not isinstance(value, dict):
            raise fail(where, f"must be a mapping, not {type(value).__name__}")
        for key in value:
            if key not in self.fields:
                known = ", ".join(sorted(self.fields))
                raise fail(where, f"unknown key {shown(key)} (known: {known})")
        for key in self.required:
            if value.get(key) is None:
                raise fail(where, f"{key} is missing")
        return {
            key: self.fields[key].check(item, f"{where}.{key}", fail) for key, item in value.items() if item is not None
        }


@dataclass(frozen=True)
class Opaque(Kind):
    """Any plain data (a mapping), passed on for the API server to check; only its depth
    and size are bounded here."""

    depth: int = 24

    def check(self, value: Any, where: str, fail: Fail) -> Any:
        if not isinstance(value, dict):
            raise fail(where, f"must be a mapping, not {type(value).__name__}")
        stack: list[tuple[Any, int]] = [(value, 1)]
        seen = 0
        while stack:
            item, level = stack.pop()
            seen += 1
            if level > self.depth:
                raise fail(where, f"is nested more than {self.depth} levels deep")
            if seen > 100_000:
                raise fail(where, "has more than 100,000 values")
            if isinstance(item, dict):
                for key in item:
                    if not isinstance(key, str):
                        raise fail(where, f"has a key that is not a string: {shown(key)}")
                stack.extend((v, level + 1) for v in item.values())
            elif isinstance(item, list):
                stack.extend((v, level + 1) for v in item)
            elif not (item is None or isinstance(item, (str, int, float, bool))):
                raise fail(where, f"holds {shown(item)}, which is not plain data")
        return value


# --- the pieces of nodes and pods ------------------------------------------------------

STRING = Text()
DNS_LABEL = Text("dns-label")
DNS_SUBDOMAIN = Text("dns-subdomain")
LABEL_KEY = Text("qualified")
LABELS = Map("a label key (e.g. example.com/gpu)", LabelValue())
QUANTITIES = Map("a resource name (e.g. cpu, memory, example.com/gpu)", Quantity())

TAINT_EFFECT = OneOf(("NoSchedule", "PreferNoSchedule", "NoExecute"))
TAINT = Obj(
    {"key": LABEL_KEY, "value": LabelValue(), "effect": TAINT_EFFECT, "timeAdded": STRING},
    required=("key", "effect"),
)
TOLERATION = Obj(
    {
        "key": Text(limit=317),
        "operator": OneOf(("Exists", "Equal")),
        "value": STRING,
        "effect": OneOf(("NoSchedule", "PreferNoSchedule", "NoExecute", "")),
        "tolerationSeconds": Int(-(2**63), 2**63 - 1),
    }
)
SELECTOR_REQUIREMENT = Obj(
    {
        "key": LABEL_KEY,
        "operator": OneOf(("In", "NotIn", "Exists", "DoesNotExist")),
        "values": List(LabelValue()),
    },
    required=("key", "operator"),
)
LABEL_SELECTOR = Obj({"matchLabels": LABELS, "matchExpressions": List(SELECTOR_REQUIREMENT)})
NODE_SELECTOR_REQUIREMENT = Obj(
    {
        "key": Text(limit=317),
        "operator": OneOf(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")),
        "values": List(STRING),
    },
    required=("key", "operator"),
)
NODE_SELECTOR_TERM = Obj(
    {"matchExpressions": List(NODE_SELECTOR_REQUIREMENT), "matchFields": List(NODE_SELECTOR_REQUIREMENT)}
)
NODE_AFFINITY = Obj(
    {
        "requiredDuringSchedulingIgnoredDuringExecution": Obj(
            {"nodeSelectorTerms": List(NODE_SELECTOR_TERM)}, required=("nodeSelectorTerms",)
        ),
        "preferredDuringSchedulingIgnoredDuringExecution": List(
            Obj({"weight": Int(1, 100), "preference": NODE_SELECTOR_TERM}, required=("weight", "preference"))
        ),
    }
)
POD_AFFINITY_TERM = Obj(
    {
        "labelSelector": LABEL_SELECTOR,
        "namespaces": List(DNS_LABEL),
        "topologyKey": LABEL_KEY,
        "namespaceSelector": LABEL_SELECTOR,
        "matchLabelKeys": List(LABEL_KEY),
        "mismatchLabelKeys": List(LABEL_KEY),
    },
    required=("topologyKey",),
)
POD_AFFINITY = Obj(
    {
        "requiredDuringSchedulingIgnoredDuringExecution": List(POD_AFFINITY_TERM),
        "preferredDuringSchedulingIgnoredDuringExecution": List(
            Obj({"weight": Int(1, 100), "podAffinityTerm": POD_AFFINITY_TERM}, required=("weight", "podAffinityTerm"))
        ),
    }
)
AFFINITY = Obj({"nodeAffinity": NODE_AFFINITY, "podAffinity": POD_AFFINITY, "podAntiAffinity": POD_AFFINITY})
TOPOLOGY_SPREAD = Obj(
    {
        "maxSkew": Int(1),
        "topologyKey": LABEL_KEY,
        "whenUnsatisfiable": OneOf(("DoNotSchedule", "ScheduleAnyway")),
        "labelSelector": LABEL_SELECTOR,
        "minDomains": Int(1),
        "nodeAffinityPolicy": OneOf(("Honor", "Ignore")),
        "nodeTaintsPolicy": OneOf(("Honor", "Ignore")),
        "matchLabelKeys": List(LABEL_KEY),
    },
    required=("maxSkew", "topologyKey", "whenUnsatisfiable"),
)
RESOURCES = Obj(
    {
        "requests": QUANTITIES,
        "limits": QUANTITIES,
        "claims": List(Obj({"name": DNS_LABEL, "request": STRING}, required=("name",))),
    }
)
PORT = Obj(
    {
        "containerPort": Int(1, 65535),
        "hostPort": Int(0, 65535),
        "hostIP": STRING,
        "protocol": OneOf(("TCP", "UDP", "SCTP")),
        "name": STRING,
    },
    required=("containerPort",),
)
CONTAINER = Obj({"name": DNS_LABEL, "resources": RESOURCES, "ports": List(PORT)}, required=("name",))
INIT_CONTAINER = Obj(
    {"name": DNS_LABEL, "resources": RESOURCES, "ports": List(PORT), "restartPolicy": OneOf(("Always",))},
    required=("name",),
)
VOLUME = Obj(
    {
        "name": DNS_LABEL,
        "persistentVolumeClaim": Obj({"claimName": DNS_SUBDOMAIN, "readOnly": Bool()}, required=("claimName",)),
    },
    required=("name", "persistentVolumeClaim"),
)
POD_RESOURCE_CLAIM = Obj(
    {"name": DNS_LABEL, "resourceClaimName": DNS_SUBDOMAIN, "resourceClaimTemplateName": DNS_SUBDOMAIN},
    required=("name",),
)
SCHEDULING_GATE = Obj({"name": LABEL_KEY}, required=("name",))
# the pod group a pod belongs to (workload-aware scheduling, 1.36 on)
SCHEDULING_GROUP = Obj({"podGroupName": DNS_SUBDOMAIN}, required=("podGroupName",))
