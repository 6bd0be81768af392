"""The project's own API types (``kplugin add api``): a kind of a group and version whose
Go package lives in ``apis/<group's first label>/<version>``, recorded in kplugin.yaml,
and the commands that generate its code (``make generate``, run by ``kplugin add api``
too): deepcopy, a typed clientset, listers and informers from the project's pinned
k8s.io/code-generator, and its CRD (config/crd/) from controller-gen.

The commands are data, built here once: the Makefile's ``generate`` target is rendered
from them (with Make variables for the tools' versions) and ``kplugin add api`` runs the
same list with the values filled in."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from kplugin.core import names
from kplugin.core.errors import Setting, UsageError
from kplugin.model import tools
from kplugin.model.apifacts import ApiFacts, DeepcopyFlags
from kplugin.model.rbacrules import READ, PolicyRule

APIS_DIR = PurePosixPath("apis")
GENERATED_DIR = PurePosixPath("pkg/generated")
# what make generate writes beside the client code: the code-generator release that made it
# (its code builds only against that release's client-go and the ones close to it)
GENERATOR_STAMP = GENERATED_DIR / "code-generator.txt"
CRD_OUTPUT = PurePosixPath("config/crd")
_KIND = re.compile(r"[A-Z][A-Za-z0-9]{0,62}", re.ASCII)
_VERSION = re.compile(r"v[1-9][0-9]*(?:(?:alpha|beta)[1-9][0-9]*)?", re.ASCII)
_PLURAL = re.compile(r"[a-z][a-z0-9]{0,62}", re.ASCII)
# the group's first label names the Go package directory and the clientset's accessor
# (QuotaV1alpha1()): a Go identifier in lower case
_FIRST_LABEL = re.compile(r"[a-z][a-z0-9]*", re.ASCII)
# groups Kubernetes serves itself: a CRD of one is refused by the API server
_RESERVED_GROUP = re.compile(r"(.*\.)?(k8s\.io|kubernetes\.io)", re.ASCII)
_KEYS = {"kind", "group", "version", "plural", "scope"}
SCOPES = ("Namespaced", "Cluster")


def go_plural(kind: str) -> str:
    """The plural the code generators' namer makes of a kind, as Go names use it
    (informers' Quotas(), listers' Policies(namespace)): gengo's rules, -es after s, x, z,
    ch and sh, -ies after a consonant and y, -ves for f and fe."""
    if len(kind) < 2:
        return kind
    last, before = kind[-1], kind[-2]
    if last in "sxz" or (last == "h" and before in "cs"):
        return kind + "es"
    if last == "y" and before not in "aeiou":
        return kind[:-1] + "ies"
    if last == "f":
        return kind[:-1] + "ves"
    if last == "e" and before == "f":
        return kind[:-2] + "ves"
    return kind + "s"


def default_plural(kind: str) -> str:
    """The resource name (Quota -> quotas, Policy -> policies, Class -> classes); --plural
    overrides it. The CRD and the clientset are given it explicitly (markers), so a kind
    whose English plural differs still gets one name everywhere."""
    return go_plural(kind).lower()


@dataclass(frozen=True)
class ApiType:
    kind: str
    group: str
    version: str
    plural: str
    namespaced: bool = True

    @property
    def short(self) -> str:
        """The group's first label: quota of quota.example.com."""
        return self.group.split(".", 1)[0]

    @property
    def directory(self) -> PurePosixPath:
        return APIS_DIR / self.short / self.version

    @property
    def alias(self) -> str:
        """The import alias of the package in plugin code: quotav1alpha1."""
        return f"{self.short}{self.version}"

    @property
    def go_plural(self) -> str:
        return go_plural(self.kind)

    @property
    def scope(self) -> str:
        return SCOPES[0] if self.namespaced else SCOPES[1]

    @property
    def event_resource(self) -> str:
        """The name EventsToRegister gives the kind's events: <plural>.<version>.<group>."""
        return f"{self.plural}.{self.version}.{self.group}"

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def crd_file(self) -> PurePosixPath:
        """Where controller-gen writes the kind's CRD."""
        return CRD_OUTPUT / f"{self.group}_{self.plural}.yaml"

    @property
    def rule(self) -> PolicyRule:
        """What the scheduler needs to read the kind (its informers list and watch)."""
        return PolicyRule((self.group,), (self.plural,), READ)

    def import_path(self, module: str) -> str:
        return f"{module}/{self.directory}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "group": self.group,
            "version": self.version,
            "plural": self.plural,
            "scope": self.scope,
        }


# The settings that give each value, for messages: the command line's, or kplugin.yaml's keys.
_FROM_COMMAND_LINE = {"kind": "KIND", "group": Setting.GROUP, "version": Setting.TYPE_VERSION, "plural": Setting.PLURAL}


def create(kind: str, group: str, version: str, plural: str | None = None, *, cluster_scoped: bool = False) -> ApiType:
    """A new API type from the command line, every value checked (in the order typed)."""
    return _checked(kind, group, version, plural, cluster_scoped, _FROM_COMMAND_LINE)


def _checked(
    kind: Any, group: Any, version: Any, plural: Any, cluster_scoped: bool, where: Mapping[str, str]
) -> ApiType:
    if not isinstance(kind, str) or not _KIND.fullmatch(kind):
        raise UsageError(f"{where['kind']} {str(kind)[:70]!r} is not a kind: PascalCase letters and digits, e.g. Quota")
    if not isinstance(group, str) or names.dns1123_subdomain_problem(group) or "." not in group:
        raise UsageError(
            f"{where['group']} {str(group)[:70]!r} is not an API group: a DNS subdomain with a dot, "
            "e.g. quota.example.com"
        )
    if _RESERVED_GROUP.fullmatch(group):
        raise UsageError(
            f"{where['group']} {group!r} is Kubernetes' own (k8s.io, kubernetes.io); use a domain of yours, "
            "e.g. quota.example.com"
        )
    if not _FIRST_LABEL.fullmatch(group.split(".", 1)[0]):
        raise UsageError(
            f"{where['group']} {group!r}: its first label names the Go package (apis/<label>/) and must be "
            "lower-case letters and digits, starting with a letter; e.g. quota.example.com"
        )
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise UsageError(f"{where['version']} {str(version)[:40]!r} is not an API version: v1, v1beta1, v1alpha1, ...")
    chosen = default_plural(kind) if plural is None else plural
    if not isinstance(chosen, str) or not _PLURAL.fullmatch(chosen):
        raise UsageError(
            f"{where['plural']} {str(chosen)[:70]!r} is not a resource name: lower-case letters and digits, "
            "starting with a letter, e.g. quotas"
        )
    return ApiType(kind, group, version, chosen, namespaced=not cluster_scoped)


def parse(raw: Any, where: str) -> tuple[ApiType, ...]:
    """kplugin.yaml's ``apis``: a list of {kind, group, version, plural, scope}."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) > 50:
        raise UsageError(f"{where} must be a list of at most 50 API types; restore it from version control")
    found: list[ApiType] = []
    for i, entry in enumerate(raw):
        at = f"{where}[{i}]"
        if not isinstance(entry, dict) or set(entry) != _KEYS:
            raise UsageError(f"{at} must have exactly {', '.join(sorted(_KEYS))}; restore it from version control")
        if entry["scope"] not in SCOPES:
            raise UsageError(f"{at}.scope must be Namespaced or Cluster; restore it from version control")
        keys = {key: f"{at}.{key}" for key in _KEYS}
        found.append(
            _checked(
                entry["kind"], entry["group"], entry["version"], entry["plural"], entry["scope"] == "Cluster", keys
            )
        )
    check_together(found, where)
    return tuple(found)


def check_together(apis: list[ApiType], where: str) -> None:
    """Kinds of one project: each kind once per group, each resource once, and one group
    per package directory (two groups with the same first label would share it)."""
    seen: dict[tuple[str, str], ApiType] = {}
    directories: dict[str, str] = {}
    for api in apis:
        for key in ((api.group, api.kind), (api.group, api.plural)):
            if key in seen:
                raise UsageError(f"{where}: {api.kind} ({api.crd_name}) is there already; choose another kind")
            seen[key] = api
        owner = directories.setdefault(str(api.directory.parent), api.group)
        if owner != api.group:
            raise UsageError(
                f"{where}: {api.group} and {owner} would share apis/{api.short}/ (the first label names the "
                "package); choose a group with another first label"
            )


# --- the generators ------------------------------------------------------------------------

# What the commands are run with: Make variables in the Makefile, values when kplugin runs them.
GO, CODE_GENERATOR, CONTROLLER_TOOLS, HEADER = "$(GO)", "$(CODE_GENERATOR)", "$(CONTROLLER_TOOLS)", "$(HEADER)"
CLIENTS_GENERATOR = "$(CLIENTS_GENERATOR)"
_SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./$()-]+")


@dataclass(frozen=True)
class Generation:
    """``make generate``: directories emptied first (the generators never delete a file
    of a type that is gone), then the commands, in order."""

    cleaned: tuple[PurePosixPath, ...]
    commands: tuple[tuple[str, ...], ...]
    # the client code's generator is written to GENERATOR_STAMP (a project with API types)
    stamped: bool = False

    def filled(self, values: Mapping[str, str]) -> list[list[str]]:
        """The commands with the Make variables replaced by ``values``."""
        return [[_fill(arg, values) for arg in command] for command in self.commands]

    def make_lines(self) -> list[str]:
        """The commands as Makefile recipes (Make expands the variables), each flag on a
        continuation line of its own."""
        lines = []
        for command in self.commands:
            words = [arg if _SAFE.fullmatch(arg) else f"'{arg}'" for arg in command]
            text = words[0]
            for word in words[1:]:
                text += " \\\n\t\t" + word if word.startswith("-") else " " + word
            lines.append(text)
        if self.stamped:
            lines.append(f"printf '%s\\n' $(CLIENTS_GENERATOR) > {GENERATOR_STAMP}")
        return lines

    @staticmethod
    def stamp(values: Mapping[str, str]) -> str:
        """GENERATOR_STAMP's text for the generators' ``values``, as make generate writes it."""
        return values[CLIENTS_GENERATOR] + "\n"


def _fill(arg: str, values: Mapping[str, str]) -> str:
    for name, value in values.items():
        arg = arg.replace(name, value)
    return arg


def tool_versions(facts: ApiFacts, staging_tag: str) -> dict[str, str]:
    """The values of the generators' Make variables for a minor (the Makefile's defaults)."""
    return {
        CODE_GENERATOR: facts.deepcopy_tool or staging_tag,
        CLIENTS_GENERATOR: facts.clients_tool or staging_tag,
        CONTROLLER_TOOLS: tools.CONTROLLER_GEN.version,
    }


def generation(module: str, facts: ApiFacts, args_packages: list[str], apis: tuple[ApiType, ...]) -> Generation:
    """The code generation of a project: deepcopy of the plugins' Args packages
    (``args_packages``, pkg/<name>) and of the API packages; for API types, the clientset,
    listers and informers under pkg/generated/ and the CRDs under config/crd/."""
    tool = "k8s.io/code-generator/cmd/{}@" + CODE_GENERATOR
    header = ("--go-header-file", HEADER)

    def deepcopy(dirs: list[str]) -> tuple[str, ...]:
        # gengo v2's flags on every minor (the catalog's deepcopy_tool runs a code-generator
        # that has them where the minor's own is gengo v1)
        return (GO, "run", tool.format("deepcopy-gen"), "--output-file", "zz_generated.deepcopy.go", *header, *dirs)

    args_dirs = [f"./pkg/{p}" for p in args_packages]
    if not apis:
        return Generation((), (deepcopy(args_dirs),) if args_dirs else ())
    # the API packages first: the clients are generated from them, and the plugin packages
    # (whose Args deepcopy-gen reads) import the clients
    commands: list[tuple[str, ...]] = [deepcopy([f"./{a.directory}" for a in apis])]
    generated = f"{module}/{GENERATED_DIR}"
    packages = [a.import_path(module) for a in apis]
    clients_v1 = facts.clients_flags is DeepcopyFlags.GENGO
    client_tool = "k8s.io/code-generator/cmd/{}@" + CLIENTS_GENERATOR

    def out(what: str) -> tuple[str, ...]:
        if clients_v1:  # gengo v1 writes to <output-base>/<package>: the module's path trimmed off
            return ("--output-package", f"{generated}/{what}", "--output-base", ".", "--trim-path-prefix", module)
        return ("--output-pkg", f"{generated}/{what}", "--output-dir", f"./{GENERATED_DIR}/{what}")

    def inputs() -> tuple[str, ...]:
        return ("--input-dirs", ",".join(packages)) if clients_v1 else tuple(packages)

    groups = sorted({f"{a.short}/{a.version}" for a in apis})
    commands.append(
        (
            GO,
            "run",
            client_tool.format("client-gen"),
            "--clientset-name",
            "versioned",
            "--input-base",
            f"{module}/{APIS_DIR}",
            *tuple(arg for g in groups for arg in ("--input", g)),
            *out("clientset"),
            *header,
        )
    )
    commands.append((GO, "run", client_tool.format("lister-gen"), *out("listers"), *header, *inputs()))
    commands.append(
        (
            GO,
            "run",
            client_tool.format("informer-gen"),
            "--versioned-clientset-package",
            f"{generated}/clientset/versioned",
            "--listers-package",
            f"{generated}/listers",
            *out("informers"),
            *header,
            *inputs(),
        )
    )
    if args_dirs:
        commands.append(deepcopy(args_dirs))
    commands.append(
        (
            GO,
            "run",
            f"{tools.CONTROLLER_GEN.package}@{CONTROLLER_TOOLS}",
            "crd",
            f"paths=./{APIS_DIR}/...",
            f"output:crd:artifacts:config={CRD_OUTPUT}",
        )
    )
    return Generation((GENERATED_DIR,), tuple(commands), stamped=True)
