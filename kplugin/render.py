"""``kplugin render-config``: the KubeSchedulerConfiguration of a project for a target
version, its inputs validated, optionally merged into an existing file or proven
against the project's real kube-scheduler binary."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kplugin import yamlio
from kplugin.errors import UsageError
from kplugin.project import Project
from kplugin.schedconfig import ARGS_DEFAULTS, MAX_WEIGHT, SchedulerConfig
from kplugin.spec import DNS1123_SUBDOMAIN, ExtensionPoint, validate_scheduler_name
from kplugin.versions import Target

FORMATS = ("config", "configmap", "helm-values")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


def qualified_name_problem(value: str) -> str | None:
    """The apimachinery IsQualifiedName rules: [prefix/]name, name at most 63 chars."""
    prefix, _, name = value.rpartition("/")
    if "/" in value and (not prefix or len(prefix) > 253 or not DNS1123_SUBDOMAIN.fullmatch(prefix)):
        return "has an invalid prefix (must be a DNS subdomain)"
    if not name or len(name) > 63 or not _QUALIFIED_NAME.fullmatch(name):
        return "is not a qualified name (alphanumerics, '-', '_', '.', at most 63, alphanumeric at both ends)"
    return None


def args_problems(plugin: str, args: Any, fields: dict[str, str]) -> list[tuple[str, str]]:
    """(field, problem) for args that would not decode strictly into the plugin's Args."""
    if not isinstance(args, dict):
        return [("", f"args for {plugin} must be a mapping, got {type(args).__name__}")]
    problems = []
    for key, value in args.items():
        kind = fields.get(str(key))
        if kind is None:
            known = ", ".join(sorted(fields)) or "none"
            problems.append((str(key), f"args for {plugin}: unknown field {key!r} (fields: {known})"))
        elif kind in {"string", "qualifiedName"} and not isinstance(value, str):
            problems.append((str(key), f"args for {plugin}: {key} must be a string, got {type(value).__name__}"))
        elif kind == "qualifiedName" and value and (why := qualified_name_problem(value)):
            problems.append((str(key), f"args for {plugin}: {key} {value!r} {why}"))
        elif kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
            problems.append((str(key), f"args for {plugin}: {key} must be an integer, got {type(value).__name__}"))
        elif kind == "bool" and not isinstance(value, bool):
            problems.append((str(key), f"args for {plugin}: {key} must be true or false"))
    return problems


def load_args(path: Path, project: Project) -> dict[str, dict[str, Any]]:
    """--args FILE: {Plugin: {field: value}}, or the args of a one-plugin project."""
    data = yamlio.load_file(path, "--args")
    names = [p.name for p in project.plugins]
    if isinstance(data, dict) and data and all(key in names for key in data):
        by_plugin = data
    elif len(names) == 1:
        by_plugin = {names[0]: data if data is not None else {}}
    else:
        raise UsageError(f"--args {path}: give the args per plugin, keyed by {', '.join(names)}")
    for plugin, args in by_plugin.items():
        problems = args_problems(plugin, args, project.args_fields.get(plugin, {}))
        if problems:
            raise UsageError(f"--args {path}: {problems[0][1]}")
    return {str(k): dict(v) for k, v in by_plugin.items()}


def parse_weights(values: Sequence[str], project: Project) -> dict[str, int]:
    weights = {}
    scorers = {p.name for p in project.plugins if p.has(ExtensionPoint.SCORE)}
    for value in values:
        name, sep, number = value.partition("=")
        if not sep:
            raise UsageError(f"--weight {value!r}: use PLUGIN=N, e.g. --weight {next(iter(scorers), 'Plugin')}=2")
        if name not in {p.name for p in project.plugins}:
            raise UsageError(f"--weight {value!r}: no plugin {name!r} in this project ({', '.join(sorted(scorers))})")
        if name not in scorers:
            raise UsageError(f"--weight {value!r}: {name} has no Score extension point")
        if not re.fullmatch(r"[0-9]+", number) or not 1 <= int(number) <= MAX_WEIGHT:
            raise UsageError(f"--weight {value!r}: the weight must be a whole number from 1 to {MAX_WEIGHT}")
        weights[name] = int(number)
    return weights


@dataclass(frozen=True)
class RenderRequest:
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


def build_config(request: RenderRequest) -> SchedulerConfig:
    """Validate every input and return the configuration to render."""
    project = request.project
    served = request.target.release.config_api_versions
    api_version = request.api_version or "v1"
    if api_version not in served:
        raise UsageError(
            f"--api-version {api_version}: not served by Kubernetes {request.target.version} "
            f"(served: {', '.join(served)})"
        )
    names = request.scheduler_names or (project.scheduler_name,)
    for name in names:
        validate_scheduler_name(name)
    if len(set(names)) != len(names):
        raise UsageError(f"--scheduler-name: {', '.join(names)} names a profile twice")
    percentage = request.percentage_of_nodes_to_score
    if percentage is not None and not 0 <= percentage <= 100:
        raise UsageError(f"--percentage-of-nodes-to-score {percentage}: must be from 0 to 100")
    args = (
        load_args(request.args_file, project)
        if request.args_file
        else {p.name: dict(ARGS_DEFAULTS) for p in project.plugins}
    )
    return SchedulerConfig(
        scheduler_names=tuple(names),
        plugins=project.plugins,
        api_version=api_version,
        leader_elect=request.leader_elect,
        weights=parse_weights(request.weights, project),
        args=args,
        multipoint=request.multipoint,
        disable_default=request.disable_default,
        percentage_of_nodes_to_score=percentage,
        kubeconfig=request.kubeconfig,
    )


def render(config: SchedulerConfig, project: Project, fmt: str) -> str:
    if fmt == "config":
        return yamlio.dump(config.document())
    if fmt == "configmap":
        from kplugin import manifests

        return yamlio.dump(manifests.configmap(project.name, config))
    if fmt == "helm-values":
        return yamlio.dump({"schedulerName": config.scheduler_name, "schedulerConfig": config.document()})
    raise UsageError(f"--format {fmt!r}: choose from {', '.join(FORMATS)}")


def merge(existing: Path, config: SchedulerConfig) -> str:
    """The existing file with this project's profiles, plugins and pluginConfig added or
    replaced; the user's comments, key order and other profiles are kept."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.util import load_yaml_guess_indent

    if not existing.is_file():
        raise UsageError(f"--merge {existing}: no such file")
    text = existing.read_text()
    try:
        _, indent, offset = load_yaml_guess_indent(text)
        yaml = YAML()
        yaml.preserve_quotes = True
        yaml.width = 4096
        yaml.indent(mapping=indent or 2, sequence=(indent or 2) + (offset or 0), offset=offset or 0)
        doc = yaml.load(text)
    except YAMLError as err:
        raise UsageError(f"--merge {existing} is not valid YAML{yamlio.describe_error(err)}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "KubeSchedulerConfiguration":
        raise UsageError(f"--merge {existing} is not a KubeSchedulerConfiguration")
    ours = {p.name for p in config.plugins}
    profiles = doc.setdefault("profiles", [])
    for name in config.scheduler_names:
        fresh = config.profile(name)
        current = next((p for p in profiles if p.get("schedulerName") == name), None)
        if current is None:
            profiles.append(fresh)
            continue
        plugins = current.setdefault("plugins", {})
        for point, section in fresh["plugins"].items():
            target = plugins.setdefault(point, {})
            for key in ("enabled", "disabled"):
                if key in section:
                    kept = [e for e in target.get(key, []) or [] if e.get("name") not in ours]
                    if key == "disabled":
                        kept = [e for e in kept if e.get("name") not in {x["name"] for x in section[key]}]
                    target[key] = kept + section[key]
        if fresh.get("pluginConfig"):
            kept = [c for c in current.get("pluginConfig", []) or [] if c.get("name") not in ours]
            current["pluginConfig"] = kept + fresh["pluginConfig"]
    out = io.StringIO()
    yaml.dump(doc, out)
    return out.getvalue()


def validate(binary: Path, text: str) -> tuple[bool, str]:
    """Load the config with the real kube-scheduler: (accepted, its exact error or 'ok')."""
    import tempfile

    from kplugin import proc

    with tempfile.TemporaryDirectory(prefix="kplugin-validate-") as tmp:
        config, written = Path(tmp) / "config.yaml", Path(tmp) / "written.yaml"
        config.write_text(text)
        cmd = [
            str(binary),
            "--config",
            str(config),
            "--write-config-to",
            str(written),
            "--secure-port=0",
            "--master=https://127.0.0.1:1",
        ]
        result = proc.probe(cmd)
        if result.returncode == 0 and written.is_file():
            return True, "accepted"
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        failed = [line for line in lines if "command failed" in line or "err=" in line]
        message = (failed or lines or ["no output"])[-1]
        match = re.search(r'err="(.*)"\s*$', message)
        return False, (match[1].replace('\\"', '"') if match else message.strip())
