"""An existing kplugin project on disk, as its kplugin.yaml describes it."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from kplugin.core.errors import Setting, UsageError
from kplugin.model.goapi import NATIVE, ApiMode
from kplugin.model.spec import (
    ExtensionPoint,
    PluginSpec,
    ProjectSpec,
    gates_of,
    package_name,
    parse_extension_points,
    registered_name_problem,
    require_available,
    retag_image,
    validate_api,
    validate_image,
    validate_module_path,
    validate_plugin_name,
    validate_project_name,
    validate_scheduler_name,
)
from kplugin.model.versions import KubeVersion, Target, resolve

if TYPE_CHECKING:  # imported where they are used: render-config's start-up is a benchmark target
    from kplugin.model import apitypes, crds, manifests
    from kplugin.model.layout import Layout

PROJECT_FILE = "kplugin.yaml"
# the project template's main package, as go build takes it
GENERATED_MAIN = "./cmd/scheduler"
# Files kplugin keeps current by editing them, not by rendering them again.
EDITED_FILES = ("go.mod", "go.sum", PROJECT_FILE)


class Project(NamedTuple):
    """A project as its kplugin.yaml describes it, checked (a NamedTuple: see
    kplugin.model.versions)."""

    root: Path
    name: str
    module: str
    target: Target
    scheduler_name: str
    image: str
    plugins: tuple[PluginSpec, ...]
    # sha256 of each managed file as kplugin last wrote it (empty for projects of 0.1.0)
    generated: dict[str, str]
    # sha256 of the args.go kplugin wrote for each plugin (its defaults are known while it is unchanged)
    args_digests: dict[str, str]
    api: ApiMode = NATIVE
    # made from a fork of kplugin's project template (kplugin new --template): its
    # kplugin.yaml says so (template: fork), never where the fork is
    fork: bool = False
    # where the fork is, as this run's --template gives it (kplugin.cli.options.load_project)
    template: Path | None = None
    # the project's own API types (kplugin add api)
    apis: tuple[apitypes.ApiType, ...] = ()
    # where an adopted repository keeps what kplugin needs (kplugin adopt); None: made by kplugin
    layout: Layout | None = None

    @property
    def main_package(self) -> str:
        """The main package that builds the scheduler, as go build takes it."""
        return self.layout.main_package if self.layout is not None else GENERATED_MAIN

    @property
    def bin_dir(self) -> Path:
        """Where a local build puts kube-scheduler: bin/, or in an adopted repository
        .kplugin/bin/ (a folder of kplugin's own: nothing of the repository's is replaced)."""
        return self.root / (".kplugin/bin" if self.layout is not None else "bin")

    @property
    def scheduler_arguments(self) -> tuple[str, ...]:
        """The arguments before the scheduler's own flags (an adopted binary's subcommand)."""
        return self.layout.arguments if self.layout is not None else ()

    @property
    def crd_files(self) -> tuple[str, ...] | None:
        """The files an adopted repository keeps its CRDs in; None: config/crd/'s."""
        return self.layout.crds if self.layout is not None else None

    def crd_definitions(self) -> list[crds.Definition]:
        """The project's CRDs: config/crd/'s, or those of an adopted repository's files
        (which may define one twice, as scheduler-plugins' do: the first file's wins)."""
        from kplugin.model import crds

        found = crds.load(self.root, self.crd_files)
        return found if self.layout is None else list({d.name: d for d in reversed(found)}.values())[::-1]

    @property
    def gates(self) -> tuple[str, ...]:
        """The feature gates the scheduler needs for the plugins' points (a pod group's),
        as the target minor needs them."""
        return gates_of(self.plugins, self.target)

    @property
    def gate_flags(self) -> manifests.GateFlags:
        """The API server's and the scheduler's flags for those gates, and what the API
        server must serve for them."""
        from kplugin.model import manifests

        return manifests.GateFlags.of(self.gates, self.target.facts)

    @property
    def version(self) -> KubeVersion:
        return self.target.version

    def spec(
        self,
        target: Target | None = None,
        plugins: tuple[PluginSpec, ...] | None = None,
        apis: tuple[apitypes.ApiType, ...] | None = None,
    ) -> ProjectSpec:
        """The spec this project was generated from, optionally for another target or
        with other plugins. The image's tag follows the version where it names it, as the
        default's does (see retag_image). Every rendering of the project template starts
        here, so a project made from a fork is refused here without its fork (kplugin
        cannot know where a fork is; a path in kplugin.yaml, which is untrusted input,
        could lead anywhere)."""
        from kplugin.model import crds, rbacrules

        if self.fork and self.template is None:
            raise UsageError(
                f"{self.root / PROJECT_FILE} says the project was made from a fork of kplugin's project template "
                f"(template: fork): give the fork again with {Setting.TEMPLATE} DIR|ZIP (or delete that line to move "
                "the project to kplugin's own template)"
            )
        target = target or self.target
        for plugin in plugins if plugins is not None else self.plugins:  # a pod group's points are 1.36's on
            require_available(plugin.extension_points, target, f"plugin {plugin.name}")
        return ProjectSpec(
            name=self.name,
            module=self.module,
            target=target,
            scheduler_name=self.scheduler_name,
            plugins=plugins if plugins is not None else self.plugins,
            api=self.api,
            image=retag_image(self.image, self.version, target.version),
            template=self.template,
            rules=rbacrules.load(self.root),
            crds=tuple(crds.load(self.root)),
            apis=self.apis if apis is None else apis,
        )


# The keys kplugin.yaml may hold.
_KEYS = {
    "kplugin",
    "name",
    "module",
    "kubernetes",
    "api",
    "template",
    "schedulerName",
    "image",
    "plugins",
    "apis",
    "generated",
    "adopted",
}
_PLUGIN_KEYS = {"name", "package", "extensionPoints", "args", "argsSha256"}
_SHA256 = re.compile(r"[0-9a-f]{64}", re.ASCII)
_VERSION = re.compile(r"[0-9]{1,4}(\.[0-9]{1,6}){1,2}([-+][0-9A-Za-z.-]{1,40})?", re.ASCII)


def load(path: Path, adopted: bool = False) -> Project:
    """Read PATH/kplugin.yaml. It is untrusted input (a pull request can change it):
    every field is checked with the rules the command line applies, before anything
    uses it. A missing or bad file is a usage error naming the file and the field.
    A repository kplugin adopted is refused unless the caller works on one (``adopted``)."""
    from kplugin.core import safefs, yamlio

    try:
        root = path.resolve()
    except (OSError, RuntimeError) as err:  # RuntimeError: a symlink loop (Python 3.11)
        raise UsageError(f"{path} is not a kplugin project directory ({err})") from None
    meta_file = root / PROJECT_FILE
    data = safefs.read_project_file(root, PROJECT_FILE, safefs.SMALL_FILE)  # a regular file, never a link out
    if data is None:
        raise UsageError(f"{path} is not a kplugin project (no {PROJECT_FILE}); run kplugin new first")
    raw: Any = yamlio.parse(safefs.decode(data, "project file", meta_file), f"project file {meta_file}", path=meta_file)
    project = parse(root, raw)
    if project.layout is not None and not adopted:
        raise UsageError(
            f"{path} is a repository kplugin adopted ({PROJECT_FILE}: adopted); this command does not work on one "
            f"yet (adopt, upgrade, render-config, doctor and build {Setting.BUILDER} local do)"
        )
    return project


def _apis(raw: Any, where: str) -> tuple[apitypes.ApiType, ...]:
    """kplugin.yaml's ``apis`` (kplugin add api's types), read only when there are some."""
    if raw is None:
        return ()
    from kplugin.model import apitypes

    return apitypes.parse(raw, where)


class _Reader:
    """kplugin.yaml's fields checked one by one: each problem one line naming the file,
    the field and that the file must be restored (it is kplugin's, and untrusted)."""

    def __init__(self, root: Path, adopted: bool = False) -> None:
        self.meta_file = root / PROJECT_FILE
        self.adopted = adopted  # an adopted repository's plugins: any name it registers, any package

    def where(self, key: str) -> str:
        return f"{self.meta_file}: {key}"

    def fail(self, key: str, problem: str) -> UsageError:
        return UsageError(f"{self.where(key)} {problem}; restore it from version control")

    def plugin(self, i: int, entry: Any, target: Target) -> tuple[PluginSpec, str | None]:
        """plugins[i]: the plugin, and the digest of its args file (None: not recorded)."""
        at = f"plugins[{i}]"
        if not isinstance(entry, dict):
            raise self.fail(at, f"must be a mapping, not {type(entry).__name__}")
        extra = sorted(str(k) for k in entry if k not in _PLUGIN_KEYS)
        if extra:
            raise self.fail(
                f"{at}.{extra[0][:60]}", f"is not a plugin field (fields: {', '.join(sorted(_PLUGIN_KEYS))})"
            )
        if "name" not in entry or "extensionPoints" not in entry:
            raise self.fail(at, "needs name and extensionPoints")
        if self.adopted:
            if (problem := registered_name_problem(entry["name"])) is not None:
                raise self.fail(f"{at}.name", f"{str(entry['name'])[:60]!r} {problem}")
            plugin_name = entry["name"]
        else:
            plugin_name = validate_plugin_name(entry["name"], self.where(f"{at}.name"))
        package = entry.get("package", package_name(plugin_name))
        if not self.adopted and package != package_name(plugin_name):
            raise self.fail(
                f"{at}.package", f"{package!r} is not {package_name(plugin_name)!r}, the package of {plugin_name}"
            )
        points_raw = entry["extensionPoints"]
        if not isinstance(points_raw, list) or not all(isinstance(p, str) for p in points_raw):
            raise self.fail(f"{at}.extensionPoints", "must be a list of extension point names")
        points = parse_extension_points(",".join(points_raw), self.where(f"{at}.extensionPoints"))
        require_available(points, target, self.where(f"{at}.extensionPoints"))  # the pinned version has them
        takes_args = entry.get("args", True)
        if not isinstance(takes_args, bool):
            raise self.fail(f"{at}.args", "must be true or false (whether the plugin has Args)")
        digest = entry.get("argsSha256")
        if "argsSha256" in entry and (not isinstance(digest, str) or not _SHA256.fullmatch(digest)):
            raise self.fail(f"{at}.argsSha256", "must be a sha256 digest (64 lower-case hex digits)")
        return PluginSpec(name=plugin_name, extension_points=points, args=takes_args), digest

    def plugins(self, raw: Any, target: Target) -> tuple[tuple[PluginSpec, ...], dict[str, str]]:
        """The plugins (each once, one QueueSort at most) and their args files' digests."""
        if not isinstance(raw, list) or not raw:
            raise self.fail("plugins", "must be a non-empty list of plugins")
        read = [self.plugin(i, entry, target) for i, entry in enumerate(raw)]
        plugins = tuple(plugin for plugin, _ in read)
        for attribute, what in (("name", "plugin"), ("package", "package")):
            seen = [getattr(p, attribute) for p in plugins]
            twice = sorted(value for value, count in Counter(seen).items() if count > 1)
            if twice:
                raise self.fail("plugins", f"names the {what} {twice[0]!r} twice")
        sorters = [p.name for p in plugins if p.has(ExtensionPoint.QUEUE_SORT)]
        if len(sorters) > 1 and not self.adopted:  # a repository's profiles may each pick another
            raise self.fail(
                "plugins", f"has {len(sorters)} QueueSort plugins ({', '.join(sorters)}); a profile takes one"
            )
        return plugins, {plugin.name: digest for plugin, digest in read if digest is not None}

    def generated(self, raw: Any) -> dict[str, str]:
        """The generated files and their sha256: paths inside the project only."""
        from kplugin.core import safefs

        raw = {} if raw is None else raw
        if not isinstance(raw, dict):
            raise self.fail("generated", "must be a mapping of file paths to sha256 digests")
        generated: dict[str, str] = {}
        for key, digest in raw.items():
            if not isinstance(key, str) or (problem := safefs.relative_problem(key)) is not None:
                problem = "is not a string" if not isinstance(key, str) else problem
                raise self.fail(
                    f"generated: {str(key)[:80]!r}", f"{problem}; only paths inside the project are allowed"
                )
            if key in EDITED_FILES:
                raise self.fail(f"generated: {key!r}", "is a file kplugin edits in place, never one it generates")
            if ".git" in key.split("/"):
                raise self.fail(f"generated: {key[:80]!r}", "is in .git, which kplugin never generates (nor deletes)")
            if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
                raise self.fail(f"generated: {key!r}", "must map to a sha256 digest (64 lower-case hex digits)")
            generated[key] = digest
        return generated


def parse(root: Path, raw: Any) -> Project:
    from kplugin.model import layout as layouts

    reader = _Reader(root, adopted=isinstance(raw, dict) and "adopted" in raw)
    where, fail = reader.where, reader.fail
    if not isinstance(raw, dict):
        raise fail("the document", f"must be a mapping, not {type(raw).__name__}")
    unknown = sorted(str(k) for k in raw if k not in _KEYS)
    if unknown:
        raise fail(unknown[0][:60], f"is not a field of {PROJECT_FILE} (fields: {', '.join(sorted(_KEYS))})")
    for key in ("name", "module", "kubernetes", "schedulerName", "image", "plugins"):
        if key not in raw:
            raise fail(key, "is missing")
    if "kplugin" in raw and (not isinstance(raw["kplugin"], str) or not _VERSION.fullmatch(raw["kplugin"])):
        raise fail("kplugin", f"{str(raw['kplugin'])[:40]!r} is not the version of kplugin that wrote the file")
    name = validate_project_name(raw["name"], where("name"))
    module = validate_module_path(raw["module"], where("module"))
    target = resolve(raw["kubernetes"], where=where("kubernetes"))
    scheduler_name = validate_scheduler_name(raw["schedulerName"], where("schedulerName"))
    image = validate_image(raw["image"], where("image"))
    # kplugin 0.1.0 wrote no api key and generated against the framework directly
    api = validate_api(raw.get("api", NATIVE), where("api"))
    if raw.get("template", "fork") != "fork":
        raise fail("template", f"{str(raw['template'])[:40]!r} is not 'fork' (the only value: made from a fork)")
    plugins, args_digests = reader.plugins(raw["plugins"], target)
    layout = layouts.parse(raw["adopted"], fail) if reader.adopted else None
    if layout is not None and sorted(layout.plugins) != sorted(p.name for p in plugins):
        raise fail("adopted.plugins", "must name the plugins of plugins, each once")
    return Project(
        root=root,
        name=name,
        module=module,
        target=target,
        scheduler_name=scheduler_name,
        image=image,
        plugins=plugins,
        args_digests=args_digests,
        api=api,
        generated=reader.generated(raw.get("generated")),
        fork="template" in raw,
        apis=_apis(raw.get("apis"), where("apis")),
        layout=layout,
    )
