"""The Kubernetes name rules, in one place (apimachinery's validation package).

Each check returns why a value breaks the rule, or None; the caller says where the
value came from (a flag, a file and key), so these messages never name a flag.
"""

from __future__ import annotations

import re

DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", re.ASCII)
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", re.ASCII)
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", re.ASCII)
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", re.ASCII)
# resource.Quantity's grammar, restricted to what a scenario needs (no exponents)
_QUANTITY = re.compile(r"[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?", re.ASCII)


def _is_str(value: object) -> bool:
    return isinstance(value, str)


def dns1123_label_problem(value: object) -> str | None:
    if not _is_str(value):
        return f"must be a string, not {type(value).__name__}"
    assert isinstance(value, str)
    if not value:
        return "is empty"
    if len(value) > 63:
        return f"is {len(value)} characters long (at most 63)"
    if not DNS1123_LABEL.fullmatch(value):
        return "is not a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit)"
    return None


def dns1123_subdomain_problem(value: object) -> str | None:
    if not _is_str(value):
        return f"must be a string, not {type(value).__name__}"
    assert isinstance(value, str)
    if not value:
        return "is empty"
    if len(value) > 253 or not DNS1123_SUBDOMAIN.fullmatch(value):
        return "is not a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', at most 253)"
    return None


def qualified_name_problem(value: object) -> str | None:
    """IsQualifiedName: [prefix/]name, the prefix a DNS subdomain, the name at most 63."""
    if not _is_str(value):
        return f"must be a string, not {type(value).__name__}"
    assert isinstance(value, str)
    prefix, slash, name = value.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not DNS1123_SUBDOMAIN.fullmatch(prefix)):
        return "has an invalid prefix (must be a DNS subdomain)"
    if not name or len(name) > 63 or not _QUALIFIED_NAME.fullmatch(name):
        return "is not a qualified name (alphanumerics, '-', '_', '.', at most 63, alphanumeric at both ends)"
    return None


def label_value_problem(value: object) -> str | None:
    if not _is_str(value):
        return f"must be a string, not {type(value).__name__}"
    assert isinstance(value, str)
    if len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
        return "is not a label value (at most 63 alphanumerics, '-', '_', '.', alphanumeric at both ends)"
    return None


def quantity_problem(value: object) -> str | None:
    if not _is_str(value):
        return f"must be a string, not {type(value).__name__}"
    assert isinstance(value, str)
    if len(value) > 64 or not _QUANTITY.fullmatch(value):
        return "is not a quantity (e.g. 2, 500m, 4Gi)"
    return None
