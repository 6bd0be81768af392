"""The Go files of the project's own API types (``kplugin add api``), rendered from
``templates/api/`` with the project template's delimiters:

- per group and version, ``apis/<group>/<version>/doc.go`` and ``register.go``: managed
  files, rendered from kplugin.yaml's ``apis`` with the rest of the project (a second kind
  of the same group and version joins register.go);
- per kind, its ``<kind>_types.go``, and in the plugin that reads it a source of the
  kind (informer, lister, events with a QueueingHint) and its test: the user's, written
  once by ``kplugin add api``.
"""

from __future__ import annotations

import functools
from pathlib import PurePosixPath
from typing import Any

from kplugin.generate import gosource, templating
from kplugin.model.apitypes import ApiType
from kplugin.model.goapi import NATIVE
from kplugin.model.spec import ProjectSpec


@functools.cache
def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templating.templates_root() / "api")),
        variable_start_string="[[",
        variable_end_string="]]",
        block_start_string="<%",
        block_end_string="%>",
        comment_start_string="<#",
        comment_end_string="#>",
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )


def _render(name: str, **context: Any) -> bytes:
    return gosource.tidy(_environment().get_template(name).render(**context)).encode()


def _api(api: ApiType) -> dict[str, Any]:
    return {
        "kind": api.kind,
        "group": api.group,
        "version": api.version,
        "plural": api.plural,
        "go_plural": api.go_plural,
        "short": api.short,
        "alias": api.alias,
        "scope": api.scope,
        "namespaced": api.namespaced,
        "event_resource": api.event_resource,
    }


def group_files(spec: ProjectSpec) -> dict[PurePosixPath, bytes]:
    """doc.go and register.go of every group and version of the project's kinds."""
    by_package: dict[PurePosixPath, list[ApiType]] = {}
    for api in spec.apis:
        by_package.setdefault(api.directory, []).append(api)
    files: dict[PurePosixPath, bytes] = {}
    for directory, kinds in sorted(by_package.items()):
        kinds.sort(key=lambda a: a.kind)
        group = {
            "group": kinds[0].group,
            "version": kinds[0].version,
            "kinds": [a.kind for a in kinds],
            "apis": [_api(a) for a in kinds],
        }
        files[directory / "doc.go"] = _render("doc.go", g=group)
        files[directory / "register.go"] = _render("register.go", g=group)
    return files


def types_path(api: ApiType) -> PurePosixPath:
    return api.directory / f"{api.kind.lower()}_types.go"


def source_paths(api: ApiType, package: str) -> tuple[PurePosixPath, PurePosixPath]:
    base = PurePosixPath("pkg", package, f"{api.kind.lower()}_source")
    return base.with_suffix(".go"), PurePosixPath(f"{base}_test.go")


def kind_files(spec: ProjectSpec, api: ApiType, context: dict[str, Any]) -> dict[PurePosixPath, bytes]:
    """The kind's types and, in the plugin of ``context`` (the project template's context
    for that plugin), its source and test."""
    values = {
        "a": _api(api),
        "c": context,
        "T": context["_names"],
        "S": context["_shape"],
        "native": spec.api == NATIVE,
    }
    source, test = source_paths(api, context["package"])
    return {
        types_path(api): _render("types.go", **values),
        source: _render("source.go", **values),
        test: _render("source_test.go", **values),
    }
