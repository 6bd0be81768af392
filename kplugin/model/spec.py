"""Typed, validated specs of what to generate. Nothing touches disk before these exist."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kplugin.core import names
from kplugin.core.errors import Setting, UsageError
from kplugin.model import points
from kplugin.model.goapi import API_MODES, LAYER, ApiMode
from kplugin.model.points import ExtensionPoint as ExtensionPoint
from kplugin.model.versions import KubeVersion, Target

if TYPE_CHECKING:  # loaded where used: render-config's start-up is a benchmark target
    from kplugin.model import apitypes
    from kplugin.model.apitypes import ApiType
    from kplugin.model.crds import Definition
    from kplugin.model.rbacrules import PolicyRule

# The points' facts are one table, kplugin.model.points; these are derived from it.
DEFAULT_EXTENSION_POINTS = points.where("default")
# The points at which the sample plugin reads its Args (a label and a resource): a plugin
# generated without any of them (QueueSort only, Bind only, ...) gets no Args at all.
SAMPLE_ARGS_POINTS = frozenset(points.where("sample_args"))
# The points whose rejections the scheduler retries on the events EventsToRegister names.
REJECTING_POINTS = frozenset(points.where("rejects"))
# The points whose plugins must all sign pods (SignPod) for the scheduler to batch them.
SIGNING_POINTS = frozenset(points.where("signs"))

_PASCAL = re.compile(r"[A-Z][a-z0-9]*(?:[A-Z][a-z0-9]*)*", re.ASCII)
_GO_KEYWORDS = frozenset(
    (
        "break case chan const continue default defer else fallthrough for func go goto if "
        "import interface map package range return select struct switch type var"
    ).split()
)
# The scheduler's own plugins: a second plugin of the same name cannot be registered.
IN_TREE_PLUGINS = frozenset(
    (
        "DefaultBinder DefaultPreemption DynamicResources ImageLocality InterPodAffinity NodeAffinity "
        "NodeName NodePorts NodeResourcesBalancedAllocation NodeResourcesFit NodeUnschedulable "
        "NodeVolumeLimits PodTopologySpread PrioritySort SchedulingGates TaintToleration VolumeBinding "
        "VolumeRestrictions VolumeZone AzureDiskLimits CinderLimits EBSLimits GCEPDLimits"
    ).split()
)
# kplugin's reporting plugin (internal/rejections, registered by every generated
# cmd/scheduler): a PostFilter plugin that logs each node's Filter status; kplugin e2e
# enables it
NODE_REJECTIONS_PLUGIN = "KpluginNodeRejections"
# Identifiers the generated plugin package declares or that name framework types the
# generated code uses: a plugin called one of these would not compile or would mislead.
_RESERVED_PLUGIN_NAMES = (
    IN_TREE_PLUGINS
    | {NODE_REJECTIONS_PLUGIN}
    | frozenset(
        (
            "Args Code CycleState Framework Handle Name New NodeInfo NodeScore NodeScoreList Plugin PodInfo "
            "PreFilterResult QueuedPodInfo Registry StateData StateKey Status"
        ).split()
    )
)
# Package names the go tool treats specially: a plugin package of that name cannot be
# imported (main), is hidden (internal, testdata) or ignored (vendor).
_SPECIAL_PACKAGES = frozenset({"internal", "main", "testdata", "vendor"})
_MODULE_ELEMENT = re.compile(r"[A-Za-z0-9._~-]+", re.ASCII)
# An image reference kplugin can tag a build with: [host[:port]/]path:tag (Docker's grammar).
_IMAGE_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_IMAGE_REF = re.compile(
    r"(?P<repository>"
    r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?"
    rf"{_IMAGE_PATH_COMPONENT}(?:/{_IMAGE_PATH_COMPONENT})*)"
    r":(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})"
)


def _require_str(value: object, where: str) -> str:
    if not isinstance(value, str):
        shown = "null" if value is None else f"{value!r} ({type(value).__name__})"
        raise UsageError(f"{where} must be a string, not {shown}; quote it")
    return value


def validate_project_name(name: str, where: str = "project name") -> str:
    """The project name becomes the directory, Deployment, chart and image name."""
    problem = names.dns1123_label_problem(_require_str(name, where))
    if problem:
        raise UsageError(f"{where} {name!r} {problem}; try e.g. 'gpu-aware'")
    return name


def validate_image(reference: str, where: str = "image") -> str:
    """The project's image: kplugin tags what it builds with it and writes it into the
    Deployment and the chart, so it is a reference with a tag (no digest)."""
    _require_str(reference, where)
    if len(reference) > 255 or not _IMAGE_REF.fullmatch(reference):
        raise UsageError(
            f"{where} {reference!r} is not an image reference with a tag ([registry/]path:tag, the path in "
            "lowercase); e.g. registry.example.com/team/gpu-aware:0.1.0"
        )
    return reference


def split_image(reference: str) -> tuple[str, str]:
    """repository and tag of a valid reference (``localhost:5000/x:1`` → ``localhost:5000/x``, ``1``)."""
    repository, _, tag = reference.rpartition(":")
    return repository, tag


def default_image(name: str, version: KubeVersion) -> str:
    """The image a project of this name is tagged with for this Kubernetes version
    (checked like any other: an absurd patch number would make an invalid tag)."""
    return validate_image(f"{name}:0.1.0-k8s{version}", "default image")


def retag_image(image: str, old: KubeVersion, new: KubeVersion) -> str:
    """A custom image moved to another Kubernetes version: where its tag names the old
    version (``…:1.2.0-k8s1.28.3``) the new one takes its place; else it is kept."""
    repository, tag = split_image(image)
    whole = re.compile(rf"(?<![0-9.]){re.escape(str(old))}(?![0-9])")  # 1.28.3, not 1.28.30
    return f"{repository}:{whole.sub(str(new), tag)}"


def plugin_name_from_project(name: str) -> str:
    """gpu-aware -> GpuAware; a leading digit gets a 'P' so the result is a Go identifier."""
    pascal = "".join(part[:1].upper() + part[1:] for part in name.split("-") if part)
    if pascal[:1].isdigit():
        pascal = "P" + pascal
    return pascal


def plugin_name_problem(name: str) -> str | None:
    if not name:
        return "is empty"
    if name.lower() in _GO_KEYWORDS and name == name.lower():
        return "is a Go keyword"
    if len(name) > 63:
        return "is longer than 63 characters"
    if not name.isascii() or not _PASCAL.fullmatch(name):
        return "is not an exported Go identifier in PascalCase (ASCII letters and digits, starting upper-case)"
    if name in _RESERVED_PLUGIN_NAMES:
        return "clashes with an identifier the generated code or the scheduler already uses"
    package = package_name(name)
    if package in _GO_KEYWORDS:
        return f"would make the Go package {package!r}, a Go keyword"
    if package in _SPECIAL_PACKAGES:
        return f"would make the Go package {package!r}, a name the go tool treats specially"
    return None


# a name a repository registers with app.WithPlugin (kplugin adopt): any string the
# configuration can name; kplugin takes the ones that are safe in YAML, file names and logs
_REGISTERED = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?", re.ASCII)


def registered_name_problem(name: object) -> str | None:
    """Why a plugin name an adopted repository registers is not one kplugin takes."""
    if not isinstance(name, str) or not _REGISTERED.fullmatch(name):
        return "is not 1-63 ASCII letters, digits, '.', '_' or '-' (starting and ending with a letter or digit)"
    return None


def validate_plugin_name(name: str, where: str = "plugin name") -> str:
    problem = plugin_name_problem(_require_str(name, where))
    if problem:
        raise UsageError(f"{where} {name!r} {problem}; try e.g. 'GpuAware'")
    return name


def package_name(plugin: str) -> str:
    """The Go package (and directory under pkg/) of a plugin: GpuAware -> gpuaware."""
    return plugin.lower()


def validate_module_path(path: str, where: str = "module path") -> str:
    """A Go module path as ``go mod init`` accepts it (the checks of x/mod CheckPath)."""
    _require_str(path, where)
    problem = None
    elements = path.split("/")
    if not path:
        problem = "is empty"
    elif not path.isascii() or any(c.isspace() for c in path):
        problem = "has spaces or non-ASCII characters"
    elif any(e == "" for e in elements):
        problem = "has an empty path element (leading, trailing or double '/')"
    elif any(not _MODULE_ELEMENT.fullmatch(e) for e in elements):
        problem = "may only contain letters, digits and '-', '.', '_', '~' between slashes"
    elif any(e.startswith(".") or e.endswith(".") for e in elements):
        problem = "has an element that starts or ends with '.'"
    elif "." not in elements[0]:
        problem = "must start with a domain name (the first element needs a dot)"
    elif len(path) > 500:
        problem = "is longer than 500 characters"
    elif elements[0] != elements[0].lower() or elements[0].startswith("-"):
        problem = "has a first element that is not a lower-case domain name"
    if problem:
        raise UsageError(f"{where} {path!r} {problem}; try e.g. 'example.com/gpu-scheduler'")
    return path


def validate_scheduler_name(name: str, where: str = "scheduler name") -> str:
    """schedulerName is also the leader-election lease name: a DNS-1123 subdomain."""
    problem = names.dns1123_subdomain_problem(_require_str(name, where))
    if problem is None and name in {"default-scheduler", "kube-scheduler"}:
        problem = "is the default scheduler's name or lease; a second scheduler needs its own"
    if problem:
        raise UsageError(f"{where} {name!r} {problem}; try e.g. 'gpu-aware-scheduler'")
    return name


def point_word(text: str) -> str:
    """An extension point as it may be spelled ("Filter", "pre-filter", "pre_filter"),
    in ExtensionPoint's spelling ("prefilter")."""
    return text.strip().lower().replace("-", "").replace("_", "")


def parse_extension_points(value: str, where: str = Setting.EXTENSION_POINTS) -> tuple[ExtensionPoint, ...]:
    """'filter,score' -> (FILTER, SCORE), in scheduling-cycle order, duplicates folded."""
    _require_str(value, where)
    words = [point_word(v) for v in value.split(",")]
    if not any(words):
        raise UsageError(f"{where} {value!r} is empty; choose from {points.words()}")
    named = set()
    for word in words:
        if not word:
            continue
        try:
            named.add(ExtensionPoint(word))
        except ValueError:
            raise UsageError(f"{where}: unknown extension point {word[:40]!r}; choose from {points.words()}") from None
    chosen = tuple(p for p in ExtensionPoint if p in named)
    if not any(p.config_name for p in chosen):
        raise UsageError(
            f"{where} {value!r}: enqueueextensions alone is never called; add the points it serves, "
            "e.g. filter,enqueueextensions"
        )
    if ExtensionPoint.ENQUEUE_EXTENSIONS in chosen and not named & REJECTING_POINTS:
        raise UsageError(
            f"{where} {value!r}: enqueueextensions only matters for a plugin that rejects pods; "
            f"add one of {', '.join(p for p in ExtensionPoint if p in REJECTING_POINTS)}"
        )
    return chosen


def require_available(
    chosen: tuple[ExtensionPoint, ...], target: Target, where: str = Setting.EXTENSION_POINTS
) -> None:
    """Refuse a point the target's minor does not have, naming the minors that have it
    (the table says so per point)."""
    minor = (target.version.major, target.version.minor)
    missing = [p for p in chosen if not points.available(p, minor)]
    if missing:
        since = "; ".join(f"{p} is in Kubernetes {points.span(p)}" for p in missing)
        raise UsageError(f"{where}: Kubernetes {target.version} has no {', '.join(missing)} extension point ({since})")


def validate_api(api: str, where: str = Setting.API) -> ApiMode:
    if api not in API_MODES:
        raise UsageError(f"{where} {api!r}: choose layer (the default: one source for every version) or native")
    return ApiMode(api)


@dataclass(frozen=True)
class PluginSpec:
    name: str
    extension_points: tuple[ExtensionPoint, ...] = DEFAULT_EXTENSION_POINTS
    # the plugin has an Args type (args.go) and registers its decoder
    args: bool = True

    @classmethod
    def new(cls, name: str, extension_points: tuple[ExtensionPoint, ...]) -> PluginSpec:
        """A plugin as kplugin generates it: with the sample Args where its extension
        points read them, without Args otherwise."""
        return cls(name, extension_points, args=bool(SAMPLE_ARGS_POINTS & set(extension_points)))

    @property
    def package(self) -> str:
        return package_name(self.name)

    def has(self, point: ExtensionPoint) -> bool:
        return point in self.extension_points

    @property
    def weighted(self) -> bool:
        """The configuration gives the plugin a weight (it scores nodes or placements)."""
        return any(point.row.weighted for point in self.extension_points)

    @property
    def gates(self) -> tuple[str, ...]:
        """The feature gates without which the scheduler never calls it at some point."""
        return points.gates(self.extension_points)


def gates_of(plugins: tuple[PluginSpec, ...], target: Target) -> tuple[str, ...]:
    """The feature gates the scheduler needs for these plugins' points, sorted, as the
    target minor needs them (points.minor_gates: GangScheduling with GenericWorkload at 1.36)."""
    return points.minor_gates(tuple({gate for plugin in plugins for gate in plugin.gates}), target.facts.gang_gate)


@dataclass(frozen=True)
class ProjectSpec:
    name: str
    module: str
    target: Target
    scheduler_name: str
    plugins: tuple[PluginSpec, ...] = field(default_factory=tuple)
    api: ApiMode = LAYER
    # a custom image reference; None: default_image(name, version)
    image: str | None = None
    # a fork of kplugin's project template (kplugin new --template); None: kplugin's own
    template: Path | None = None
    # the project's own ClusterRole rules (config/rbac/rules.yaml), kube-scheduler's excluded
    rules: tuple[PolicyRule, ...] = ()
    # the project's CustomResourceDefinitions (config/crd/), which deploy/ and the chart install
    crds: tuple[Definition, ...] = ()
    # the project's own API types (kplugin add api): apis/<group>/<version>/
    apis: tuple[ApiType, ...] = ()

    @property
    def image_ref(self) -> str:
        return self.image or default_image(self.name, self.target.version)

    def generation(self) -> apitypes.Generation:
        """make generate's commands: deepcopy of the plugins' Args, and the API types' code."""
        args_packages = [p.package for p in self.plugins if p.args]
        from kplugin.model import apitypes

        return apitypes.generation(self.module, self.target.facts, args_packages, self.apis)

    @property
    def gates(self) -> tuple[str, ...]:
        """The feature gates the scheduler needs for the plugins' points (a pod group's),
        as the target minor needs them."""
        return gates_of(self.plugins, self.target)

    def tool_versions(self) -> dict[str, str]:
        """The generators' versions (the Makefile's defaults)."""
        from kplugin.model import apitypes

        return apitypes.tool_versions(self.target.facts, self.target.version.staging_tag)

    @classmethod
    def create(
        cls,
        name: str,
        target: Target,
        module: str | None = None,
        plugin: str | None = None,
        extension_points: str | None = None,
        scheduler_name: str | None = None,
        api: str | None = None,
        image: str | None = None,
    ) -> ProjectSpec:
        """Validate every user-supplied value, in the order the user typed them."""
        validate_project_name(name)
        # an empty value is a mistake, never a request for the default
        plugin_name = validate_plugin_name(plugin if plugin is not None else plugin_name_from_project(name))
        chosen = parse_extension_points(extension_points) if extension_points is not None else DEFAULT_EXTENSION_POINTS
        require_available(chosen, target)
        spec = cls(
            name=name,
            module=validate_module_path(module if module is not None else f"example.com/{name}"),
            target=target,
            scheduler_name=validate_scheduler_name(scheduler_name if scheduler_name is not None else name),
            plugins=(PluginSpec.new(plugin_name, chosen),),
            api=validate_api(api if api is not None else LAYER),
            image=validate_image(image) if image is not None else None,
        )
        spec.image_ref  # noqa: B018 - the default image is checked too
        return spec
