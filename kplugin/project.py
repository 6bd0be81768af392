"""An existing kplugin project on disk, as its kplugin.yaml describes it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kplugin.errors import UsageError
from kplugin.goapi import NATIVE
from kplugin.spec import (
    PluginSpec,
    ProjectSpec,
    parse_extension_points,
    retag_image,
    validate_api,
    validate_image,
)
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
    api: str = NATIVE
    # sha256 of each managed file as kplugin last wrote it (empty for projects of 0.1.0)
    generated: dict[str, str] = field(default_factory=dict)

    @property
    def version(self) -> KubeVersion:
        return self.target.version

    def spec(self, target: Target | None = None, plugins: tuple[PluginSpec, ...] | None = None) -> ProjectSpec:
        """The spec this project was generated from, optionally for another target or
        with other plugins. The image's tag follows the version where it names it, as the
        default's does (see retag_image)."""
        target = target or self.target
        return ProjectSpec(
            name=self.name,
            module=self.module,
            target=target,
            scheduler_name=self.scheduler_name,
            plugins=plugins if plugins is not None else self.plugins,
            api=self.api,
            image=retag_image(self.image, self.version, target.version),
        )


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
            image=validate_image(str(raw["image"])),
            plugins=plugins,
            args_fields={str(p["name"]): dict(p.get("args") or {}) for p in raw["plugins"]},
            # kplugin 0.1.0 wrote no api key and generated against the framework directly
            api=validate_api(str(raw.get("api", NATIVE))),
            generated={str(k): str(v) for k, v in (raw.get("generated") or {}).items()},
        )
    except UsageError as err:  # a value check written for flags: name the file instead
        message = str(err).replace("--k8s ", "kubernetes: ").replace("--extension-points ", "extensionPoints: ")
        raise UsageError(f"{meta_file}: {message.replace('--api ', 'api: ')}") from None
    except (KeyError, TypeError, AttributeError, ValueError) as err:
        raise UsageError(
            f"{meta_file} is missing or has a malformed field ({err}); restore it from version control"
        ) from None
