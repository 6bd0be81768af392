"""YAML out of kplugin: always through ruamel.yaml, never by string concatenation."""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.default_flow_style = False
    yaml.indent(mapping=2, sequence=2, offset=0)
    yaml.width = 4096
    return yaml


def dump(document: Any) -> str:
    stream = io.StringIO()
    _yaml().dump(document, stream)
    return stream.getvalue()


def dump_all(documents: Iterable[Any]) -> str:
    stream = io.StringIO()
    _yaml().dump_all(list(documents), stream)
    return stream.getvalue()
