"""``kplugin render-config``: the KubeSchedulerConfiguration of a project for a target
version, its inputs validated, optionally merged into an existing file or proven
against the project's real kube-scheduler binary."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

from kplugin.core import yamlio
from kplugin.core.errors import OperationError, Setting, UsageError
from kplugin.model.project import Project
from kplugin.model.schedconfig import MAX_WEIGHT, SchedulerConfig
from kplugin.model.spec import IN_TREE_PLUGINS, PluginSpec, validate_scheduler_name
from kplugin.model.versions import Target


class Format(StrEnum):
    """render-config --format: the configuration itself, in a ConfigMap, or as Helm values."""

    CONFIG = "config"
    CONFIGMAP = "configmap"
    HELM_VALUES = "helm-values"


FORMATS = tuple(Format)


class ConfigFile(NamedTuple):
    """An adopted repository's configuration file: the one kplugin uses, its text, and
    which others it passed over (a note)."""

    path: str
    text: str
    passed_over: tuple[str, ...]


def own_config(project: Project, target: Target) -> ConfigFile:
    """The first configuration file recorded by kplugin adopt in an apiVersion ``target``
    serves, read as every project file is (a regular file inside, never a link)."""
    from kplugin.core import safefs
    from kplugin.model import layout

    assert project.layout is not None
    served = layout.served(project.layout.configs, target)
    if not served:
        configs = project.layout.configs
        recorded = ", ".join(f"{c.path} ({c.api_version})" for c in configs) or "none"
        raise UsageError(
            f"{project.root} has no KubeSchedulerConfiguration file in an apiVersion Kubernetes {target.version} "
            f"serves (recorded: {recorded}); kplugin upgrade moves old ones to v1"
        )
    chosen = served[0]
    data = safefs.read_project_file(project.root, chosen.path)
    if data is None:
        raise UsageError(f"{project.root / chosen.path} is missing; kplugin refresh records the files again")
    text = safefs.decode(data, "configuration file", project.root / chosen.path)
    return ConfigFile(chosen.path, text, tuple(c.path for c in served[1:]))


def load_args(path: Path, project: Project) -> dict[str, dict[str, Any]]:
    """--args FILE: {Plugin: {field: value}}, or the args of a one-plugin project. Whether
    the values are right is the plugins' own decoders' call (see argsinfo)."""
    data = yamlio.load_file(path, Setting.ARGS)
    names = [p.name for p in project.plugins]
    if isinstance(data, dict) and data and all(isinstance(key, str) and key in names for key in data):
        by_plugin = data
    elif len(names) == 1:
        by_plugin = {names[0]: data if data is not None else {}}
    else:
        raise UsageError(f"{Setting.ARGS} {path}: give the args per plugin, keyed by {', '.join(names)}")
    for plugin, args in by_plugin.items():
        if args is None:
            by_plugin[plugin] = args = {}
        if not isinstance(args, dict) or not all(isinstance(k, str) for k in args):
            raise UsageError(f"{Setting.ARGS} {path}: the args of {plugin} must be a mapping of field names to values")
    return {str(k): dict(v) for k, v in by_plugin.items()}


def parse_weights(values: Sequence[str], project: Project) -> dict[str, int]:
    weights = {}
    scorers = {p.name for p in project.plugins if p.weighted}
    for value in values:
        if len(value) > 200:
            raise UsageError(
                f"{Setting.WEIGHT} {value[:40]!r}...: too long; use PLUGIN=N with N from 1 to {MAX_WEIGHT}"
            )
        name, sep, number = value.partition("=")
        if not sep:
            raise UsageError(
                f"{Setting.WEIGHT} {value!r}: use PLUGIN=N, e.g. {Setting.WEIGHT} {next(iter(scorers), 'Plugin')}=2"
            )
        if name not in {p.name for p in project.plugins}:
            raise UsageError(
                f"{Setting.WEIGHT} {value!r}: no plugin {name!r} in this project ({', '.join(sorted(scorers))})"
            )
        if name not in scorers:
            raise UsageError(f"{Setting.WEIGHT} {value!r}: {name} has no Score or PlacementScore extension point")
        if not re.fullmatch(r"[0-9]{1,10}", number, re.ASCII) or not 1 <= int(number) <= MAX_WEIGHT:
            raise UsageError(f"{Setting.WEIGHT} {value!r}: the weight must be a whole number from 1 to {MAX_WEIGHT}")
        weights[name] = int(number)
    return weights


class RenderRequest(NamedTuple):
    """What to render (a NamedTuple: see kplugin.model.versions)."""

    project: Project
    target: Target
    api_version: str | None = None
    scheduler_names: tuple[str, ...] = ()
    multipoint: bool = False
    weights: tuple[str, ...] = ()
    args_file: Path | None = None
    leader_elect: bool = True
    disable_default: tuple[str, ...] = ()
    percentage_of_nodes_to_score: int | None = None
    kubeconfig: str | None = None
    run_go: bool = True  # learn the args from the Go code (False: only what kplugin generated)


def compose_config(
    request: RenderRequest, progress: Callable[[str], None] = lambda _: None
) -> tuple[SchedulerConfig, tuple[str, ...]]:
    """Validate every input and return the configuration to render, and notes for the
    user. The plugins' args (--args, else their args files) are decoded by the plugins'
    own Go code where it can run here; the notes say when it could not."""
    project = request.project
    served = request.target.release.config_api_versions
    api_version = request.api_version if request.api_version is not None else "v1"  # '' is a mistake
    if api_version not in served:
        raise UsageError(
            f"{Setting.API_VERSION} {api_version!r}: not served by Kubernetes {request.target.version} "
            f"(served: {', '.join(served)})"
        )
    names = request.scheduler_names or (project.scheduler_name,)
    for name in names:
        validate_scheduler_name(name)
    if len(set(names)) != len(names):
        raise UsageError(f"{Setting.SCHEDULER_NAME}: {', '.join(names)} names a profile twice")
    ours = {p.name for p in project.plugins}
    for name in request.disable_default:
        if name in ours:
            raise UsageError(
                f"{Setting.DISABLE_DEFAULT} {name}: that is this project's own plugin; it is enabled by design"
            )
        if name != "*" and name not in IN_TREE_PLUGINS:
            raise UsageError(
                f"{Setting.DISABLE_DEFAULT} {name[:60]!r}: not a default plugin of kube-scheduler; use '*' or one of "
                f"{', '.join(sorted(IN_TREE_PLUGINS))}"
            )
    if request.kubeconfig is not None and not request.kubeconfig.strip():
        raise UsageError(
            f"{Setting.KUBECONFIG} '' is empty; give the kubeconfig's path, or leave it out for in-cluster access"
        )
    percentage = request.percentage_of_nodes_to_score
    if percentage is not None and not 0 <= percentage <= 100:
        raise UsageError(f"{Setting.PERCENTAGE_OF_NODES} {percentage}: must be from 0 to 100")
    weights = parse_weights(request.weights, project)
    from kplugin.generate import argsinfo

    given = load_args(request.args_file, project) if request.args_file else None
    resolved = argsinfo.resolve(
        project,
        given,
        source=f"{Setting.ARGS} {request.args_file}",
        generated_defaults=lambda plugin: _sample_defaults(project, plugin),
        progress=progress,
        run_go=request.run_go,
    )
    args = resolved.args
    config = SchedulerConfig(
        scheduler_names=tuple(names),
        plugins=project.plugins,
        api_version=api_version,
        leader_elect=request.leader_elect,
        weights=weights,
        args=args,
        multipoint=request.multipoint,
        disable_default=request.disable_default,
        percentage_of_nodes_to_score=percentage,
        kubeconfig=request.kubeconfig,
    )
    return config, tuple(resolved.notices)


def _sample_defaults(project: Project, plugin: PluginSpec) -> dict[str, Any] | None:
    from kplugin.generate import argsinfo

    return argsinfo.unchanged_sample_defaults(project.root, plugin, project.args_digests.get(plugin.name))


def render(config: SchedulerConfig, project: Project, fmt: Format) -> str:
    match fmt:
        case Format.CONFIG:
            return yamlio.dump(config.document())
        case Format.CONFIGMAP:
            from kplugin.model import manifests

            return yamlio.dump(manifests.configmap(project.name, config))
        case Format.HELM_VALUES:
            return yamlio.dump({"schedulerName": config.scheduler_name, "schedulerConfig": config.document()})


def merge(existing: Path, config: SchedulerConfig) -> str:
    """The existing file with this project's profiles, plugins and pluginConfig added or
    replaced; the user's comments, key order, line endings and other profiles are kept.
    Every part of the file merge touches is checked for its type first."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.util import load_yaml_guess_indent

    from kplugin.core import safefs

    where = f"{Setting.MERGE} {existing}"
    original = safefs.read_text(existing, Setting.MERGE)
    # parsed with LF endings: ruamel keeps a comment's '\r', which would come out doubled
    text = original.replace("\r\n", "\n")
    yamlio.parse(text, where, path=existing)  # plain data only: no aliases, no deep nesting, valid YAML
    try:
        try:
            _, indent, offset = load_yaml_guess_indent(text)
        except (IndexError, ValueError, TypeError):  # its guess trips on e.g. an empty '- ' item
            indent, offset = None, None
        yaml = YAML()
        yaml.preserve_quotes = True
        yaml.width = 4096
        yaml.indent(mapping=indent or 2, sequence=(indent or 2) + (offset or 0), offset=offset or 0)
        doc = yaml.load(text)
    except YAMLError as err:
        raise UsageError(f"{where} is not valid YAML{yamlio.describe_error(err)}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "KubeSchedulerConfiguration":
        raise UsageError(f"{where} is not a KubeSchedulerConfiguration")
    shape = _Shape(where)
    ours = {p.name for p in config.plugins}
    profiles = shape.seq(doc, "profiles", "profiles")
    for i, profile in enumerate(profiles):
        shape.mapping(profile, f"profiles[{i}]")
        if not isinstance(profile.get("schedulerName", ""), str):
            raise shape.fail(
                f"profiles[{i}].schedulerName", f"must be a string, not {yamlio.describe(profile['schedulerName'])}"
            )
    for name in config.scheduler_names:
        fresh = config.profile(name)
        index, current = next(((i, p) for i, p in enumerate(profiles) if p.get("schedulerName") == name), (-1, None))
        if current is None:
            profiles.append(fresh)
            continue
        at = f"profiles[{index}]"
        plugins = shape.child_mapping(current, "plugins", f"{at}.plugins")
        for point, section in fresh["plugins"].items():
            target = shape.child_mapping(plugins, point, f"{at}.plugins.{point}")
            for key in ("enabled", "disabled"):
                if key in section:
                    entries = shape.named_entries(target, key, f"{at}.plugins.{point}.{key}")
                    kept = [e for e in entries if e.get("name") not in ours]
                    if key == "disabled":
                        kept = [e for e in kept if e.get("name") not in {x["name"] for x in section[key]}]
                    target[key] = kept + section[key]
        if fresh.get("pluginConfig"):
            entries = shape.named_entries(current, "pluginConfig", f"{at}.pluginConfig")
            current["pluginConfig"] = [c for c in entries if c.get("name") not in ours] + fresh["pluginConfig"]
    out = io.StringIO()
    yaml.dump(doc, out)
    merged = out.getvalue()
    return merged.replace("\n", "\r\n") if "\r\n" in original else merged


class _Shape:
    """Type checks of the parts of a user's configuration that merge edits."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, at: str, problem: str) -> UsageError:
        return UsageError(f"{self.where}: {at} {problem}")

    def mapping(self, value: Any, at: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(at, f"must be a mapping, not {yamlio.describe(value)}")
        return value

    def child_mapping(self, parent: dict[str, Any], key: str, at: str) -> dict[str, Any]:
        if parent.get(key) is None:
            parent[key] = {}
        return self.mapping(parent[key], at)

    def seq(self, parent: dict[str, Any], key: str, at: str) -> list[Any]:
        if key not in parent:
            parent[key] = []
        value = parent[key]
        if value is None:  # written out as null: a mistake to point out, not an empty list to fill
            raise self.fail(at, "is null; give a list, or leave the key out")
        if not isinstance(value, list):
            raise self.fail(at, f"must be a list, not {yamlio.describe(value)}")
        return value

    def named_entries(self, parent: dict[str, Any], key: str, at: str) -> list[Any]:
        entries = self.seq(parent, key, at)
        for j, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise self.fail(f"{at}[{j}]", f"must be a mapping with a string name, not {yamlio.describe(entry)}")
        return entries


def check_binary(binary: Path, what: str = Setting.BINARY) -> Path:
    """A kube-scheduler to run: an existing, executable regular file (never looked up
    on PATH: ``x`` means ``./x``)."""
    import os
    import stat

    try:
        mode = os.stat(binary).st_mode
    except OSError:
        raise UsageError(
            f"{what} {binary}: no such file; build it with kplugin build {Setting.BUILDER} local"
        ) from None
    if not stat.S_ISREG(mode):
        raise UsageError(f"{what} {binary} is not a regular file; give the kube-scheduler binary")
    if not os.access(binary, os.X_OK):
        raise UsageError(f"{what} {binary} is not executable; chmod +x it")
    return binary.absolute()


def validate(
    binary: Path,
    text: str,
    shown: str = "the configuration",
    args: tuple[str, ...] = (),
    prefix: tuple[str, ...] = (),
    patience: float = 120.0,
) -> tuple[bool | None, str]:
    """Load the config with the real kube-scheduler, started with ``args`` too (its
    feature gates), after ``prefix`` (an adopted binary's subcommand): (accepted, its exact
    error or 'accepted'). The scheduler reads a temporary copy; its message names ``shown``
    instead. It parses and checks the file, then builds every profile, which calls each
    plugin's factory, and exits; with no API server to reach (``--master`` is a closed
    port), a factory that waits for one (an informer's cache sync) never returns: after
    ``patience`` seconds the verdict is None (undecided) and the message says so."""
    import tempfile

    from kplugin.core import proc

    with tempfile.TemporaryDirectory(prefix="kplugin-validate-") as tmp:
        config, written = Path(tmp) / "config.yaml", Path(tmp) / "written.yaml"
        config.write_text(text)
        cmd = [
            str(binary.absolute()),
            *prefix,
            "--config",
            str(config),
            "--write-config-to",
            str(written),
            "--secure-port=0",
            "--master=https://127.0.0.1:1",
            *args,
        ]
        try:
            result = proc.probe(cmd, timeout=patience)
        except proc.TimedOut:
            return None, (
                f"kube-scheduler did not finish loading {shown} within {patience:.0f}s with no API server to reach: "
                "a plugin's factory waits for one (an informer's cache sync, say)"
            )
        if result.returncode == 0 and written.is_file():
            return True, "accepted"
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        failed = [line for line in lines if "command failed" in line or "err=" in line]
        # cobra's own "Error: ..." before the usage text it prints after it
        cobra = [line.removeprefix("Error: ") for line in lines if line.startswith("Error: ")]
        message = (failed or cobra[-1:] or lines or ["no output"])[-1]
        match = re.search(r'err="(.*)"\s*$', message)
        found = match[1].replace('\\"', '"') if match else message.strip()
        return False, found.replace(str(config), shown).replace(tmp, "<kplugin's temporary directory>")


# How long a run's check waits for the scheduler to load its configuration: an adopted
# repository's plugins' factories may wait for an API server (the check is then
# undecided and the run goes on), kplugin's wait for nothing.
ADOPTED_PATIENCE, PATIENCE = 10.0, 120.0


def check_run_config(
    project: Project, scheduler: Path, document: dict[str, Any], shown: str, flags: tuple[str, ...], then: str
) -> str | None:
    """A run's configuration (e2e's, each of bench's profiles) loaded by the project's own
    scheduler, before anything starts: its refusal an error in one line. Undecided (an
    adopted repository's plugin waits for an API server in its factory), what the run
    says instead is returned, ending with ``then``."""
    adopted = project.layout is not None
    patience = ADOPTED_PATIENCE if adopted else PATIENCE
    text = yamlio.dump(document)
    accepted, message = validate(scheduler, text, shown, flags, project.scheduler_arguments, patience)
    if accepted is None and adopted:
        return f"{message}; {then}"
    if accepted is None:
        raise OperationError(message)
    if not accepted:
        raise OperationError(f"kube-scheduler {project.version} rejects {shown}: {message}")
    return None
