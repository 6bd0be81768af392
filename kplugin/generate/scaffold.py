"""Generate a plugin project: the list of files it writes, rendered in memory first."""

from __future__ import annotations

import fnmatch
import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from kplugin import __version__
from kplugin.core import digest, golang, yamlio
from kplugin.generate import apitemplates, chart, sections, stage, templating
from kplugin.generate.argsinfo import SAMPLE_ARGS_DEFAULTS
from kplugin.generate.plan import Change, FilePlan
from kplugin.generate.templating import render_tree
from kplugin.model import apitypes, crds, goapi, manifests, rbacrules, tools, versions
from kplugin.model.buildfacts import BINARY_IN_IMAGE, DEFAULT_BASE_IMAGE, NONROOT_USER, VERSION_ORDER, BuildFacts
from kplugin.model.crds import Definition
from kplugin.model.project import EDITED_FILES, PROJECT_FILE
from kplugin.model.schedconfig import SchedulerConfig
from kplugin.model.spec import ExtensionPoint, PluginSpec, ProjectSpec


def is_user_file(path: PurePosixPath, template: Path | None = None) -> bool:
    """A file kplugin writes once and never rewrites (the user's code and documents), as
    the project template (kplugin's, or the fork ``template``) declares it
    (cookiecutter.json's ``_files.user``). Every other file it renders is managed:
    kplugin.yaml records its sha256, and upgrade and add plugin rewrite it when it was not
    edited since (and stop when it was)."""
    return any(fnmatch.fnmatchcase(path.as_posix(), pattern) for pattern in _user_files(template))


@functools.cache
def _user_files(template: Path | None) -> tuple[str, ...]:
    variables = templating.template_variables(template or templating.templates_root() / templating.PROJECT_TEMPLATE)
    return templating.user_patterns(variables, {"point": [str(point) for point in ExtensionPoint]})


def is_managed(path: PurePosixPath, template: Path | None = None) -> bool:
    return not is_user_file(path, template) and path.as_posix() not in EDITED_FILES


@dataclass
class Result:
    dest: Path
    changes: list[tuple[PurePosixPath, Change]]
    notices: list[str] = field(default_factory=list)


def generated_args(spec: ProjectSpec) -> dict[str, dict[str, Any]]:
    """The pluginConfig args of plugins as kplugin generates them: the sample's
    defaults for plugins with Args, no entry for the others."""
    return {p.name: dict(SAMPLE_ARGS_DEFAULTS) for p in spec.plugins if p.args}


def scheduler_config(spec: ProjectSpec, args: Mapping[str, dict[str, Any]] | None = None) -> SchedulerConfig:
    return SchedulerConfig(
        scheduler_names=(spec.scheduler_name,),
        plugins=spec.plugins,
        args={name: dict(values) for name, values in (generated_args(spec) if args is None else args).items()},
    )


def args_file_text(plugin: PluginSpec) -> str:
    """config/args/<package>.yaml as kplugin writes it first: no values, so every field
    takes the plugin's default until the user sets it."""
    return (
        f"# {plugin.name}'s args: pluginConfig[].args of the scheduler configuration. kplugin render-config,\n"
        "# deploy/, the Helm chart and kplugin e2e read this file; a field left out takes the plugin's\n"
        f"# default (SetDefaults in pkg/{plugin.package}/args.go). The file is yours: kplugin never rewrites it.\n"
        "#\n"
        "# nodeLabel: example.com/accelerator   # a label nodes must carry (none by default)\n"
        "# resourceName: nvidia.com/gpu         # the resource Filter checks and Score prefers (cpu by default)\n"
        + yamlio.dump({})
    )


def template_context(
    spec: ProjectSpec, plugin: PluginSpec | None = None, point: ExtensionPoint | None = None
) -> dict[str, Any]:
    """The variables the project template renders with: the project's, those of one of
    its plugins (its package under pkg/; default the first), and the extension point a
    stub is rendered for (kplugin add extension-point), if any."""
    plugin = plugin or spec.plugins[0]
    context = {**_project_context(spec), **_plugin_context(spec, plugin)}
    context["_data"] = {**_project_context(spec)["_data"], **_plugin_context(spec, plugin)["_data"]}
    if point is not None:
        context.update({"point": str(point), "go_name": point.go_name, "interface": point.interface})
    return context


def _common_context(spec: ProjectSpec) -> dict[str, Any]:
    version = spec.target.version
    facts = spec.target.facts
    return {
        "project_name": spec.name,
        "module": spec.module,
        "scheduler_name": spec.scheduler_name,
        "k8s_version": str(version),
        "k8s_minor": version.minor_key,
        "api": str(spec.api),
        "_shape": facts.as_context(),
        "_native": goapi.native_names(facts),
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
        "toolchain": release.toolchain,
        "godebug": release.godebug,
        "go_image": f"golang:{release.go_image_tag}",
        "image": spec.image_ref,
        "_data": {
            "staging_modules": list(release.staging_modules),
            "ci_builds": _ci_builds(spec),
            "plugins": [
                {
                    "name": p.name,
                    "package": p.package,
                    "extension_points": [str(e) for e in p.extension_points],
                    "args": p.args,
                }
                for p in spec.plugins
            ],
        },
        "_helpers": {helper: helper for helper in goapi.HELPERS},
        "_build": _build_facts(spec),
        "_golangci_lint": _golangci_lint(),
        "code_generator": spec.tool_versions()[apitypes.CODE_GENERATOR],
        "_codegen": _codegen(spec),
    }


def _codegen(spec: ProjectSpec) -> dict[str, Any]:
    """make generate: the commands (kplugin add api runs the same, model.apitypes)."""
    generation = spec.generation()
    versions = spec.tool_versions()
    return {
        "cleaned": [str(p) for p in generation.cleaned],
        "lines": generation.make_lines(),
        "apis": bool(spec.apis),
        "controller_tools": versions[apitypes.CONTROLLER_TOOLS],
        "clients_generator": versions[apitypes.CLIENTS_GENERATOR],
    }


def _build_facts(spec: ProjectSpec) -> dict[str, Any]:
    """The build facts the Dockerfile and Makefile are rendered from (kplugin build uses
    the same: model.buildfacts)."""
    return build_facts(BuildFacts(spec.target.version, spec.target.release.go_image_tag))


def build_facts(
    facts: BuildFacts, main: str = "./cmd/scheduler", arguments: tuple[str, ...] = (), download_first: bool = True
) -> dict[str, Any]:
    """The Dockerfile's and Makefile's facts: the version stamp, where the binary goes and
    whom it runs as, the main package it builds (an adopted repository's recorded one) and
    the arguments its ENTRYPOINT gives before the scheduler's flags; ``download_first``:
    the modules are downloaded from go.mod and go.sum alone, before the sources are copied
    (not where go.mod replaces a module with a directory of the repository)."""
    return {
        "version_vars": sorted(facts.version_vars.items(), key=lambda item: VERSION_ORDER.index(item[0])),
        "binary": BINARY_IN_IMAGE,
        "user": NONROOT_USER,
        "base_image": DEFAULT_BASE_IMAGE,
        "gogc": golang.COMPILE_GOGC,  # as kplugin's own go builds
        "main": main,
        "entrypoint": json.dumps([BINARY_IN_IMAGE, *arguments]),
        "download_first": download_first,
    }


def _golangci_lint() -> dict[str, str]:
    """The golangci-lint the Makefile's lint target installs and .golangci.yml is for."""
    tool = tools.GOLANGCI_LINT
    return {"module": tool.module, "package": tool.package, "version": tool.version}


def _ci_builds(spec: ProjectSpec) -> list[dict[str, str]]:
    """The minors the generated CI workflow builds the plugins for, with the Go each was
    released with: the oldest and the newest kplugin supports. Plugins written against
    one version's own API (--api native) build at that version only, so none."""
    if spec.api == goapi.NATIVE:
        return []
    releases = [r for r in versions.supported_releases() if r.released]  # a pre-release changes until its release
    ends = releases[:1] + releases[1:][-1:]
    return [{"k8s": r.key, "go": r.go_version} for r in ends]


def _plugin_context(spec: ProjectSpec, plugin: PluginSpec) -> dict[str, Any]:
    flags = {str(point): plugin.has(point) for point in ExtensionPoint}
    parts = sections.plugin_parts(plugin, spec.target.facts, spec.api)
    native_helpers = parts.pop("_native_helpers")
    return {
        **flags,
        **parts,
        "package": plugin.package,
        "plugin_name": plugin.name,
        "args": plugin.args,
        "_names": goapi.names(spec.target.facts, spec.api),
        "_data": {
            "points": [{"name": str(p), "interface": p.interface} for p in plugin.extension_points],
            "extensions": [p.go_name for p in plugin.extension_points if p.config_name],
            "native_helpers": native_helpers,
        },
    }


def _render(spec: ProjectSpec, plugin: PluginSpec, point: ExtensionPoint | None = None) -> dict[PurePosixPath, bytes]:
    """The project template rendered for one plugin, paths relative to the project."""
    rendered = render_tree(template_context(spec, plugin, point), spec.template)
    return {PurePosixPath(*path.parts[1:]): content for path, content in rendered.items()}


def render_stub(spec: ProjectSpec, plugin: PluginSpec, point: ExtensionPoint) -> dict[PurePosixPath, bytes]:
    """pkg/<package>/<point>.go and its test: a stub of the point's method(s) for a plugin
    that gains the extension point (kplugin add extension-point)."""
    package = PurePosixPath("pkg", plugin.package)
    wanted = {package / f"{point}.go", package / f"{point}_test.go"}
    return {path: content for path, content in _render(spec, plugin, point).items() if path in wanted}


def project_metadata(
    spec: ProjectSpec, generated: dict[str, str], files: Mapping[PurePosixPath, bytes] | None = None
) -> dict[str, Any]:
    """kplugin.yaml: the spec (for each plugin its extension points, whether it has Args,
    and the sha256 of the args.go kplugin writes for it, ``files`` being the rendering;
    the Args themselves are in its Go code) and the sha256 of every managed file as
    generated."""
    files = files or {}
    return {
        "kplugin": __version__,
        "name": spec.name,
        "module": spec.module,
        "kubernetes": str(spec.target.version),
        "api": str(spec.api),
        **({"template": "fork"} if spec.template is not None else {}),
        "schedulerName": spec.scheduler_name,
        "image": spec.image_ref,
        "plugins": [
            {
                "name": p.name,
                "package": p.package,
                "extensionPoints": [str(e) for e in p.extension_points],
                "args": p.args,
                **(
                    {"argsSha256": digest.sha256_hex(files[PurePosixPath("pkg", p.package, "args.go")])}
                    if PurePosixPath("pkg", p.package, "args.go") in files
                    else {}
                ),
            }
            for p in spec.plugins
        ],
        **({"apis": [a.as_dict() for a in spec.apis]} if spec.apis else {}),
        "generated": dict(sorted(generated.items())),
    }


def _rules(spec: ProjectSpec) -> list[dict[str, Any]]:
    """The ClusterRole's rules: kube-scheduler's of the target, then the project's own."""
    version = spec.target.version
    return rbacrules.merged(manifests.scheduler_rules(version.major, version.minor), spec.rules)


def crd_paths(name: str) -> tuple[PurePosixPath, ...]:
    """Where deploy/ and the chart of project ``name`` install its CRDs."""
    return PurePosixPath("deploy/crds.yaml"), PurePosixPath(f"charts/{name}/crds/crds.yaml")


def crd_files(name: str, definitions: Sequence[Definition]) -> dict[PurePosixPath, str]:
    """The project's own kinds (config/crd/) as deploy/ and the chart install them, before
    the scheduler reads them (helm installs crds/ first and never templates it)."""
    text = crds.manifest(definitions)
    return {} if text is None else dict.fromkeys(crd_paths(name), text)


def render_project(spec: ProjectSpec, dest: Path, args: Mapping[str, dict[str, Any]] | None = None) -> FilePlan:
    """Render every file of the project in memory. ``args`` are the plugins'
    pluginConfig args (default: as kplugin generates the plugins)."""
    plan = FilePlan(dest)
    # The template renders the project with one plugin's package under pkg/: rendered once
    # per plugin, the project's own files are taken from the first rendering.
    packages = {PurePosixPath("pkg", p.package) for p in spec.plugins}
    for index, plugin in enumerate(spec.plugins):
        mine = PurePosixPath("pkg", plugin.package)
        for path, content in _render(spec, plugin).items():
            inside = next((p for p in path.parents if p in packages), None)
            if inside == mine or (inside is None and index == 0):
                plan.add(path, content)
        if plugin.args:
            plan.add(f"config/args/{plugin.package}.yaml", args_file_text(plugin))
    for path, content in apitemplates.group_files(spec).items():
        plan.add(path, content)
    config = scheduler_config(spec, args)
    plan.add("deploy/scheduler-config.yaml", yamlio.dump(config.document()))
    plan.add(rbacrules.RULES_FILE, rbacrules.text(spec.rules))  # the user's, written once
    plan.add("deploy/rbac.yaml", yamlio.dump_all(manifests.rbac(spec.name, spec.scheduler_name, _rules(spec))))
    plan.add("deploy/configmap.yaml", yamlio.dump(manifests.configmap(spec.name, config)))
    plan.add("deploy/deployment.yaml", yamlio.dump(manifests.deployment(spec.name, spec.image_ref, gates=spec.gates)))
    plan.add("deploy/sample-pod.yaml", yamlio.dump(manifests.sample_pod(spec.name, spec.scheduler_name)))
    for name, text in chart.chart_files(spec, config, _rules(spec)).items():
        plan.add(f"charts/{spec.name}/{name}", text)
    for path, text in crd_files(spec.name, spec.crds).items():
        plan.add(path, text)
    generated = {
        str(path): digest.sha256_hex(content) for path, content in plan.files.items() if is_managed(path, spec.template)
    }
    plan.add(PROJECT_FILE, yamlio.dump(project_metadata(spec, generated, plan.files)))
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
    plan = render_project(spec, dest)
    where = stage.destination(dest, force=force)
    stage.check_targets(where, stage.Changes(plan.files))
    result = Result(dest=dest, changes=plan.changes())
    if dry_run:
        return result
    notices: list[str] = []

    def in_stage(staged: Path) -> None:
        if tidy is not None:
            notices.extend(tidy(staged))

    stage.apply(where, stage.Changes(plan.files), in_stage)
    result.notices = notices
    return result
