"""An existing kplugin project on disk, as its kplugin.yaml describes it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kplugin.errors import UsageError
from kplugin.spec import PluginSpec, parse_extension_points
from kplugin.versions import KubeVersion, Target, resolve

PROJECT_FILE = "kplugin.yaml"


@dataclass(frozen=True)
class Project:
    root: Path
    name: str
    module: str
    target: Target
    scheduler_name: str
    image: str
    plugins: tuple[PluginSpec, ...]
    args_fields: dict[str, dict[str, str]]

    @property
    def version(self) -> KubeVersion:
        return self.target.version


def load(path: Path) -> Project:
    """Read PATH/kplugin.yaml; a missing or corrupt file is a usage error naming it."""
    root = path.resolve()
    meta_file = root / PROJECT_FILE
    if not meta_file.is_file():
        raise UsageError(f"{path} is not a kplugin project (no {PROJECT_FILE}); run kplugin new first")
    from kplugin import yamlio

    raw: Any = yamlio.load_file(meta_file, "project file")
    try:
        plugins = tuple(
            PluginSpec(
                name=str(p["name"]),
                extension_points=parse_extension_points(",".join(p["extensionPoints"])),
            )
            for p in raw["plugins"]
        )
        return Project(
            root=root,
            name=str(raw["name"]),
            module=str(raw["module"]),
            target=resolve(str(raw["kubernetes"])),
            scheduler_name=str(raw["schedulerName"]),
            image=str(raw["image"]),
            plugins=plugins,
            args_fields={str(p["name"]): dict(p.get("args") or {}) for p in raw["plugins"]},
        )
    except (KeyError, TypeError) as err:
        raise UsageError(f"{meta_file} is missing or has a malformed field {err}; restore it") from None
