"""``kplugin doctor``: the checks of what silently breaks scheduler plugins in production.

Each check returns findings: what is wrong, where (file:line), why it breaks and how to
fix it. The core never prints; the CLI shows a table or JSON and exits 1 on any error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kplugin.core import elf, safefs, yamlio
from kplugin.core.errors import OperationError, UsageError
from kplugin.model import manifests
from kplugin.model.project import Project
from kplugin.model.schedconfig import CONFIG_GROUP, DEFAULT_LEASE, MAX_WEIGHT
from kplugin.model.spec import IN_TREE_PLUGINS, validate_plugin_name
from kplugin.model.versions import Target

ERROR, WARNING, INFO = "error", "warning", "info"


@dataclass(frozen=True)
class Finding:
    check: str
    severity: str
    file: str
    line: int | None
    what: str
    why: str
    fix: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass
class Context:
    project: Project
    target: Target
    config_path: Path
    binary: Path | None
    # --config was given: it may be anywhere (a default config is a project file like any other)
    config_given: bool = False
    findings: list[Finding] = field(default_factory=list)
    _yaml_cache: dict[Path, Any] = field(default_factory=dict)

    def rel(self, path: Path) -> str:
        candidates = [path.absolute()]  # a symlink in the project by its own name
        with suppress(OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
            candidates.append(path.resolve())
        for candidate in candidates:
            if candidate.is_relative_to(self.project.root):
                return str(candidate.relative_to(self.project.root))
        return str(path)

    def add(self, check: str, severity: str, path: Path, line: int | None, what: str, why: str, fix: str) -> None:
        self.findings.append(Finding(check, severity, self.rel(path), line, what, why, fix))

    def text(self, path: Path, limit: int = safefs.SMALL_FILE * 16) -> str | None:
        """A file's text, None when it is missing or unreadable (an unreadable file is a
        finding: a directory, symlink out of the project, FIFO, non-UTF-8 text, more than
        ``limit`` bytes...)."""
        if safefs.lstat_mode(path) is None:
            return None
        absolute = path.absolute()
        try:
            if absolute.is_relative_to(self.project.root) and not (self.config_given and path == self.config_path):
                relative = absolute.relative_to(self.project.root).as_posix()
                data = safefs.read_project_file(self.project.root, relative, limit)
                return None if data is None else safefs.decode(data, "file", path)
            return safefs.read_text(path, "file", limit)
        except UsageError as err:
            self.add(
                "files",
                ERROR,
                path,
                None,
                str(err),
                "kplugin, kubectl and the scheduler cannot read it",
                "replace it with a regular UTF-8 file inside the project",
            )
            return None

    def load(self, path: Path, many: bool = False) -> Any:
        """Round-trip YAML (keeps line numbers); None when the file is missing."""
        key = path.absolute()
        if key not in self._yaml_cache:
            from ruamel.yaml import YAML
            from ruamel.yaml.error import YAMLError

            text = self.text(path, safefs.SMALL_FILE)  # YAML: round-trip loading takes ~15 s per MB
            self._yaml_cache[key] = None
            if text is not None:
                try:
                    yamlio.parse(text, str(self.rel(path)), every_document=many)  # no aliases, no deep nesting
                    yaml = YAML()
                    self._yaml_cache[key] = list(yaml.load_all(text)) if many else yaml.load(text)
                except UsageError as err:
                    self.add(
                        "yaml",
                        ERROR,
                        path,
                        None,
                        str(err),
                        "kubectl and kube-scheduler cannot read it",
                        "fix the syntax",
                    )
                except YAMLError as err:
                    mark = getattr(err, "problem_mark", None)
                    self.add(
                        "yaml",
                        ERROR,
                        path,
                        mark.line + 1 if mark else None,
                        "not valid YAML",
                        "kubectl and kube-scheduler cannot read it",
                        "fix the syntax",
                    )
        return self._yaml_cache[key]

    def mapping(self, value: Any, path: Path, line: int | None, what: str) -> dict[Any, Any]:
        """``value`` when it is a mapping (or missing: empty); else a finding and {}."""
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        self.add(
            "types",
            ERROR,
            path,
            line,
            f"{what} must be a mapping, not {yamlio.describe(value)}",
            "kube-scheduler and kubectl cannot decode the file",
            f"make {what} a mapping",
        )
        return {}

    def sequence(self, value: Any, path: Path, line: int | None, what: str) -> list[Any]:
        """``value`` when it is a list (or missing: empty); else a finding and []."""
        if value is None:
            return []
        if isinstance(value, list):
            return value
        self.add(
            "types",
            ERROR,
            path,
            line,
            f"{what} must be a list, not {yamlio.describe(value)}",
            "kube-scheduler and kubectl cannot decode the file",
            f"make {what} a list",
        )
        return []

    def string(self, value: Any, path: Path, line: int | None, what: str, default: str) -> str | None:
        """``value`` when it is a string (``default`` when missing); else a finding and None."""
        if value is None:
            return default
        if isinstance(value, str):
            return value
        self.add(
            "types",
            ERROR,
            path,
            line,
            f"{what} must be a string, not {yamlio.describe(value)}",
            "kube-scheduler and kubectl cannot decode the file",
            f"make {what} a string (quote it)",
        )
        return None

    @property
    def config(self) -> Any:
        return self.load(self.config_path)


def line_of(node: Any, key: str | int | None = None) -> int | None:
    """1-based line of a ruamel node, or of one of its keys / items."""
    lc = getattr(node, "lc", None)
    if lc is None:
        return None
    try:
        if key is None:
            return int(lc.line) + 1
        if isinstance(key, int):
            return int(lc.item(key)[0]) + 1
        return int(lc.key(key)[0]) + 1
    except (KeyError, IndexError, TypeError):
        return int(lc.line) + 1


def _profiles(ctx: Context) -> list[dict[Any, Any]]:
    """The configuration's profiles that are mappings (the others are findings)."""
    config = ctx.config
    if not isinstance(config, dict):
        return []
    profiles = ctx.sequence(config.get("profiles"), ctx.config_path, line_of(config, "profiles"), "profiles")
    return [
        ctx.mapping(profile, ctx.config_path, line_of(profiles, i), f"profiles[{i}]")
        for i, profile in enumerate(profiles)
    ]


def _plugin_entries(ctx: Context, profile: dict[Any, Any]) -> Iterator[tuple[str, str, dict[Any, Any], Any, int]]:
    """(extension point, enabled|disabled, entry, list node, index) of a profile."""
    path = ctx.config_path
    plugins = ctx.mapping(profile.get("plugins"), path, line_of(profile, "plugins"), "plugins")
    for point, section in plugins.items():
        section = ctx.mapping(section, path, line_of(plugins, point), f"plugins.{point}")
        for kind in ("enabled", "disabled"):
            entries = ctx.sequence(section.get(kind), path, line_of(section, kind), f"plugins.{point}.{kind}")
            for i, entry in enumerate(entries):
                entry = ctx.mapping(entry, path, line_of(entries, i), f"plugins.{point}.{kind}[{i}]")
                yield str(point), kind, entry, entries, i


def _plugin_configs(ctx: Context, profile: dict[Any, Any]) -> Iterator[tuple[int, dict[Any, Any], Any]]:
    """(index, entry, list node) of a profile's pluginConfig."""
    path = ctx.config_path
    configs = ctx.sequence(profile.get("pluginConfig"), path, line_of(profile, "pluginConfig"), "pluginConfig")
    for j, entry in enumerate(configs):
        yield j, ctx.mapping(entry, path, line_of(configs, j), f"pluginConfig[{j}]"), configs


# --- the checks --------------------------------------------------------------------


def check_plugin_names(ctx: Context) -> None:
    """1. plugin names valid and identical in Name(), the config, the registry and pluginConfig."""
    project = ctx.project
    ours = {p.name for p in project.plugins}
    meta = project.root / "kplugin.yaml"
    imports = project.root / "cmd/scheduler/plugins.go"
    import_text = ctx.text(imports) or ""
    for plugin in project.plugins:
        try:
            validate_plugin_name(plugin.name)
        except Exception as err:
            ctx.add(
                "plugin-names",
                ERROR,
                meta,
                None,
                str(err),
                "plugin names are Go identifiers and config keys; '_' and lower case break the convention "
                "the scheduler's own plugins follow",
                "rename the plugin in PascalCase",
            )
        source = project.root / "pkg" / plugin.package
        found = None
        for go_file in sorted(source.glob("*.go")) if source.is_dir() and not source.is_symlink() else []:
            text = ctx.text(go_file) or ""
            match = re.search(r'^const Name = "([^"]*)"', text, re.M)
            if match:
                found = (go_file, match[1], text[: match.start()].count("\n") + 1)
        if found is None:
            ctx.add(
                "plugin-names",
                ERROR,
                source,
                None,
                f"no `const Name` found for plugin {plugin.name}",
                "the registered name comes from Name",
                f'declare const Name = "{plugin.name}" in {source}',
            )
        elif found[1] != plugin.name:
            ctx.add(
                "plugin-names",
                ERROR,
                found[0],
                found[2],
                f"Name() is {found[1]!r} but kplugin.yaml and the config say {plugin.name!r}",
                "the scheduler looks plugins up by the name they register; a mismatch means "
                "'plugin does not exist' at start-up",
                "make them identical",
            )
        if f'"{project.module}/pkg/{plugin.package}"' not in import_text:
            ctx.add(
                "plugin-names",
                ERROR,
                imports,
                None,
                f"plugin package pkg/{plugin.package} is not imported",
                "a plugin registers itself from init(); without the import it is never compiled in",
                f'add _ "{project.module}/pkg/{plugin.package}" to {ctx.rel(imports)}',
            )
    known = ours | IN_TREE_PLUGINS
    for i, profile in enumerate(_profiles(ctx)):
        for point, kind, entry, entries, index in _plugin_entries(ctx, profile):
            name = str(entry.get("name", ""))
            if name == "*" and kind == "disabled":
                ctx.add(
                    "disabled-all",
                    WARNING,
                    ctx.config_path,
                    line_of(entries, index),
                    f"profile {i}: {point}.disabled '*' turns off every default plugin at {point}",
                    "left in from debugging, it drops NodeResourcesFit, TaintToleration and the rest: "
                    "pods land on nodes that cannot run them",
                    "list only the plugins to disable",
                )
            elif name and name not in known:
                ctx.add(
                    "plugin-names",
                    ERROR,
                    ctx.config_path,
                    line_of(entries, index),
                    f"plugin {name!r} at {point}.{kind} is not registered in this scheduler",
                    f'kube-scheduler fails at start-up: {point} plugin "{name}" does not exist',
                    f"use one of {', '.join(sorted(ours))} or an in-tree plugin",
                )
        for j, entry, configs in _plugin_configs(ctx, profile):
            name = str(entry.get("name", ""))
            if name not in known:
                ctx.add(
                    "plugin-names",
                    ERROR,
                    ctx.config_path,
                    line_of(configs, j),
                    f"pluginConfig for {name!r}, which is not registered",
                    "args for an unknown plugin are rejected when the profile is built",
                    f"name it {', '.join(sorted(ours))}",
                )


def check_api_version(ctx: Context) -> None:
    """2. config apiVersion served by the target kube-scheduler."""
    config = ctx.config
    if not isinstance(config, dict):
        ctx.add(
            "api-version",
            ERROR,
            ctx.config_path,
            None,
            "no scheduler configuration",
            "the Deployment starts kube-scheduler with --config",
            "run kplugin render-config -o FILE",
        )
        return
    api = str(config.get("apiVersion", ""))
    group, _, version = api.partition("/")
    served = ctx.target.release.config_api_versions
    if group != CONFIG_GROUP or version not in served:
        ctx.add(
            "api-version",
            ERROR,
            ctx.config_path,
            line_of(config, "apiVersion"),
            f"apiVersion {api!r} is not served by kube-scheduler {ctx.target.version}",
            f"it only reads {', '.join(f'{CONFIG_GROUP}/{v}' for v in served)}; v1beta2 is gone from "
            "1.28 and v1beta3 from 1.29",
            f"use {CONFIG_GROUP}/v1",
        )


def check_scheduler_names(ctx: Context) -> None:
    """3. schedulerName identical in the config, the ConfigMap, the chart and sample pods."""
    names: set[str] = set()
    for i, profile in enumerate(_profiles(ctx)):
        at = line_of(profile, "schedulerName")
        given = ctx.string(
            profile.get("schedulerName"), ctx.config_path, at, f"profiles[{i}].schedulerName", "default-scheduler"
        )
        names.update([given] if given is not None else [])
    if not names:
        return
    root = ctx.project.root
    pod_file = root / "deploy/sample-pod.yaml"
    pod = ctx.load(pod_file)
    if pod is not None and not isinstance(pod, dict):
        ctx.mapping(pod, pod_file, None, "the sample pod")  # a finding
    elif isinstance(pod, dict):
        spec = ctx.mapping(pod.get("spec"), pod_file, line_of(pod, "spec"), "spec")
        name = ctx.string(
            spec.get("schedulerName"),
            pod_file,
            line_of(spec, "schedulerName"),
            "spec.schedulerName",
            "default-scheduler",
        )
        if name is not None and name not in names:
            ctx.add(
                "scheduler-name",
                ERROR,
                pod_file,
                line_of(spec, "schedulerName"),
                f"sample pod uses schedulerName {name!r}, the config has {', '.join(sorted(names))}",
                "a pod whose schedulerName matches no profile is never scheduled by this scheduler; it stays Pending",
                "make them identical",
            )
    cm_file = root / "deploy/configmap.yaml"
    cm = ctx.load(cm_file)
    if isinstance(cm, dict) and ctx.config_path.absolute() == (root / "deploy/scheduler-config.yaml").absolute():
        data = ctx.mapping(cm.get("data"), cm_file, line_of(cm, "data"), "data")
        embedded = data.get(manifests.CONFIG_FILE)
        try:
            differs = embedded is not None and yamlio.parse(str(embedded), "the ConfigMap's config") != _plain(
                ctx.config
            )
        except UsageError as err:
            ctx.add(
                "yaml",
                ERROR,
                cm_file,
                line_of(data, manifests.CONFIG_FILE),
                str(err),
                "kube-scheduler cannot read the configuration it is given",
                "regenerate the ConfigMap",
            )
            differs = False
        if differs:
            ctx.add(
                "scheduler-name",
                ERROR,
                cm_file,
                line_of(data, manifests.CONFIG_FILE),
                "the ConfigMap's scheduler-config.yaml differs from deploy/scheduler-config.yaml",
                "the cluster runs the ConfigMap, not the file you validated",
                "regenerate it: kplugin render-config --format configmap",
            )


def _plain(node: Any) -> Any:
    import io

    from ruamel.yaml import YAML

    out = io.StringIO()
    YAML().dump(node, out)
    return YAML(typ="safe").load(out.getvalue())


def check_lease(ctx: Context) -> None:
    """4. the leader-election lease is not the default scheduler's."""
    config = ctx.config
    if not isinstance(config, dict):
        return
    election = ctx.mapping(
        config.get("leaderElection"), ctx.config_path, line_of(config, "leaderElection"), "leaderElection"
    )
    elect = election.get("leaderElect", True)
    if not isinstance(elect, bool):
        ctx.add(
            "types",
            ERROR,
            ctx.config_path,
            line_of(election, "leaderElect"),
            f"leaderElection.leaderElect must be true or false, not {yamlio.describe(elect)}",
            "kube-scheduler cannot decode the configuration",
            "set leaderElect: true (or false for a single replica)",
        )
        return
    if elect is False:
        return
    name, namespace = (
        ctx.string(election.get(key), ctx.config_path, line_of(election, key), f"leaderElection.{key}", default)
        for key, default in (("resourceName", DEFAULT_LEASE), ("resourceNamespace", "kube-system"))
    )
    if name == DEFAULT_LEASE and namespace == "kube-system":
        ctx.add(
            "lease",
            ERROR,
            ctx.config_path,
            line_of(election, "resourceName") or line_of(config, "leaderElection"),
            "leader election uses the default scheduler's lease kube-system/kube-scheduler",
            "a second scheduler on that lease either never becomes leader or takes it from the default "
            "scheduler, which then stops scheduling",
            f"set leaderElection.resourceName: {ctx.project.scheduler_name}",
        )


def _rules(ctx: Context) -> tuple[Path, list[dict[str, Any]]]:
    """The rules of deploy/rbac.yaml, each a mapping of its document's kind and its
    apiGroups, resources, verbs and resourceNames, lists of strings (values of other
    types are findings)."""
    path = ctx.project.root / "deploy/rbac.yaml"
    found = []
    for i, doc in enumerate(ctx.load(path, many=True) or []):
        doc = ctx.mapping(doc, path, None, f"document {i + 1}")
        kind = ctx.string(doc.get("kind"), path, line_of(doc, "kind"), f"document {i + 1} kind", "")
        rules = ctx.sequence(doc.get("rules"), path, line_of(doc, "rules"), f"document {i + 1} rules")
        for j, rule in enumerate(rules):
            rule = ctx.mapping(rule, path, line_of(rules, j), f"rules[{j}]")
            clean: dict[str, Any] = {"kind": kind}
            for key in ("apiGroups", "resources", "verbs", "resourceNames"):
                values = ctx.sequence(rule.get(key), path, line_of(rule, key), f"rules[{j}].{key}")
                clean[key] = [
                    v
                    for k, v in enumerate(values)
                    if ctx.string(v, path, line_of(values, k), f"rules[{j}].{key}[{k}]", "") is not None
                ]
            found.append(clean)
    return path, found


def check_rbac(ctx: Context) -> None:
    """5. RBAC covers what this version's scheduler reads, and its own lease."""
    path, rules = _rules(ctx)
    if not rules:
        ctx.add(
            "rbac",
            ERROR,
            path,
            None,
            "no RBAC rules found",
            "the scheduler cannot list nodes or bind pods",
            "restore deploy/rbac.yaml from kplugin new",
        )
        return
    granted: set[tuple[str, str, str]] = set()
    for rule in rules:
        if rule["kind"] != "ClusterRole":
            continue
        for group in rule.get("apiGroups") or []:
            for resource in rule.get("resources") or []:
                for verb in rule.get("verbs") or []:
                    granted.add((str(group), str(resource), str(verb)))
    version = ctx.target.version
    for need in manifests.scheduler_rules(version.major, version.minor):
        missing = [
            f"{verb} {group or 'core'}/{resource}"
            for group in need["apiGroups"]
            for resource in need["resources"]
            for verb in need["verbs"]
            if (group, resource, verb) not in granted and ("*", resource, verb) not in granted
        ]
        if missing:
            ctx.add(
                "rbac",
                ERROR,
                path,
                None,
                f"the ClusterRole misses {', '.join(missing[:4])}{' …' if len(missing) > 4 else ''}",
                f"kube-scheduler {version} reads these; without them its informers fail and pods that "
                "need them are never scheduled",
                "add the rule (kplugin new for this version has it)",
            )
    lease = ctx.config.get("leaderElection") if isinstance(ctx.config, dict) else None
    lease = lease if isinstance(lease, dict) else {}
    name = lease.get("resourceName", DEFAULT_LEASE)
    if lease and lease.get("leaderElect", True) is True and isinstance(name, str):  # wrong types: check_lease
        ok = any(
            rule["kind"] in ("Role", "ClusterRole")
            and "leases" in (rule.get("resources") or [])
            and "update" in (rule.get("verbs") or [])
            and name in (rule.get("resourceNames") or [name])
            for rule in rules
        )
        if not ok:
            ctx.add(
                "rbac",
                ERROR,
                path,
                None,
                f"no rule lets the scheduler update its lease {name!r}",
                "leader election fails and the scheduler never starts scheduling",
                f"grant get/update on leases named {name} in the lease namespace",
            )


def check_binary(ctx: Context) -> None:
    """6. the built binary is statically linked and for the right architecture."""
    binary = ctx.binary
    if binary is None or not binary.is_file():
        return
    try:
        info = elf.inspect(binary)
    except (elf.NotElf, OSError, IndexError) as err:
        ctx.add("binary", ERROR, binary, None, str(err), "it cannot run in the image", "rebuild: kplugin build")
        return
    if not info.static:
        ctx.add(
            "binary",
            ERROR,
            binary,
            None,
            "the binary is dynamically linked",
            "distroless/static and scratch images have no C library: it fails to start",
            "build with CGO_ENABLED=0 (kplugin build does)",
        )
    from kplugin.build import host_arch

    if info.arch != host_arch():
        ctx.add(
            "binary",
            WARNING,
            binary,
            None,
            f"the binary is for {info.arch}, this machine is {host_arch()}",
            "nodes of another architecture cannot run it",
            "build with --platform linux/ARCH for your nodes",
        )


def check_args(ctx: Context) -> None:
    """7. pluginConfig args (and the args files) decode into the plugins' Args, by the
    plugins' own decoders (their Go code, run through argsinfo)."""
    from kplugin.generate import argsinfo

    ours = {p.name: p for p in ctx.project.plugins}
    entries: list[tuple[str, Any, Path, int | None]] = []  # plugin, args, file, line
    for profile in _profiles(ctx):
        for j, entry, configs in _plugin_configs(ctx, profile):
            name = str(entry.get("name", ""))
            if name not in ours:
                continue
            args = _plain(entry.get("args") or {})
            if not isinstance(args, dict):
                ctx.add(
                    "args",
                    ERROR,
                    ctx.config_path,
                    line_of(entry, "args") or line_of(configs, j),
                    f"pluginConfig args of {name} must be a mapping, not {yamlio.describe(args)}",
                    "the plugin's factory cannot decode them and kube-scheduler exits at start-up",
                    f"give {name}'s args as a mapping of its Args fields",
                )
                continue
            entries.append((name, args, ctx.config_path, line_of(configs, j)))
    for plugin in ctx.project.plugins:
        path = ctx.project.root / argsinfo.args_file(plugin)
        try:
            values = argsinfo.read_args_file(ctx.project, plugin)
        except UsageError as err:
            ctx.add(
                "args",
                ERROR,
                path,
                None,
                str(err),
                "kplugin cannot render the configuration from it",
                "make it a YAML mapping of the plugin's args fields",
            )
            continue
        if values is not None:
            entries.append((plugin.name, values, path, None))
    if not entries:
        return
    try:
        for name, args, path, line in entries:
            report = argsinfo.learn(ctx.project, {name: args}).get(name)
            if report is None:
                continue  # not registered: check_plugin_names reports it
            if not report.takes_args and args:
                ctx.add(
                    "args",
                    ERROR,
                    path,
                    line,
                    f"args for {name}, which takes none",
                    f"{name} registers no args decoder; its factory ignores or rejects them",
                    "remove the args, or give the plugin Args (see kplugin's generated args.go)",
                )
            elif report.error is not None:
                ctx.add(
                    "args",
                    ERROR,
                    path,
                    line,
                    report.error,
                    "the plugin's factory rejects the args and kube-scheduler exits at start-up",
                    f"use only the fields of {report.type_name or name + 'Args'} with valid values",
                )
    except argsinfo.Unavailable as why:
        ctx.add(
            "args",
            INFO,
            ctx.project.root / argsinfo.ARGS_DIR,
            None,
            f"pluginConfig args not checked against the plugins' Go code: {why}",
            "only the plugins' own decoders can tell whether their args are right",
            "run kplugin doctor where Go is installed, after go mod tidy",
        )
    except OperationError as err:
        ctx.add(
            "args",
            ERROR,
            ctx.project.root / "pkg",
            None,
            str(err) + "".join(f"; {d}" for d in err.details[:1]),
            "the plugins do not build",
            "fix the compile error (go build ./...)",
        )


def check_weights(ctx: Context) -> None:
    """8. score weights valid."""
    for profile in _profiles(ctx):
        for point, kind, entry, entries, index in _plugin_entries(ctx, profile):
            if kind != "enabled" or point not in {"score", "multiPoint"} or "weight" not in entry:
                continue
            weight = entry["weight"]
            name = entry.get("name")
            if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0 or weight > MAX_WEIGHT:
                ctx.add(
                    "weights",
                    ERROR,
                    ctx.config_path,
                    line_of(entries, index),
                    f"{name}: weight {weight!r} is not a whole number from 1 to {MAX_WEIGHT}",
                    "the configuration fails to load, or a negative weight inverts the plugin's preference",
                    "use a positive integer",
                )
            elif weight == 0:
                ctx.add(
                    "weights",
                    WARNING,
                    ctx.config_path,
                    line_of(entries, index),
                    f"{name}: weight 0 is silently treated as 1",
                    "it reads as 'off' but the plugin still scores",
                    "remove the plugin from score, or set 1",
                )


def check_go_mod(ctx: Context) -> None:
    """9. go.mod pins consistent: k8s.io/kubernetes and every staging module at one version."""
    path = ctx.project.root / "go.mod"
    if not path.is_file():
        ctx.add(
            "go-mod",
            ERROR,
            path,
            None,
            "go.mod is missing",
            "the project does not build",
            "restore it from version control",
        )
        return
    lines = (ctx.text(path) or "").splitlines()
    version = ctx.project.version
    require = next((i for i, line in enumerate(lines) if re.search(r"\bk8s\.io/kubernetes v", line)), None)
    if require is None or f"k8s.io/kubernetes {version.tag}" not in lines[require]:
        ctx.add(
            "go-mod",
            ERROR,
            path,
            require + 1 if require is not None else None,
            f"k8s.io/kubernetes is not required at {version.tag} (kplugin.yaml's version)",
            "the code compiles against another release than the one recorded and configured",
            "kplugin upgrade, or fix the require line",
        )
    replaced = {}
    for i, line in enumerate(lines):
        match = re.match(r"\s*(k8s\.io/[\w.-]+)\s+=>\s+(k8s\.io/[\w.-]+)\s+(\S+)", line)
        if match:
            replaced[match[1]] = (match[3], i + 1)
    for module in ctx.project.target.release.staging_modules:
        pin = replaced.get(module)
        if pin is None:
            ctx.add(
                "go-mod",
                ERROR,
                path,
                None,
                f"no replace for {module}",
                "k8s.io/kubernetes requires it at v0.0.0: builds fail with 'unknown revision v0.0.0' "
                "once a package of it is compiled",
                f"add {module} => {module} {version.staging_tag}",
            )
        elif pin[0] != version.staging_tag:
            ctx.add(
                "go-mod",
                ERROR,
                path,
                pin[1],
                f"{module} is pinned at {pin[0]}, not {version.staging_tag}",
                "mixed staging versions do not compile together or behave subtly differently",
                f"pin every staging module at {version.staging_tag}",
            )


def check_generated(ctx: Context) -> None:
    """10. generated files as kplugin wrote them (kplugin.yaml records their sha256)."""
    import hashlib

    for name, recorded in sorted(ctx.project.generated.items()):
        path = ctx.project.root / name
        try:
            data = safefs.read_project_file(ctx.project.root, name)
        except UsageError as err:
            ctx.add(
                "generated",
                WARNING,
                path,
                None,
                str(err),
                "kplugin upgrade and add plugin stop on it",
                "restore the file from version control",
            )
            continue
        if data is None:
            ctx.add(
                "generated",
                WARNING,
                path,
                None,
                f"generated file {name} is missing",
                "kplugin upgrade and add plugin write it again",
                "restore it from version control, or let kplugin upgrade recreate it",
            )
        elif hashlib.sha256(data).hexdigest() != recorded:
            ctx.add(
                "generated",
                WARNING,
                path,
                None,
                f"generated file {name} was edited by hand",
                "kplugin upgrade and add plugin stop when a generated file they must rewrite was edited; "
                "zz_generated files are rewritten for every Kubernetes version",
                "move the change into your own files (or keep it with kplugin upgrade --keep-edited)",
            )


def check_extension_points(ctx: Context) -> None:
    """11. the extension points in kplugin.yaml are those the code implements and the
    configuration enables (kplugin generates the adapter and config from kplugin.yaml)."""
    from kplugin.generate.addplugin import methods_in_code
    from kplugin.model.spec import ExtensionPoint

    meta = ctx.project.root / "kplugin.yaml"
    by_config: dict[str, set[str]] = {}
    for profile in _profiles(ctx):
        for point, kind, entry, _, _ in _plugin_entries(ctx, profile):
            if kind == "enabled":
                by_config.setdefault(str(entry.get("name", "")), set()).add(point)
    for plugin in ctx.project.plugins:
        try:
            in_code = methods_in_code(ctx.project, plugin)
        except UsageError as err:
            ctx.add(
                "extension-points",
                ERROR,
                ctx.project.root / "pkg" / plugin.package,
                None,
                str(err),
                "kplugin cannot read the plugin's code",
                "restore pkg/ as regular files",
            )
            continue
        for point, where in sorted(in_code.items()):
            if not plugin.has(point):
                file, _, line = where.rpartition(":")
                ctx.add(
                    "extension-points",
                    ERROR,
                    ctx.project.root / file,
                    int(line),
                    f"{plugin.name} implements {point.go_name} in its code, but kplugin.yaml does not list {point}",
                    "the generated adapter does not pass it to the scheduler and the configuration does not "
                    "enable it: the method is never called",
                    f"kplugin add extension-point {plugin.name} {point}",
                )
        for point in plugin.extension_points:
            if point not in in_code:
                ctx.add(
                    "extension-points",
                    ERROR,
                    meta,
                    None,
                    f"kplugin.yaml lists {point} for {plugin.name}, but pkg/{plugin.package} has no "
                    f"{point.go_name} method on {plugin.name}",
                    "the generated adapter calls it: the project does not compile",
                    f"write the method, or remove {point} from kplugin.yaml and run kplugin upgrade",
                )
        enabled = by_config.get(plugin.name)
        if enabled is None or "multiPoint" in enabled:  # multiPoint: every point the plugin implements
            continue
        for config_point in sorted(enabled):
            configured = next((p for p in ExtensionPoint if p.config_name == config_point), None)
            if configured is not None and not plugin.has(configured):
                ctx.add(
                    "extension-points",
                    ERROR,
                    ctx.config_path,
                    None,
                    f"the configuration enables {plugin.name} at {config_point}, which kplugin.yaml does not list",
                    f"kube-scheduler exits at start-up: {plugin.name} does not implement {configured.interface}",
                    f"kplugin add extension-point {plugin.name} {configured}, or remove it from the configuration",
                )
        for point in plugin.extension_points:
            if point.config_name and point.config_name not in enabled:
                ctx.add(
                    "extension-points",
                    WARNING,
                    ctx.config_path,
                    None,
                    f"{plugin.name} implements {point.go_name}, but the configuration does not enable it there",
                    "the scheduler never calls it",
                    "kplugin render-config (or enable it by hand)",
                )


CHECKS: list[Callable[[Context], None]] = [
    check_plugin_names,
    check_api_version,
    check_scheduler_names,
    check_lease,
    check_rbac,
    check_binary,
    check_args,
    check_weights,
    check_go_mod,
    check_generated,
    check_extension_points,
]


def run(project: Project, target: Target, config: Path | None = None, binary: Path | None = None) -> list[Finding]:
    ctx = Context(
        project=project,
        target=target,
        config_path=config or project.root / "deploy/scheduler-config.yaml",
        binary=binary or (project.root / "bin/kube-scheduler"),
        config_given=config is not None,
    )
    for check in CHECKS:
        check(ctx)
    unique: dict[Finding, None] = dict.fromkeys(ctx.findings)  # a bad node is met by several checks
    return list(unique)


def as_json(findings: list[Finding]) -> dict[str, Any]:
    return {
        "errors": sum(f.severity == ERROR for f in findings),
        "warnings": sum(f.severity == WARNING for f in findings),
        "notes": sum(f.severity == INFO for f in findings),
        "findings": [asdict(f) for f in findings],
    }
