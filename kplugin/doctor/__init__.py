"""``kplugin doctor``: the checks of what silently breaks scheduler plugins in production.

Each check yields Problems, each naming a rule of the catalog (doctor.rules: a stable id,
a severity, why it breaks and how to fix it) and where (file:line) and what exactly is
wrong. The core never prints; the CLI shows a table or JSON and exits 1 on any error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kplugin.core import digest, elf, safefs, yamlio
from kplugin.core.errors import OperationError, UsageError
from kplugin.doctor.rules import BY_ID, ERROR, INFO, RULES, WARNING, Problem, Rule
from kplugin.model import manifests
from kplugin.model.project import Project
from kplugin.model.schedconfig import CONFIG_GROUP, DEFAULT_LEASE, MAX_WEIGHT
from kplugin.model.spec import IN_TREE_PLUGINS, PluginSpec, validate_plugin_name
from kplugin.model.versions import Target

__all__ = ["ERROR", "INFO", "RULES", "WARNING", "Finding", "Rule", "as_json", "run"]


@dataclass(frozen=True)
class Finding:
    rule: str
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
    # what the file helpers (text, load, mapping...) found, besides what the checks yield
    problems: list[Problem] = field(default_factory=list)
    _yaml_cache: dict[Path, Any] = field(default_factory=dict)

    def rel(self, path: Path) -> str:
        candidates = [path.absolute()]  # a symlink in the project by its own name
        with suppress(OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
            candidates.append(path.resolve())
        for candidate in candidates:
            if candidate.is_relative_to(self.project.root):
                return str(candidate.relative_to(self.project.root))
        return str(path)

    def report(self, rule: str, path: Path, line: int | None, what: str, **params: Any) -> None:
        self.problems.append(Problem(rule, path, line, what, **params))

    def finding(self, problem: Problem) -> Finding:
        rule = BY_ID[problem.rule]
        why, fix = rule.why.format(**problem.params), rule.fix.format(**problem.params)
        return Finding(rule.id, rule.check, rule.severity, self.rel(problem.path), problem.line, problem.what, why, fix)

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
            self.report("unreadable-file", path, None, str(err))
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
                    yamlio.parse(text, str(self.rel(path)), path=path, every_document=many)  # plain data, not deep
                    yaml = YAML()
                    self._yaml_cache[key] = list(yaml.load_all(text)) if many else yaml.load(text)
                except UsageError as err:
                    self.report("invalid-yaml", path, None, str(err))
                except YAMLError as err:
                    mark = getattr(err, "problem_mark", None)
                    self.report("invalid-yaml", path, mark.line + 1 if mark else None, "not valid YAML")
        return self._yaml_cache[key]

    def mapping(self, value: Any, path: Path, line: int | None, what: str) -> dict[Any, Any]:
        """``value`` when it is a mapping (or missing: empty); else a finding and {}."""
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        self.report(
            "wrong-type",
            path,
            line,
            f"{what} must be a mapping, not {yamlio.describe(value)}",
            field=what,
            kind="a mapping",
        )
        return {}

    def sequence(self, value: Any, path: Path, line: int | None, what: str) -> list[Any]:
        """``value`` when it is a list (or missing: empty); else a finding and []."""
        if value is None:
            return []
        if isinstance(value, list):
            return value
        self.report(
            "wrong-type", path, line, f"{what} must be a list, not {yamlio.describe(value)}", field=what, kind="a list"
        )
        return []

    def string(self, value: Any, path: Path, line: int | None, what: str, default: str) -> str | None:
        """``value`` when it is a string (``default`` when missing); else a finding and None."""
        if value is None:
            return default
        if isinstance(value, str):
            return value
        self.report(
            "wrong-type",
            path,
            line,
            f"{what} must be a string, not {yamlio.describe(value)}",
            field=what,
            kind="a string (quote it)",
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


def check_plugin_names(ctx: Context) -> Iterator[Problem]:
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
            yield Problem("plugin-name-invalid", meta, None, str(err))
        source = project.root / "pkg" / plugin.package
        found = None
        for go_file in sorted(source.glob("*.go")) if source.is_dir() and not source.is_symlink() else []:
            text = ctx.text(go_file) or ""
            match = re.search(r'^const Name = "([^"]*)"', text, re.M)
            if match:
                found = (go_file, match[1], text[: match.start()].count("\n") + 1)
        if found is None:
            yield Problem(
                "plugin-name-missing",
                source,
                None,
                f"no `const Name` found for plugin {plugin.name}",
                name=plugin.name,
                source=source,
            )
        elif found[1] != plugin.name:
            yield Problem(
                "plugin-name-mismatch",
                found[0],
                found[2],
                f"Name() is {found[1]!r} but kplugin.yaml and the config say {plugin.name!r}",
            )
        if f'"{project.module}/pkg/{plugin.package}"' not in import_text:
            yield Problem(
                "plugin-not-imported",
                imports,
                None,
                f"plugin package pkg/{plugin.package} is not imported",
                module=project.module,
                package=plugin.package,
                imports=ctx.rel(imports),
            )
    known = ours | IN_TREE_PLUGINS
    for i, profile in enumerate(_profiles(ctx)):
        for point, kind, entry, entries, index in _plugin_entries(ctx, profile):
            name = str(entry.get("name", ""))
            if name == "*" and kind == "disabled":
                yield Problem(
                    "disabled-all",
                    ctx.config_path,
                    line_of(entries, index),
                    f"profile {i}: {point}.disabled '*' turns off every default plugin at {point}",
                )
            elif name and name not in known:
                yield Problem(
                    "plugin-unregistered",
                    ctx.config_path,
                    line_of(entries, index),
                    f"plugin {name!r} at {point}.{kind} is not registered in this scheduler",
                    ours=", ".join(sorted(ours)),
                )
        for j, entry, configs in _plugin_configs(ctx, profile):
            name = str(entry.get("name", ""))
            if name not in known:
                yield Problem(
                    "pluginconfig-unregistered",
                    ctx.config_path,
                    line_of(configs, j),
                    f"pluginConfig for {name!r}, which is not registered",
                    ours=", ".join(sorted(ours)),
                )


def check_api_version(ctx: Context) -> Iterator[Problem]:
    """2. config apiVersion served by the target kube-scheduler."""
    config = ctx.config
    if not isinstance(config, dict):
        yield Problem("config-missing", ctx.config_path, None, "no scheduler configuration")
        return
    api = str(config.get("apiVersion", ""))
    group, _, version = api.partition("/")
    served = ctx.target.release.config_api_versions
    if group != CONFIG_GROUP or version not in served:
        yield Problem(
            "api-version",
            ctx.config_path,
            line_of(config, "apiVersion"),
            f"apiVersion {api!r} is not served by kube-scheduler {ctx.target.version}",
            served=", ".join(f"{CONFIG_GROUP}/{v}" for v in served),
            group=CONFIG_GROUP,
        )


def check_scheduler_names(ctx: Context) -> Iterator[Problem]:
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
            yield Problem(
                "scheduler-name-mismatch",
                pod_file,
                line_of(spec, "schedulerName"),
                f"sample pod uses schedulerName {name!r}, the config has {', '.join(sorted(names))}",
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
            yield Problem("configmap-unreadable", cm_file, line_of(data, manifests.CONFIG_FILE), str(err))
            differs = False
        if differs:
            yield Problem(
                "configmap-stale",
                cm_file,
                line_of(data, manifests.CONFIG_FILE),
                "the ConfigMap's scheduler-config.yaml differs from deploy/scheduler-config.yaml",
            )


def _plain(node: Any) -> Any:
    import io

    from ruamel.yaml import YAML

    out = io.StringIO()
    YAML().dump(node, out)
    return YAML(typ="safe").load(out.getvalue())


def check_lease(ctx: Context) -> Iterator[Problem]:
    """4. the leader-election lease is not the default scheduler's."""
    config = ctx.config
    if not isinstance(config, dict):
        return
    election = ctx.mapping(
        config.get("leaderElection"), ctx.config_path, line_of(config, "leaderElection"), "leaderElection"
    )
    elect = election.get("leaderElect", True)
    if not isinstance(elect, bool):
        yield Problem(
            "leader-elect-type",
            ctx.config_path,
            line_of(election, "leaderElect"),
            f"leaderElection.leaderElect must be true or false, not {yamlio.describe(elect)}",
        )
        return
    if elect is False:
        return
    name, namespace = (
        ctx.string(election.get(key), ctx.config_path, line_of(election, key), f"leaderElection.{key}", default)
        for key, default in (("resourceName", DEFAULT_LEASE), ("resourceNamespace", "kube-system"))
    )
    if name == DEFAULT_LEASE and namespace == "kube-system":
        yield Problem(
            "default-lease",
            ctx.config_path,
            line_of(election, "resourceName") or line_of(config, "leaderElection"),
            "leader election uses the default scheduler's lease kube-system/kube-scheduler",
            name=ctx.project.scheduler_name,
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


def check_rbac(ctx: Context) -> Iterator[Problem]:
    """5. RBAC covers what this version's scheduler reads, and its own lease."""
    path, rules = _rules(ctx)
    if not rules:
        yield Problem("rbac-missing", path, None, "no RBAC rules found")
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
            yield Problem(
                "rbac-rules",
                path,
                None,
                f"the ClusterRole misses {', '.join(missing[:4])}{' …' if len(missing) > 4 else ''}",
                version=version,
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
            yield Problem("rbac-lease", path, None, f"no rule lets the scheduler update its lease {name!r}", name=name)


def check_binary(ctx: Context) -> Iterator[Problem]:
    """6. the built binary is statically linked and for the right architecture."""
    binary = ctx.binary
    if binary is None or not binary.is_file():
        return
    try:
        info = elf.inspect(binary)
    except (elf.NotElf, OSError, IndexError) as err:
        yield Problem("binary-unreadable", binary, None, str(err))
        return
    if not info.static:
        yield Problem("binary-dynamic", binary, None, "the binary is dynamically linked")
    from kplugin.build import host_arch

    if info.arch != host_arch():
        yield Problem("binary-arch", binary, None, f"the binary is for {info.arch}, this machine is {host_arch()}")


def check_args(ctx: Context) -> Iterator[Problem]:
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
                yield Problem(
                    "args-not-mapping",
                    ctx.config_path,
                    line_of(entry, "args") or line_of(configs, j),
                    f"pluginConfig args of {name} must be a mapping, not {yamlio.describe(args)}",
                    name=name,
                )
                continue
            entries.append((name, args, ctx.config_path, line_of(configs, j)))
    for plugin in ctx.project.plugins:
        path = ctx.project.root / argsinfo.args_file(plugin)
        try:
            values = argsinfo.read_args_file(ctx.project, plugin)
        except UsageError as err:
            yield Problem("args-file-invalid", path, None, str(err))
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
                yield Problem("args-unexpected", path, line, f"args for {name}, which takes none", name=name)
            elif report.error is not None:
                yield Problem("args-invalid", path, line, report.error, type=report.type_name or name + "Args")
    except argsinfo.Unavailable as why:
        yield Problem(
            "args-unchecked",
            ctx.project.root / argsinfo.ARGS_DIR,
            None,
            f"pluginConfig args not checked against the plugins' Go code: {why}",
        )
    except OperationError as err:
        yield Problem(
            "plugins-do-not-build",
            ctx.project.root / "pkg",
            None,
            str(err) + "".join(f"; {d}" for d in err.details[:1]),
        )


def check_weights(ctx: Context) -> Iterator[Problem]:
    """8. score weights valid."""
    for profile in _profiles(ctx):
        for point, kind, entry, entries, index in _plugin_entries(ctx, profile):
            if kind != "enabled" or point not in {"score", "multiPoint"} or "weight" not in entry:
                continue
            weight = entry["weight"]
            name = entry.get("name")
            if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0 or weight > MAX_WEIGHT:
                yield Problem(
                    "weight-invalid",
                    ctx.config_path,
                    line_of(entries, index),
                    f"{name}: weight {weight!r} is not a whole number from 1 to {MAX_WEIGHT}",
                )
            elif weight == 0:
                yield Problem(
                    "weight-zero",
                    ctx.config_path,
                    line_of(entries, index),
                    f"{name}: weight 0 is silently treated as 1",
                )


def check_go_mod(ctx: Context) -> Iterator[Problem]:
    """9. go.mod pins consistent: k8s.io/kubernetes and every staging module at one version."""
    path = ctx.project.root / "go.mod"
    if not path.is_file():
        yield Problem("go-mod-missing", path, None, "go.mod is missing")
        return
    lines = (ctx.text(path) or "").splitlines()
    version = ctx.project.version
    require = next((i for i, line in enumerate(lines) if re.search(r"\bk8s\.io/kubernetes v", line)), None)
    if require is None or f"k8s.io/kubernetes {version.tag}" not in lines[require]:
        yield Problem(
            "go-mod-require",
            path,
            require + 1 if require is not None else None,
            f"k8s.io/kubernetes is not required at {version.tag} (kplugin.yaml's version)",
        )
    replaced = {}
    for i, line in enumerate(lines):
        match = re.match(r"\s*(k8s\.io/[\w.-]+)\s+=>\s+(k8s\.io/[\w.-]+)\s+(\S+)", line)
        if match:
            replaced[match[1]] = (match[3], i + 1)
    for module in ctx.project.target.release.staging_modules:
        pin = replaced.get(module)
        if pin is None:
            yield Problem(
                "go-mod-replace-missing", path, None, f"no replace for {module}", module=module, tag=version.staging_tag
            )
        elif pin[0] != version.staging_tag:
            yield Problem(
                "go-mod-replace-version",
                path,
                pin[1],
                f"{module} is pinned at {pin[0]}, not {version.staging_tag}",
                tag=version.staging_tag,
            )


def check_generated(ctx: Context) -> Iterator[Problem]:
    """10. generated files as kplugin wrote them (kplugin.yaml records their sha256)."""

    for name, recorded in sorted(ctx.project.generated.items()):
        path = ctx.project.root / name
        try:
            data = safefs.read_project_file(ctx.project.root, name)
        except UsageError as err:
            yield Problem("generated-unreadable", path, None, str(err))
            continue
        if data is None:
            yield Problem("generated-missing", path, None, f"generated file {name} is missing")
        elif digest.sha256_hex(data) != recorded:
            yield Problem("generated-edited", path, None, f"generated file {name} was edited by hand")


def check_extension_points(ctx: Context) -> Iterator[Problem]:
    """11. the extension points in kplugin.yaml are those the code implements and the
    configuration enables (kplugin generates the adapter and config from kplugin.yaml)."""
    from kplugin.generate.addplugin import methods_in_code
    from kplugin.model.spec import ExtensionPoint

    meta = ctx.project.root / "kplugin.yaml"
    by_config: dict[str, dict[str, int | None]] = {}  # plugin -> enabled point -> its entry's line
    for profile in _profiles(ctx):
        for point, kind, entry, entries, i in _plugin_entries(ctx, profile):
            if kind == "enabled":
                by_config.setdefault(str(entry.get("name", "")), {}).setdefault(point, line_of(entries, i))
    for plugin in ctx.project.plugins:
        try:
            in_code = methods_in_code(ctx.project, plugin)
        except UsageError as err:
            yield Problem("code-unreadable", ctx.project.root / "pkg" / plugin.package, None, str(err))
            continue
        for point, where in sorted(in_code.items()):
            if not plugin.has(point):
                file, _, line = where.rpartition(":")
                yield Problem(
                    "point-not-listed",
                    ctx.project.root / file,
                    int(line),
                    f"{plugin.name} implements {point.go_name} in its code, but kplugin.yaml does not list {point}",
                    plugin=plugin.name,
                    point=point,
                )
        for point in plugin.extension_points:
            if point not in in_code:
                yield Problem(
                    "point-not-implemented",
                    meta,
                    _listed_line(ctx, meta, plugin.name, point),
                    f"kplugin.yaml lists {point} for {plugin.name}, but pkg/{plugin.package} has no "
                    f"{point.go_name} method on {plugin.name}",
                    point=point,
                )
        enabled = by_config.get(plugin.name)
        if enabled is None or "multiPoint" in enabled:  # multiPoint: every point the plugin implements
            continue
        for config_point in sorted(enabled):
            configured = next((p for p in ExtensionPoint if p.config_name == config_point), None)
            if configured is not None and not plugin.has(configured):
                yield Problem(
                    "point-not-enabled-in-code",
                    ctx.config_path,
                    enabled[config_point],
                    f"the configuration enables {plugin.name} at {config_point}, which kplugin.yaml does not list",
                    plugin=plugin.name,
                    point=configured,
                )
        for point in plugin.extension_points:
            if point.config_name and point.config_name not in enabled:
                yield Problem(
                    "point-not-enabled",
                    ctx.config_path,
                    None,
                    f"{plugin.name} implements {point.go_name}, but the configuration does not enable it there",
                )


def _listed_line(ctx: Context, meta: Path, plugin: str, point: str) -> int | None:
    """The line of kplugin.yaml that lists ``point`` for ``plugin`` (kplugin.yaml was
    validated on load: only its line numbers are read here)."""
    from kplugin.model.spec import point_word

    doc = ctx.load(meta)
    plugins = doc.get("plugins") if isinstance(doc, dict) else None
    for entry in plugins if isinstance(plugins, list) else []:
        points = entry.get("extensionPoints") if isinstance(entry, dict) and entry.get("name") == plugin else None
        for i, item in enumerate(points if isinstance(points, list) else []):
            if isinstance(item, str) and point_word(item) == point:  # Filter, pre-filter: as kplugin.yaml reads them
                return line_of(points, i)
    return None


# What the framework removed or deprecated, as --api native code would spell it (layer
# code goes through internal/fw, which kplugin keeps current): pattern, minor from which
# it applies, rule, what to write instead.
API_CHANGES: tuple[tuple[str, str, str, str], ...] = (
    (r"\b(?:framework|fwk)\.(?:QueueAfterBackoff|QueueImmediately)\b", "1.29", "api-removed",
     "return Queue (and an error) from QueueingHintFn"),
    (r"\bframework\.(?:Status|Code|CycleState|NodeInfo|PodInfo|QueuedPodInfo|ClusterEvent|ClusterEventWithHint|"
     r"NewStatus|AsStatus|QueueingHint|QueueingHintFn)\b", "1.34", "api-removed",
     "these moved to k8s.io/kube-scheduler/framework (fwk); or move the plugin to --api layer"),
    (r"\bframework\.(?:Handle|Plugin|FilterPlugin|ScorePlugin|PreFilterPlugin|PreScorePlugin|QueueSortPlugin|"
     r"ReservePlugin|PermitPlugin|PreBindPlugin|BindPlugin|PostBindPlugin|PostFilterPlugin|PreEnqueuePlugin|"
     r"EnqueueExtensions|NodeScoreList|PreFilterResult)\b", "1.35", "api-removed",
     "these moved to k8s.io/kube-scheduler/framework (fwk); or move the plugin to --api layer"),
    (r"\b(?:framework|fwk)\.(?:MaxNodeScore|MinNodeScore)\b", "1.36", "api-deprecated", "use MaxScore and MinScore"),
)  # fmt: skip


def _plugin_sources(ctx: Context, plugin: PluginSpec) -> list[tuple[Path, str]]:
    """The plugin's own Go files (not tests, not kplugin's zz_generated ones) and their text."""
    directory = ctx.project.root / "pkg" / plugin.package
    if not directory.is_dir() or directory.is_symlink():
        return []
    found = []
    for path in sorted(directory.glob("*.go")):
        if not path.name.endswith("_test.go") and not path.name.startswith("zz_generated"):
            text = ctx.text(path)
            if text is not None:
                found.append((path, text))
    return found


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def events_without_hints(text: str, plugin: str) -> list[int]:
    """The lines of the events a plugin's EventsToRegister registers without a
    QueueingHintFn (read from its source: each {Event: ...} literal of the function)."""
    start = re.search(rf"^func \(\w+ \*?{re.escape(plugin)}\) EventsToRegister\(", text, re.M)
    if start is None:
        return []
    end = re.compile(r"^}", re.M).search(text, start.end())
    body_end = end.start() if end else len(text)
    lines = []
    for event in re.finditer(r"\{\s*Event\s*:", text[start.end() : body_end]):
        at = start.end() + event.start()
        depth, i = 0, at
        while i < body_end:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        if "QueueingHintFn" not in text[at:i]:
            lines.append(_line(text, at))
    return lines


def check_framework(ctx: Context) -> Iterator[Problem]:
    """12. what the target minor's framework expects of a plugin: QueueingHints where its
    scheduling queue uses them, SignPod where it batches pods, none of the API it removed."""
    from kplugin.model.spec import ExtensionPoint

    facts = ctx.target.facts
    minor = (ctx.target.version.major, ctx.target.version.minor)
    signing = (ExtensionPoint.PRE_FILTER, ExtensionPoint.FILTER, ExtensionPoint.PRE_SCORE, ExtensionPoint.SCORE)
    for plugin in ctx.project.plugins:
        sources = _plugin_sources(ctx, plugin)
        if facts.hints_on_by_default:
            for path, text in sources:
                for line in events_without_hints(text, plugin.name):
                    yield Problem(
                        "hints-missing", path, line,
                        f"{plugin.name} registers an event without a QueueingHintFn, and Kubernetes "
                        f"{ctx.target.version} uses hints ({facts.queueing_hints})",
                    )  # fmt: skip
        if facts.sign_pod and any(plugin.has(p) for p in signing) and "SignPod" not in _methods(sources, plugin):
            declared = re.compile(rf"^type {re.escape(plugin.name)} struct", re.M)
            where = next(((p, _line(t, m.start())) for p, t in sources if (m := declared.search(t))), None)
            yield Problem(
                "signpod-missing",
                where[0] if where else ctx.project.root / "pkg" / plugin.package,
                where[1] if where else None,
                f"{plugin.name} is a {'/'.join(str(p) for p in signing if plugin.has(p))} plugin without SignPod: "
                f"Kubernetes {ctx.target.version} schedules its profile pod by pod",
            )  # fmt: skip
        if ctx.project.api == "native":
            for pattern, since, rule, fix in API_CHANGES:
                if minor < tuple(int(x) for x in since.split(".")):
                    continue
                for path, text in sources:
                    for match in re.finditer(pattern, text):
                        yield Problem(
                            rule, path, _line(text, match.start()),
                            f"{match[0]} is {'gone' if rule == 'api-removed' else 'deprecated'} from {since}",
                            fix=fix,
                        )  # fmt: skip


def _methods(sources: list[tuple[Path, str]], plugin: PluginSpec) -> set[str]:
    receiver = re.compile(rf"^func \(\w+ \*?{re.escape(plugin.name)}\) (\w+)\(", re.M)
    return {m[1] for _, text in sources for m in receiver.finditer(text)}


CHECKS: list[Callable[[Context], Iterable[Problem]]] = [
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
    check_framework,
]


def run(project: Project, target: Target, config: Path | None = None, binary: Path | None = None) -> list[Finding]:
    ctx = Context(
        project=project,
        target=target,
        config_path=config or project.root / "deploy/scheduler-config.yaml",
        binary=binary or (project.root / "bin/kube-scheduler"),
        config_given=config is not None,
    )
    found: list[Finding] = []
    for check in CHECKS:
        for problem in check(ctx):
            found.extend(ctx.finding(p) for p in ctx.problems)  # in the order they were met
            ctx.problems.clear()
            found.append(ctx.finding(problem))
        found.extend(ctx.finding(p) for p in ctx.problems)
        ctx.problems.clear()
    return list(dict.fromkeys(found))  # a bad node is met by several checks


def list_rules() -> list[Rule]:
    return list(RULES)


def as_json(findings: list[Finding]) -> dict[str, Any]:
    return {
        "errors": sum(f.severity == ERROR for f in findings),
        "warnings": sum(f.severity == WARNING for f in findings),
        "notes": sum(f.severity == INFO for f in findings),
        "findings": [asdict(f) for f in findings],
    }
