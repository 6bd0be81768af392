"""Where an adopted repository keeps what kplugin needs (kplugin.yaml's ``adopted``): the
main package that builds its kube-scheduler, the arguments before the scheduler's own
flags (a subcommand of a larger binary), where each plugin is registered from, and the
repository's configuration files, CRDs, Dockerfiles, Makefile, charts and manifests.
A project kplugin made has no layout: its files are where the project template puts them.

kplugin.yaml is untrusted input: every path stays inside the repository, every argument
and Go name is checked before anything uses it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

from kplugin.core import yamlio
from kplugin.core.errors import UsageError
from kplugin.model.versions import Target

_ARGUMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}", re.ASCII)
_IMPORT_PATH = re.compile(r"[A-Za-z0-9][A-Za-z0-9._~/-]{0,299}", re.ASCII)
_DIRECTORY = re.compile(r"\.|[A-Za-z0-9_][A-Za-z0-9._/-]{0,299}", re.ASCII)  # it goes into a Dockerfile
_DIR = "a package directory (letters, digits, . _ - /)"
_GO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}", re.ASCII)
_API_VERSION = re.compile(r"[a-z0-9.-]{1,100}/v[0-9a-z]{1,20}", re.ASCII)
_KEYS = {"main", "arguments", "plugins", "configs", "crds", "dockerfiles", "makefile", "charts", "manifests"}
_PLUGIN_KEYS = {"package", "factory", "type", "args"}
_LISTS = ("crds", "dockerfiles", "charts", "manifests")


class Registration(NamedTuple):
    """Where a plugin comes from in the repository's Go code."""

    package: str  # import path of its factory's package
    factory: str  # the factory function
    type_name: str  # the plugin's Go type
    args: str | None  # its Args type, import path and name (path.Type); None: none


class ConfigRecord(NamedTuple):
    path: str
    api_version: str


class _Versioned(Protocol):
    @property
    def api_version(self) -> str: ...


V = TypeVar("V", bound=_Versioned)


def served(configs: Sequence[V], target: Target) -> list[V]:
    """The configuration files in an apiVersion ``target`` serves, in their recorded order:
    the first is the one kplugin runs, shows and deploys."""
    return [c for c in configs if c.api_version.rpartition("/")[2] in target.release.config_api_versions]


def scheduler_configuration(text: str, where: Path) -> dict[str, Any] | None:
    """The KubeSchedulerConfiguration of a configuration file (the first, when it holds
    several documents); None: it has none."""
    documents = yamlio.parse(text, f"configuration file {where}", path=where, every_document=True)
    return next((d for d in documents if isinstance(d, dict) and d.get("kind") == "KubeSchedulerConfiguration"), None)


class Layout(NamedTuple):
    main: str  # relative directory of the main package ("." at the top)
    arguments: tuple[str, ...]
    plugins: dict[str, Registration]
    configs: tuple[ConfigRecord, ...] = ()
    crds: tuple[str, ...] = ()
    dockerfiles: tuple[str, ...] = ()
    makefile: str | None = None
    charts: tuple[str, ...] = ()
    manifests: tuple[str, ...] = ()

    @property
    def main_package(self) -> str:
        """The main package as go build takes it."""
        return "." if self.main == "." else f"./{self.main}"

    def document(self) -> dict[str, Any]:
        """kplugin.yaml's ``adopted`` mapping (keys in a fixed order)."""
        plugins = {}
        for name, r in sorted(self.plugins.items()):
            entry = {"package": r.package, "factory": r.factory, "type": r.type_name}
            plugins[name] = entry | ({"args": r.args} if r.args else {})
        document: dict[str, Any] = {"main": self.main, "arguments": list(self.arguments), "plugins": plugins}
        document["configs"] = [{"path": c.path, "apiVersion": c.api_version} for c in self.configs]
        for key in _LISTS:
            document[key] = list(getattr(self, key))
        if self.makefile:
            document["makefile"] = self.makefile
        return document


Fail = Callable[[str, str], UsageError]


def _path(value: Any, key: str, fail: Fail, directory: bool = False) -> str:
    from kplugin.core import safefs

    if directory and value == ".":
        return "."
    if not isinstance(value, str) or (problem := safefs.relative_problem(value)) is not None:
        problem = "is not a string" if not isinstance(value, str) else problem
        raise fail(key, f"{problem}; only paths inside the repository are allowed")
    return value


def _match(value: Any, pattern: re.Pattern[str], key: str, fail: Fail, what: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise fail(key, f"{str(value)[:80]!r} is not {what}")
    return value


def _registration(name: str, entry: Any, fail: Fail) -> Registration:
    at = f"adopted.plugins.{name[:60]}"
    if not isinstance(entry, dict) or set(entry) - _PLUGIN_KEYS or not {"package", "factory", "type"} <= set(entry):
        raise fail(at, f"must be a mapping of {', '.join(sorted(_PLUGIN_KEYS))} (args optional)")
    args = entry.get("args")
    if args is not None:
        package, _, type_name = str(args).rpartition(".")
        _match(package, _IMPORT_PATH, f"{at}.args", fail, "an import path and a type (path.Type)")
        _match(type_name, _GO_NAME, f"{at}.args", fail, "an import path and a type (path.Type)")
    return Registration(
        package=_match(entry["package"], _IMPORT_PATH, f"{at}.package", fail, "a Go import path"),
        factory=_match(entry["factory"], _GO_NAME, f"{at}.factory", fail, "a Go function name"),
        type_name=_match(entry["type"], _GO_NAME, f"{at}.type", fail, "a Go type name"),
        args=args,
    )


def parse(raw: Any, fail: Fail) -> Layout:
    """kplugin.yaml's ``adopted`` mapping, checked."""
    if not isinstance(raw, dict):
        raise fail("adopted", "must be a mapping (what kplugin adopt recorded)")
    unknown = sorted(str(k) for k in raw if k not in _KEYS)
    if unknown:
        raise fail(f"adopted.{unknown[0][:60]}", f"is not a field of adopted (fields: {', '.join(sorted(_KEYS))})")
    if "main" not in raw or "plugins" not in raw:
        raise fail("adopted", "needs main and plugins")
    arguments = raw.get("arguments") or []
    if not isinstance(arguments, list):
        raise fail("adopted.arguments", "must be a list of words")
    plugins = raw["plugins"]
    if not isinstance(plugins, dict) or not plugins:
        raise fail("adopted.plugins", "must be a mapping of plugin names to where each is registered from")
    configs = raw.get("configs") or []
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        raise fail("adopted.configs", "must be a list of {path, apiVersion}")
    lists = {}
    for key in _LISTS:
        value = raw.get(key) or []
        if not isinstance(value, list):
            raise fail(f"adopted.{key}", "must be a list of paths")
        lists[key] = tuple(_path(v, f"adopted.{key}", fail) for v in value)
    makefile = raw.get("makefile")
    return Layout(
        main=_match(_path(raw["main"], "adopted.main", fail, directory=True), _DIRECTORY, "adopted.main", fail, _DIR),
        arguments=tuple(_match(a, _ARGUMENT, "adopted.arguments", fail, "a subcommand word") for a in arguments),
        plugins={str(n): _registration(str(n), e, fail) for n, e in plugins.items()},
        configs=tuple(
            ConfigRecord(
                _path(c.get("path"), "adopted.configs", fail),
                _match(c.get("apiVersion"), _API_VERSION, "adopted.configs", fail, "an apiVersion"),
            )
            for c in configs
        ),
        makefile=None if makefile is None else _path(makefile, "adopted.makefile", fail),
        **lists,
    )
