"""The repository's files besides Go code that kplugin can use: KubeSchedulerConfiguration
files (with their apiVersion and scheduler names), CRDs, Dockerfiles, a Makefile, Helm
charts and deploy manifests. Read, never changed."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from kplugin.adopt.registry import Unread
from kplugin.core import yamlio
from kplugin.core.errors import UsageError

CONFIG_KIND = "KubeSchedulerConfiguration"
CONFIG_GROUP = "kubescheduler.config.k8s.io"
_MAX_YAML = 1024 * 1024
_SKIPPED = {"vendor", "node_modules", "testdata", "third_party", "hack"}
_DEPLOY_KINDS = {
    "Deployment", "StatefulSet", "DaemonSet", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
    "RoleBinding", "ConfigMap",
}  # fmt: skip
_DOCKERFILE = re.compile(r"(?:Dockerfile|Containerfile)(?:\.[\w.-]+)?|[\w.-]+\.(?:Dockerfile|dockerfile)")


class ConfigFile(NamedTuple):
    path: PurePosixPath
    api_version: str
    scheduler_names: tuple[str, ...]


class Files(NamedTuple):
    configs: tuple[ConfigFile, ...]
    crds: tuple[PurePosixPath, ...]
    dockerfiles: tuple[PurePosixPath, ...]
    makefile: PurePosixPath | None
    charts: tuple[PurePosixPath, ...]
    manifests: tuple[PurePosixPath, ...]
    unread: tuple[Unread, ...]


def _walk(root: Path) -> list[PurePosixPath]:
    found = []
    for top, dirs, files in os.walk(root):
        here = Path(top)
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED and not d.startswith((".", "_")))
        found += [PurePosixPath((here / f).relative_to(root).as_posix()) for f in sorted(files)]
    return sorted(found)


def _documents(root: Path, relative: PurePosixPath) -> list[Any] | str:
    """The documents of a YAML file, or why they cannot be read."""
    path = root / relative
    try:
        st = path.lstat()  # a regular file only: a FIFO would block the read
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_YAML:
            return "not a regular file (a link, FIFO or device), or over 1 MiB"
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return f"cannot be read ({err.__class__.__name__})"
    if CONFIG_KIND not in text and "CustomResourceDefinition" not in text and "kind:" not in text:
        return []
    try:
        return [d for d in yamlio.parse(text, str(relative), path=relative, every_document=True) if isinstance(d, dict)]
    except UsageError as err:
        if CONFIG_KIND in text or "CustomResourceDefinition" in text:
            return f"not plain YAML ({str(err).removeprefix(str(relative)).strip()[:120]})"
        return []


def _scheduler_names(document: dict[Any, Any]) -> tuple[str, ...]:
    profiles = document.get("profiles")
    names = [p.get("schedulerName") for p in profiles if isinstance(p, dict)] if isinstance(profiles, list) else []
    return tuple(n if isinstance(n, str) else "default-scheduler" for n in names)


def _embedded_config(document: dict[Any, Any]) -> bool:
    data = document.get("data")
    return document.get("kind") == "ConfigMap" and isinstance(data, dict) and any(
        isinstance(v, str) and CONFIG_KIND in v for v in data.values()
    )  # fmt: skip


def scan(root: Path) -> Files:
    """What the repository holds besides Go code, sorted by path."""
    configs: list[ConfigFile] = []
    crds, dockerfiles, manifests = [], [], []
    unread: list[Unread] = []
    paths = _walk(root)
    chart_dirs = sorted({p.parent for p in paths if p.name == "Chart.yaml"})
    for relative in paths:
        if _DOCKERFILE.fullmatch(relative.name):
            dockerfiles.append(relative)
        if relative.suffix not in {".yaml", ".yml"} or any(d in relative.parents for d in chart_dirs):
            continue
        documents = _documents(root, relative)
        if isinstance(documents, str):
            unread.append(Unread(str(relative), documents))
            continue
        kinds = {d.get("kind") for d in documents}
        for document in documents:
            if document.get("kind") == CONFIG_KIND and str(document.get("apiVersion", "")).startswith(CONFIG_GROUP):
                if configs and configs[-1].path == relative:  # one record a file: its first apiVersion, every name
                    names = tuple(dict.fromkeys((*configs[-1].scheduler_names, *_scheduler_names(document))))
                    configs[-1] = configs[-1]._replace(scheduler_names=names)
                else:
                    configs.append(ConfigFile(relative, str(document["apiVersion"]), _scheduler_names(document)))
            elif _embedded_config(document):
                name = (document.get("metadata") or {}).get("name", "?")
                unread.append(Unread(f"{relative} (ConfigMap {name})", "a KubeSchedulerConfiguration inside a "
                                     "ConfigMap; kplugin reads configuration files of their own"))  # fmt: skip
        if "CustomResourceDefinition" in kinds:
            crds.append(relative)
        if kinds & _DEPLOY_KINDS:
            manifests.append(relative)
    top = [p for p in paths if len(p.parts) == 1 and p.name in {"Makefile", "GNUmakefile", "makefile"}]
    return Files(
        configs=tuple(configs),
        crds=tuple(crds),
        dockerfiles=tuple(dockerfiles),
        makefile=top[0] if top else None,
        charts=tuple(chart_dirs),
        manifests=tuple(manifests),
        unread=tuple(unread),
    )
