"""The objects a workload creates, as templates: scheduler_perf's default node, and the
node, pod and namespace template files a workload names (plain YAML, each read once
and checked: one v1 object of the kind the op creates; a pod that can be scheduled).
Built-in workloads' templates are package data.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from kplugin.bench import gotemplate
from kplugin.bench.gotemplate import ObjectTemplate
from kplugin.core import safefs, yamlio
from kplugin.core.errors import UsageError
from kplugin.kube.kinds import KIND_NAME, is_api_version

POD_GROUP_API = "scheduling.k8s.io"

DEFAULT_NODE: dict[str, Any] = {
    # scheduler_perf's node when a createNodes op names no template (every minor)
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"generateName": "node-0-"},
    "status": {
        "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}


def data_dir() -> Path:
    """The built-in workloads and their templates (package data)."""
    return Path(str(resources.files("kplugin").joinpath("data/bench")))


@dataclass
class TemplateFiles:
    """The template files of one workload, each read once: relative to the workload
    file's directory or, as scheduler_perf reads them, to the current directory; for a
    built-in workload (``base`` None), package data."""

    base: Path | None
    fail: Callable[[str, str], UsageError]  # (where, problem): the error naming the file and the key
    cache: dict[str, tuple[str, str, Path]] = field(default_factory=dict)  # path -> (text, shown, file)

    def _text(self, path_value: Any, where: str) -> tuple[str, str, Path]:
        if not isinstance(path_value, str) or not path_value.strip():
            raise self.fail(where, f"must be a template file's path, not {yamlio.describe(path_value)}")
        if path_value not in self.cache:
            if self.base is None:  # a built-in workload: its templates are package data
                path = data_dir() / path_value
                text = path.read_text()
                shown = f"built-in template {path_value}"
            else:
                if "\x00" in path_value or Path(path_value).is_absolute():
                    raise self.fail(where, f"{path_value!r}: give a path relative to the workload file")
                candidates = [self.base / path_value, Path.cwd() / path_value]
                path = next((p for p in candidates if safefs.lstat_mode(p) is not None), candidates[0])
                if safefs.lstat_mode(path) is None:
                    raise self.fail(
                        where, f"template {path_value!r} not found (looked in {self.base} and {Path.cwd()})"
                    )
                shown = str(path)
                text = safefs.read_text(path, "template", safefs.SMALL_FILE)
            self.cache[path_value] = (text, shown, path)
        return self.cache[path_value]

    def read(self, path_value: Any, where: str, kind: str | tuple[str, ...]) -> dict[str, Any]:
        """A node, pod or namespace template file: plain YAML of one object of ``kind``."""
        text, shown, path = self._text(path_value, where)
        if "{{" in text:
            raise self.fail(
                where,
                f"template {shown} uses Go template syntax ({{{{ }}}}), which kplugin bench expands only for the "
                "createPods and createPodGroups ops that give templateParams",
            )
        return self._checked(yamlio.parse(text, f"template {shown}", path=path), path_value, where, kind)

    def read_object(self, path_value: Any, where: str, kind: str, known: frozenset[str]) -> ObjectTemplate:
        """A pod or pod group template that may print ``.Index`` and the params ``known``
        (see gotemplate)."""
        text, shown, path = self._text(path_value, where)

        def fail(problem: str) -> UsageError:
            return self.fail(where, f"template {shown}: {problem}")

        marked, actions = gotemplate.expand(text, known | {gotemplate.INDEX}, fail)
        parsed = yamlio.parse(marked, f"template {shown}", path=path)
        gotemplate.check_keys(parsed, fail)
        return ObjectTemplate(self._checked(parsed, path_value, where, kind), actions)

    def _checked(self, document: Any, path_value: str, where: str, kind: str | tuple[str, ...]) -> dict[str, Any]:
        kinds = (kind,) if isinstance(kind, str) else kind
        if not isinstance(document, dict):
            # its kind only: a workload may name any file (scheduler_perf's own reach theirs
            # through '..'), and none of a file that is no template is shown
            raise self.fail(
                where, f"template {path_value} must be one Kubernetes object, not {yamlio.kind_of(document)}"
            )
        found = document.get("kind")
        if found not in kinds:
            # a refusal quotes a kind and an apiVersion only when they have the shape of one:
            # a workload may name any file, and a value of another shape may hold anything
            shown = (
                found if isinstance(found, str) and KIND_NAME.fullmatch(found) else "document without a Kubernetes kind"
            )
            raise self.fail(where, f"template {path_value} is a {shown}; expected {' or '.join(kinds)}")
        api_version = document.get("apiVersion", "v1")
        if found == "PodGroup":
            expected, fits = f"{POD_GROUP_API}/VERSION", str(api_version).startswith(f"{POD_GROUP_API}/")
        else:
            expected, fits = "v1", api_version == "v1"
        if not fits:
            shown = repr(api_version) if is_api_version(api_version) else "that is no API version"
            raise self.fail(where, f"template {path_value}: apiVersion {shown}; expected {expected}")
        metadata = document.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise self.fail(where, f"template {path_value}: metadata must be a mapping")
        if found == "Pod":
            _check_pod(document, path_value, where, self.fail)
        return copy.deepcopy(document)


def _check_pod(pod: dict[str, Any], name: str, where: str, fail: Callable[[str, str], UsageError]) -> None:
    spec = pod.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("containers"), list) or not spec["containers"]:
        raise fail(where, f"pod template {name} needs spec.containers")
    if spec.get("nodeName"):
        raise fail(where, f"pod template {name} sets spec.nodeName: such a pod is bound already, never scheduled")
    for key in ("labels", "annotations"):
        value = (pod.get("metadata") or {}).get(key)
        if value is not None and (not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values())):
            raise fail(where, f"pod template {name}: metadata.{key} must map names to strings")
