"""The anonymizer of ``kplugin snapshot --anonymize``: applies kplugin.snapshot.anonymize's
TABLE to each scenario entry through one keyed hash (HMAC-SHA256 keyed with the salt),
so that the same name gives the same result wherever it appears."""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable
from typing import Any

from kplugin.core.errors import OperationError
from kplugin.scenario import entries
from kplugin.scenario.entries import Section
from kplugin.scenario.format import EXISTING_NAMESPACES
from kplugin.snapshot.anonymize import TABLE, Act, Position, Rule

_DROP = object()
Fn = Callable[[Any, Any, int], Any]  # (value, the mapping it is in, its position) -> new value or _DROP


def _keep(value: Any, parent: Any, index: int) -> Any:
    return value


_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_KEPT_CALL = re.compile(r"\b(?:quantity|semver|isQuantity|isSemver)\(\s*$")  # "1Gi", "1.0.0" keep their meaning
_DRIVER_LEFT = re.compile(r"device\.driver\s*[!=]=\s*$")
_DRIVER_RIGHT = re.compile(r"^\s*[!=]=\s*device\.driver\b")


class Anonymizer:
    """Applies ``TABLE`` (see the module docstring) through one keyed hash."""

    def __init__(self, salt: str, keep_labels: tuple[str, ...] = (), drivers: bool = False) -> None:
        self.key = salt.encode()
        self.keep = frozenset(keep_labels)
        self.drivers = drivers
        self._memo: dict[str, str] = {}
        self._ephemeral: dict[tuple[str, str], str] = {}  # (namespace, claim) -> its hashed name
        self._namespace = ""  # the namespace of the entry at hand
        self._compiled: dict[str, Fn] = {}  # the rules of each kind met, compiled

    def word(self, value: str) -> str:
        if not value:
            return value
        found = self._memo.get(value)
        if found is None:
            digest = hmac.digest(self.key, value.encode(), "sha256").hex()
            found = self._memo[value] = "a" + digest[:15]
        return found

    def namespace(self, value: str) -> str:
        return value if value in EXISTING_NAMESPACES else self.word(value)

    def value(self, key: str, value: Any) -> Any:
        """A label value (or a selector's, a taint's, a topology's value) under ``key``."""
        if not isinstance(value, str) or key in self.keep:
            return value
        if key == entries.NAMESPACE_NAME_LABEL:
            return self.namespace(value)
        return self.word(value)

    def labels(self, labels: Any, parent: Any = None, index: int = 0) -> Any:
        """Keys kept, values hashed; also the Fn of the LABELS act (no wrapper per value)."""
        if labels.__class__ is not dict:
            return _DROP
        keep, memo, out = self.keep, self._memo, {}
        for key, value in labels.items():  # self.value, inlined: labels are most of the work
            if value.__class__ is not str or key in keep or not value:
                out[key] = value
            elif key == entries.NAMESPACE_NAME_LABEL:
                out[key] = self.namespace(value)
            else:
                out[key] = memo.get(value) or self.word(value)
        return out

    def resources(self, found: Any) -> Any:
        if not isinstance(found, dict):
            return _DROP
        return {self.resource_name(str(k)): v for k, v in found.items()} if self.drivers else found

    def driver(self, name: str) -> str:
        """A driver or provisioner name (or a domain); Kubernetes' own stay."""
        domain = name.partition("/")[0]
        if not self.drivers or domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
            return name
        return self.word(name)

    def resource_name(self, name: str) -> str:
        """An extended resource name as <hashed domain>/<hashed name>, still an extended resource."""
        domain, slash, rest = name.partition("/")
        if not slash or not self.drivers or domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
            return name
        return f"{self.driver(domain)}/{self.word(rest)}"

    def attribute_name(self, name: str) -> str:
        domain, slash, rest = name.partition("/")
        return f"{self.driver(domain)}/{rest}" if slash else name

    def attributes(self, found: Any) -> Any:
        if not isinstance(found, dict):
            return _DROP
        out = {}
        for name, value in found.items():
            if isinstance(value, dict):  # an attribute's string value is hashed; numbers, quantities kept
                value = {k: self.word(v) if k == "string" and isinstance(v, str) else v for k, v in value.items()}
                if isinstance(value.get("strings"), list):
                    value["strings"] = [self.word(v) if isinstance(v, str) else v for v in value["strings"]]
            out[self.attribute_name(str(name))] = value
        return out

    def cel(self, expression: str) -> str:
        """String literals hashed as the attribute values they compare with; a map key
        (an attribute domain) and a device.driver comparison as drivers; quantity() and
        semver() arguments kept."""
        parts, end = [], 0
        for match in _LITERAL.finditer(expression):
            before, after = expression[: match.start()], expression[match.end() :]
            text = match.group()[1:-1]
            if _KEPT_CALL.search(before):
                new = text
            elif before.rstrip().endswith("[") or _DRIVER_LEFT.search(before) or _DRIVER_RIGHT.match(after):
                new = self.driver(text)
            else:
                new = self.word(text)
            parts += [expression[end : match.start()], match.group()[0] + new + match.group()[0]]
            end = match.end()
        return "".join(parts) + expression[end:]

    def claim(self, namespace: str, name: str) -> str:
        return self._ephemeral.get((namespace, name)) or self.word(name)

    def pod_object(self, obj: dict[str, Any]) -> None:
        """Learns a pod's ephemeral volumes: their claims are <pod>-<volume>, and become
        <hashed pod>-<hashed volume> as the API server would name them after the pod."""
        meta = obj.get("metadata") or {}
        pod, namespace = str(meta.get("name")), str(meta.get("namespace", "default"))
        for volume in (obj.get("spec") or {}).get("volumes") or []:
            if isinstance(volume, dict) and isinstance(volume.get("ephemeral"), dict):
                name = str(volume.get("name"))
                self._ephemeral[(namespace, f"{pod}-{name}")] = f"{self.word(pod)}-{self.word(name)}"

    def entry(self, section: Section, entry: dict[str, Any]) -> dict[str, Any]:
        kind = section.kind or str(entry.get("kind"))
        meta = entry.get("metadata") if section is Section.OBJECTS else entry
        self._namespace = str(meta.get("namespace") or "") if isinstance(meta, dict) else ""
        apply = self._compiled.get(kind)
        if apply is None:
            if kind not in TABLE:  # nothing leaves unread: a kind without rules would leave whole
                raise OperationError(f"kplugin has no anonymization rules for {kind} objects; leave them out")
            apply = self._compiled[kind] = self._compile(TABLE[kind])
        out = apply(entry, None, 0)
        return out if isinstance(out, dict) else {}

    # The table is turned into one function per rule once, so that applying it walks
    # each entry once without looking the rules up again (benchmarks/anonymize.py).

    def _compile(self, rule: Rule) -> Fn:
        if isinstance(rule, dict):
            fields = {key: self._compile(sub) for key, sub in rule.items() if sub is not Act.DROP}
            hashed = frozenset(key for key, sub in rule.items() if sub is Act.HASH)  # inlined below
            kept = frozenset(key for key, fn in fields.items() if fn is _keep)
            find, memo, word = fields.get, self._memo, self.word

            def mapping(value: Any, parent: Any, index: int) -> Any:
                if value.__class__ is not dict:
                    return _DROP
                out = {}
                for key, item in value.items():
                    if key in kept:
                        out[key] = item
                    elif key in hashed and item.__class__ is str:  # most names: no call but the memo's
                        out[key] = memo.get(item) or word(item)
                    else:
                        fn = find(key)
                        if fn is not None:
                            new = fn(item, value, index)
                            if new is not _DROP:
                                out[key] = new
                return out

            return mapping
        if isinstance(rule, list):
            each = self._compile(rule[0])

            def items(value: Any, parent: Any, index: int) -> Any:
                if not isinstance(value, list):
                    return _DROP
                done = [each(item, parent, i) for i, item in enumerate(value)]
                return [item for item in done if item is not _DROP]

            return items
        if isinstance(rule, Position):
            prefix = rule.prefix
            return lambda value, parent, index: f"{prefix}{index}"
        return self._act(rule)

    def _act(self, act: Act) -> Fn:
        if act is Act.KEEP:
            return _keep
        if act is Act.LABELS:
            return self.labels
        if act is Act.ATTRIBUTES:
            return lambda value, parent, index: self.attributes(value)
        if act is Act.RESOURCES:
            if not self.drivers:  # names kept: the mapping as the API server gave it (always a mapping)
                return _keep
            return lambda value, parent, index: self.resources(value)
        if act is Act.VALUES:
            return lambda value, parent, index: (
                [self.value(str(parent.get("key")), v) for v in value] if isinstance(value, list) else _DROP
            )
        one = self._plain(act)
        if one is not None:  # the value alone decides: one call less per string

            def run_plain(value: Any, parent: Any, index: int) -> Any:
                if value.__class__ is str:
                    return one(value)
                return value if isinstance(value, (bool, int, float)) or value is None else _DROP

            return run_plain
        scalar = self._scalar(act)

        def run(value: Any, parent: Any, index: int) -> Any:
            if isinstance(value, str):
                return scalar(value, parent)
            return value if isinstance(value, (bool, int, float)) or value is None else _DROP

        return run

    def _plain(self, act: Act) -> Callable[[str], Any] | None:
        """The function of a string for an act that needs nothing but the string."""
        plain: dict[Act, Callable[[str], Any]] = {
            Act.HASH: self.word,
            Act.NAMESPACE: self.namespace,
            Act.PRIORITY_CLASS: lambda v: v if v in entries.BUILTIN_PRIORITY_CLASSES else self.word(v),
            Act.REQUEST: lambda v: "/".join(self.word(part) for part in v.split("/")),
            Act.PATH: lambda v: "/" + self.word(v),
            Act.DRIVER: self.driver,
            Act.RESOURCE_NAME: self.resource_name,
            Act.ATTRIBUTE_NAME: self.attribute_name,
            Act.CEL: self.cel,
        }
        return plain.get(act)

    def _scalar(self, act: Act) -> Callable[[str, Any], Any]:
        if act is Act.VALUE:
            return lambda value, parent: self.value(str(parent.get("key")), value)
        if act is Act.CLAIM:  # a PV's claimRef has its namespace beside the name
            return lambda value, parent: self.claim(str(parent.get("namespace") or self._namespace), value)
        return lambda value, parent: _DROP
