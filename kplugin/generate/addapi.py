"""``kplugin add api``: a kind of the project's own API, from its Go types to the
scheduler's RBAC.

One staged change, all or nothing:

- the kind's package under apis/<group>/<version>/ (doc.go and register.go, managed;
  <kind>_types.go, the user's), recorded in kplugin.yaml, and the Makefile's
  ``generate`` target for it;
- in the plugin that reads it, pkg/<plugin>/<kind>_source.go and its test (the user's):
  an informer from the scheduler's kubeconfig, a lister, the kind's events with a
  QueueingHint;
- the kind's read rule in config/rbac/rules.yaml, and so in deploy/rbac.yaml and the chart;
- then, in the stage, ``make generate``'s commands (deepcopy, clientset, listers,
  informers, controller-gen's CRD in config/crd/), ``go mod tidy``, and deploy/crds.yaml
  and the chart's crds/ from the new CRD.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from kplugin.core import digest, golang, safefs, yamlio
from kplugin.core.errors import OperationError, Setting, UsageError
from kplugin.generate import apitemplates, codegen, scaffold, sync
from kplugin.model import apitypes, crds, rbacrules
from kplugin.model.apitypes import ApiType
from kplugin.model.project import PROJECT_FILE, Project
from kplugin.model.spec import PluginSpec, ProjectSpec


@dataclass(kw_only=True)
class ApiResult(sync.Changed):
    api: ApiType
    plugin: PluginSpec


def choose_plugin(project: Project, name: str | None) -> PluginSpec:
    """The plugin that reads the kind: the one named, or the project's only one."""
    if name is None:
        if len(project.plugins) == 1:
            return project.plugins[0]
        listed = ", ".join(p.name for p in project.plugins)
        raise UsageError(
            f"the project has {len(project.plugins)} plugins ({listed}); name the one that reads the "
            f"kind with {Setting.PLUGIN}"
        )
    found = next((p for p in project.plugins if p.name == name), None)
    if found is None:
        listed = ", ".join(p.name for p in project.plugins)
        raise UsageError(f"{Setting.PLUGIN} {name[:60]!r} is not a plugin of this project ({listed})")
    return found


def new_api(project: Project, api: ApiType, plugin: PluginSpec) -> tuple[ApiType, ...]:
    """The project's kinds with ``api`` added, checked: a new kind and resource of its
    group, a package directory of its own group, files that are not there yet."""
    apis = (*project.apis, api)
    apitypes.check_together(list(apis), f"{api.kind} ({api.crd_name})")
    taken = [apitemplates.types_path(api), *apitemplates.source_paths(api, plugin.package)]
    for path in taken:
        if safefs.lstat_mode(project.root / path) is not None:
            raise UsageError(f"{path} exists; move it away to add {api.kind} (kplugin writes its file there)")
    for definition in crds.load(project.root):
        if definition.name == api.crd_name:
            raise UsageError(
                f"{definition.where} defines {api.crd_name} already; remove it, or add a kind of another name"
            )
    return apis


def rules_text(root: Path, rules: tuple[rbacrules.PolicyRule, ...], rule: rbacrules.PolicyRule) -> bytes:
    """config/rbac/rules.yaml with ``rule`` added: appended to the user's text (their
    comments kept) when that still reads as the same rules plus the new one, else
    written anew with kplugin's header."""
    wanted = (*rules, rule)
    data = safefs.read_project_file(root, rbacrules.RULES_FILE, safefs.SMALL_FILE)
    if data is not None and rules:
        text = safefs.decode(data, "RBAC rules file", root / rbacrules.RULES_FILE)
        appended = text + ("" if text.endswith("\n") else "\n") + yamlio.dump([rule.as_dict()])
        try:
            if rbacrules.parse(yamlio.parse(appended, str(rbacrules.RULES_FILE)), "") == wanted:
                return appended.encode()
        except UsageError:
            pass
    return rbacrules.text(wanted).encode()


def _refresh_crds(stage: Path, spec: ProjectSpec) -> None:
    """deploy/crds.yaml, the chart's crds/ and their digests in kplugin.yaml, from the
    CRDs the generators left in the stage's config/crd/."""
    files = scaffold.crd_files(spec.name, crds.load(stage))
    if not files:
        return
    meta_path = stage / PROJECT_FILE
    meta = yamlio.parse(meta_path.read_text(), str(meta_path))
    for path, text in files.items():
        (stage / path).parent.mkdir(parents=True, exist_ok=True)
        (stage / path).write_text(text)
        meta["generated"][str(path)] = digest.sha256_hex(text.encode())
    meta["generated"] = dict(sorted(meta["generated"].items()))
    meta_path.write_text(yamlio.dump(meta))


def add_api(
    project: Project,
    api: ApiType,
    plugin_name: str | None = None,
    *,
    keep_edited: bool = False,
    run_generators: bool = True,
    tidy: bool = True,
    dry_run: bool = False,
    progress: Callable[[str], None] = lambda _: None,
) -> ApiResult:
    plugin = choose_plugin(project, plugin_name)
    apis = new_api(project, api, plugin)
    spec = project.spec(apis=apis)
    rules = spec.rules  # the project's, as config/rbac/rules.yaml has them
    if rbacrules.missing((api.rule,), [r.as_dict() for r in rules]):
        spec = replace(spec, rules=(*rules, api.rule))
    rendered, notices = sync.render_spec(project, spec, progress)
    created = apitemplates.kind_files(spec, api, scaffold.template_context(spec, plugin))
    rendered.update(created)
    plan = sync.plan(project, spec, keep_edited=keep_edited, rendered=rendered, create=tuple(created))
    if plan.conflicts and not keep_edited:
        raise OperationError(plan.conflict_message(f"kplugin add api {api.kind}"))
    if spec.rules != rules:
        plan.writes[rbacrules.RULES_FILE] = rules_text(project.root, rules, api.rule)
    result = ApiResult(api=api, plugin=plugin, kept=plan.conflicts, not_recreated=plan.not_recreated, notices=notices)
    produced: tuple[PurePosixPath, ...] = ()
    if run_generators:
        produced = codegen.produced(spec)
    else:
        result.notices.append(
            f"the code generators did not run: run make generate, then kplugin refresh, in {project.root}"
        )

    def in_stage(stage: Path) -> None:
        if run_generators:
            codegen.run(stage, spec, progress)
        if tidy:
            golang.mod_tidy(stage)
        if run_generators:
            _refresh_crds(stage, spec)

    plan.produced = produced
    result.changed = (sync.preview if dry_run else sync.apply)(project, plan, in_stage)
    return result
