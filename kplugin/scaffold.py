"""Generate a plugin project: the list of files it writes, rendered in memory first."""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from kplugin import __version__, goapi, manifests, yamlio
from kplugin.errors import OperationError
from kplugin.plan import Change, FilePlan
from kplugin.project import EDITED_FILES, PROJECT_FILE
from kplugin.schedconfig import ARGS_DEFAULTS, ARGS_FIELDS, SchedulerConfig
from kplugin.spec import ExtensionPoint, PluginSpec, ProjectSpec, split_image
from kplugin.templating import render_tree

# Files kplugin writes once and never rewrites: the user's code and documents. Every
# other file it renders is "managed": kplugin.yaml records its sha256, and upgrade and
# add plugin rewrite it when it was not edited since (and stop when it was).
USER_FILES = (
    "README.md",
    "cmd/scheduler/plugins.go",
    "pkg/*/plugin.go",
    "pkg/*/plugin_test.go",
    "pkg/*/benchmark_test.go",
    "pkg/*/args.go",
    "pkg/*/args_test.go",
    "pkg/*/register.go",
    "pkg/*/zz_generated.deepcopy.go",
)


def is_user_file(path: PurePosixPath) -> bool:
    return any(fnmatch.fnmatchcase(path.as_posix(), pattern) for pattern in USER_FILES)


def is_managed(path: PurePosixPath) -> bool:
    return not is_user_file(path) and path.as_posix() not in EDITED_FILES


def digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


@dataclass
class Result:
    dest: Path
    changes: list[tuple[PurePosixPath, Change]]
    notices: list[str] = field(default_factory=list)


def scheduler_config(spec: ProjectSpec) -> SchedulerConfig:
    return SchedulerConfig(
        scheduler_names=(spec.scheduler_name,),
        plugins=spec.plugins,
        args={p.name: dict(ARGS_DEFAULTS) for p in spec.plugins},
    )


def _common_context(spec: ProjectSpec) -> dict[str, Any]:
    version = spec.target.version
    shape = dict(spec.target.release.shape)
    return {
        "project_name": spec.name,
        "module": spec.module,
        "scheduler_name": spec.scheduler_name,
        "k8s_version": str(version),
        "k8s_minor": version.minor_key,
        "api": spec.api,
        "_shape": shape,
        "_native": goapi.native_names(shape),
    }


def _project_context(spec: ProjectSpec) -> dict[str, Any]:
    version = spec.target.version
    release = spec.target.release
    return {
        **_common_context(spec),
        "kplugin_version": __version__,
        "k8s_tag": version.tag,
        "staging_tag": version.staging_tag,
        "go_directive": release.go_directive,
        "go_image": f"golang:{release.go_image_tag}",
        "image": spec.image_ref,
        "_staging_modules": list(release.staging_modules),
        "_plugins": [
            {"name": p.name, "package": p.package, "extension_points": [str(e) for e in p.extension_points]}
            for p in spec.plugins
        ],
    }


def _plugin_context(spec: ProjectSpec, plugin: PluginSpec) -> dict[str, Any]:
    flags = {str(point): plugin.has(point) for point in ExtensionPoint}
    return {
        **_common_context(spec),
        **flags,
        "package": plugin.package,
        "plugin_name": plugin.name,
        "_names": goapi.names(spec.target.release.shape, spec.api),
        "_points": [{"name": str(p), "interface": p.interface} for p in plugin.extension_points],
        "_extensions": [p.go_name for p in plugin.extension_points if p.config_name],
    }


def project_metadata(
    spec: ProjectSpec, generated: dict[str, str], args_fields: dict[str, dict[str, str]] | None = None
) -> dict[str, Any]:
    """kplugin.yaml: the spec, each plugin's Args fields (as recorded, or the sample
    plugin's) and the sha256 of every managed file as generated."""
    fields = args_fields or {}
    return {
        "kplugin": __version__,
        "name": spec.name,
        "module": spec.module,
        "kubernetes": str(spec.target.version),
        "api": spec.api,
        "schedulerName": spec.scheduler_name,
        "image": spec.image_ref,
        "plugins": [
            {
                "name": p.name,
                "package": p.package,
                "extensionPoints": [str(e) for e in p.extension_points],
                "args": dict(fields.get(p.name) or ARGS_FIELDS),
            }
            for p in spec.plugins
        ],
        "generated": dict(sorted(generated.items())),
    }


def _rules(spec: ProjectSpec) -> list[dict[str, Any]]:
    version = spec.target.version
    return manifests.scheduler_rules(version.major, version.minor)


def _chart(spec: ProjectSpec, config: SchedulerConfig) -> dict[str, str]:
    chart = {
        "apiVersion": "v2",
        "name": spec.name,
        "description": (
            f"kube-scheduler {spec.target.version} with the "
            f"{', '.join(p.name for p in spec.plugins)} plugin(s), as a second scheduler"
        ),
        "type": "application",
        "version": "0.1.0",
        "appVersion": str(spec.target.version),
    }
    repository, tag = split_image(spec.image_ref)
    values = {
        "image": {"repository": repository, "tag": tag, "pullPolicy": "IfNotPresent"},
        "replicas": 1,
        "schedulerName": spec.scheduler_name,
        "schedulerConfig": config.document(),
        "rbac": {"rules": _rules(spec)},
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
    }
    return {"Chart.yaml": yamlio.dump(chart), "values.yaml": yamlio.dump(values)}


def build_plan(spec: ProjectSpec, dest: Path) -> FilePlan:
    """Render every file of the project in memory."""
    plan = FilePlan(dest)
    # The project tree's top directory is the project itself; the plugin tree's is the
    # plugin's package directory under pkg/.
    rendered = render_tree("project", _project_context(spec))
    plan.update({PurePosixPath(*path.parts[1:]): content for path, content in rendered.items()})
    for plugin in spec.plugins:
        rendered = render_tree("plugin", _plugin_context(spec, plugin))
        plan.update({PurePosixPath("pkg") / path: content for path, content in rendered.items()})
    config = scheduler_config(spec)
    plan.add("deploy/scheduler-config.yaml", yamlio.dump(config.document()))
    plan.add("deploy/rbac.yaml", yamlio.dump_all(manifests.rbac(spec.name, spec.scheduler_name, _rules(spec))))
    plan.add("deploy/configmap.yaml", yamlio.dump(manifests.configmap(spec.name, config)))
    plan.add("deploy/deployment.yaml", yamlio.dump(manifests.deployment(spec.name, spec.image_ref)))
    plan.add("deploy/sample-pod.yaml", yamlio.dump(manifests.sample_pod(spec.name, spec.scheduler_name)))
    for name, content in _chart(spec, config).items():
        plan.add(f"charts/{spec.name}/{name}", content)
    generated = {str(path): digest(content) for path, content in plan.files.items() if is_managed(path)}
    plan.add(PROJECT_FILE, yamlio.dump(project_metadata(spec, generated)))
    return plan


def new_project(
    spec: ProjectSpec,
    dest: Path,
    *,
    force: bool = False,
    dry_run: bool = False,
    tidy: Callable[[Path], list[str]] | None = None,
) -> Result:
    """Generate ``spec`` into ``dest``. ``tidy`` runs in the staged tree before it is
    moved into place (``go mod tidy``) and returns notices; a failure leaves nothing."""
    plan = build_plan(spec, dest)
    plan.check_destination(force)
    result = Result(dest=dest, changes=plan.changes())
    if dry_run:
        return result
    notices: list[str] = []

    def in_stage(stage: Path) -> None:
        if tidy is not None:
            notices.extend(tidy(stage))

    try:
        plan.apply(force, in_stage)
    except OSError as err:
        raise OperationError(f"writing {dest}: {err.strerror or err}") from err
    result.notices = notices
    return result
