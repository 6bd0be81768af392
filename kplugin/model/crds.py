"""The project's CustomResourceDefinitions: the kinds of its plugins' own API, one or more
per YAML file under ``config/crd/`` (``make generate`` writes them from the Go types; a
user may add others). e2e creates them before a scenario's objects, deploy/ and the chart
install them. Files are read as every project file is (regular files only, bounded), in
name order, so the same directory always gives the same list."""

from __future__ import annotations

import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from kplugin.core import safefs, yamlio
from kplugin.core.errors import UsageError

CRD_DIR = PurePosixPath("config/crd")
API_VERSION = "apiextensions.k8s.io/v1"
KIND = "CustomResourceDefinition"
MAX_FILES = 200


@dataclass(frozen=True)
class Definition:
    """One CRD document: where it is and what it says."""

    file: PurePosixPath  # relative to the project
    index: int  # the document's place in its file
    body: dict[str, Any]

    @property
    def name(self) -> str:
        return str((self.body.get("metadata") or {}).get("name", ""))

    @property
    def where(self) -> str:
        return f"{self.file}" + (f" (document {self.index + 1})" if self.index else "")


def files(root: Path) -> list[PurePosixPath]:
    """The YAML files under config/crd/, by name; a symlink or special file among them
    is a UsageError."""
    directory = safefs.inside(root, CRD_DIR)
    mode = safefs.lstat_mode(directory)
    if mode is None:
        return []
    if not stat.S_ISDIR(mode):
        raise UsageError(f"{directory} is not a directory; kplugin keeps the project's CRDs there")
    found = sorted(p.name for p in directory.iterdir() if p.suffix in (".yaml", ".yml"))
    if len(found) > MAX_FILES:
        raise UsageError(f"{directory} holds {len(found)} YAML files; kplugin reads at most {MAX_FILES}")
    return [CRD_DIR / name for name in found]


def load(root: Path, recorded: Sequence[str] | None = None) -> list[Definition]:
    """Every CRD of the project, checked to be one (apiVersion, kind, a name); with
    ``recorded`` (an adopted repository's CRD files, kplugin.yaml's adopted.crds), the CRD
    documents of those files, whatever else they hold."""
    definitions = []
    for relative in files(root) if recorded is None else [PurePosixPath(r) for r in recorded]:
        data = safefs.read_project_file(root, relative)
        if data is None and recorded is not None:
            raise UsageError(f"{root / relative} is missing; kplugin refresh records the files again")
        if data is None:  # gone in between
            continue
        text = safefs.decode(data, "CRD file", root / relative)
        for index, document in enumerate(yamlio.parse(text, str(root / relative), every_document=True)):
            definition = Definition(relative, index, document if isinstance(document, dict) else {})
            where = root / relative
            if recorded is not None and not (isinstance(document, dict) and document.get("kind") == KIND):
                continue
            if recorded is not None and document.get("apiVersion") != API_VERSION:
                raise UsageError(
                    f"{where}: document {index + 1} is a {KIND} of {document.get('apiVersion')!r}, which no "
                    f"Kubernetes kplugin knows serves; write it as {API_VERSION}"
                )
            if not isinstance(document, dict) or (document.get("apiVersion"), document.get("kind")) != (
                API_VERSION,
                KIND,
            ):
                raise UsageError(
                    f"{where}: document {index + 1} is not an {API_VERSION} {KIND}; "
                    f"{CRD_DIR}/ holds only CRDs (move other manifests to deploy/)"
                )
            if not definition.name:
                raise UsageError(f"{where}: document {index + 1} has no metadata.name")
            definitions.append(definition)
    return definitions


def manifest(definitions: Sequence[Definition]) -> str | None:
    """The CRDs as one multi-document YAML, as deploy/crds.yaml and the chart's crds/
    install them; None when there are none (no file)."""
    return yamlio.dump_all(d.body for d in definitions) if definitions else None
