"""What a project's plugins take as args, learned from the project's own Go code.

The plugin's Go code is the one source of truth for its Args: their fields, their
defaults, what is valid. kplugin learns them by building a small Go program
(``templates/_go/argsinfo.go``) against the project, outside its tree (through
``go build -overlay``), that calls each plugin's own args decoder (the one its
register.go passes to ``registry.RegisterArgs``): given no args it returns the
defaults, given the user's args it returns them defaulted and validated, or the
decoder's own error, exactly as the plugin's factory would in kube-scheduler.

The program is cached by a hash of the project's Go sources, go.mod and go.sum, so it
is built once per change of the code (seconds with Go's build cache warm).

Where the program cannot be built here (no Go, or no go.sum: a project made with
``--no-tidy``), kplugin still knows the defaults of Args it generated itself, as long as
the plugin's args.go is byte for byte what it generated; otherwise the user's args are
used as written, and the caller is told why they were not checked.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from kplugin.core import digest, proc, safefs, yamlio
from kplugin.core.errors import KpluginError, OperationError, ToolError, UsageError
from kplugin.core.progress import Progress
from kplugin.model.project import Project
from kplugin.model.spec import PluginSpec

ARGS_DIR = PurePosixPath("config/args")
_PROGRAM_DIR = "internal/kplugin-argsinfo"  # where the program appears to go build; never on disk
_MAIN = (f"./{_PROGRAM_DIR}",)


def args_file(plugin: PluginSpec) -> PurePosixPath:
    """The user's args for a plugin: config/args/<package>.yaml (theirs, never rewritten)."""
    return ARGS_DIR / f"{plugin.package}.yaml"


class ArgField(NamedTuple):
    """One field of a plugin's Args type, as the decoder program reports it (records here
    are NamedTuples: see kplugin.model.versions)."""

    name: str
    type: str
    go: str
    fields: tuple[ArgField, ...] = ()
    elem: ArgField | None = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> ArgField:
        return cls(
            name=str(raw.get("name", "")),
            type=str(raw.get("type", "")),
            go=str(raw.get("go", "")),
            fields=tuple(cls.from_json(f) for f in raw.get("fields") or ()),
            elem=cls.from_json(raw["elem"]) if raw.get("elem") else None,
        )


class PluginArgs(NamedTuple):
    """One plugin's Args as its Go code has them."""

    takes_args: bool
    type_name: str = ""
    fields: tuple[ArgField, ...] = ()
    defaults: dict[str, Any] | None = None
    defaults_error: str | None = None
    decoded: dict[str, Any] | None = None  # the args checked, defaulted by the plugin
    error: str | None = None  # the plugin's decoder's error for the args checked


class Unavailable(Exception):
    """The Go code cannot be run here; the message says why."""


# What the sample Args' SetDefaults sets (args.go in the template): the args of a plugin
# kplugin generates, as long as its args.go is what kplugin wrote. The integration tests
# read the same defaults from the Go code.
SAMPLE_ARGS_DEFAULTS: dict[str, Any] = {"resourceName": "cpu"}


def unchanged_sample_defaults(root: Path, plugin: PluginSpec, recorded: str | None) -> dict[str, Any] | None:
    """The sample Args' defaults when the plugin's args.go on disk is byte for byte what
    kplugin generated for it (its sha256 ``recorded`` in kplugin.yaml: so they are the
    code's defaults), else None. Here, not in scaffold, so that render-config does not
    import the generator."""
    if not plugin.args or recorded is None:
        return None
    try:
        on_disk = safefs.read_project_file(root, f"pkg/{plugin.package}/args.go")
    except KpluginError:
        return None
    if on_disk is None or digest.sha256_hex(on_disk) != recorded:
        return None
    return dict(SAMPLE_ARGS_DEFAULTS)


def _sources_digest(root: Path, module: str, packages: list[str], program: bytes) -> str:
    hasher = digest.sha256()
    for part in (program, module.encode(), "\0".join(packages).encode()):
        hasher.update(len(part).to_bytes(8, "big") + part)
    go = shutil.which("go")
    if go is not None:
        stat = os.stat(go)
        hasher.update(f"{go}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    files = [root / "go.mod", root / "go.sum"]
    for top in ("pkg", "internal"):
        base = root / top
        if base.is_dir() and not base.is_symlink():
            for directory, dirs, names in os.walk(base):
                dirs.sort()
                sources = [n for n in sorted(names) if n.endswith(".go") and not n.endswith("_test.go")]
                files += [Path(directory) / n for n in sources]
    for path in files:
        relative = path.relative_to(root).as_posix()
        data = safefs.read_project_file(root, relative) or b""
        hasher.update(relative.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    return hasher.hexdigest()


def _program(project: Project) -> bytes:
    from jinja2 import Environment, StrictUndefined

    from kplugin.generate.templating import templates_root

    source = (templates_root() / "_go" / "argsinfo.go").read_text()
    env = Environment(undefined=StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    packages = sorted(p.package for p in project.plugins)
    return env.from_string(source).render(module=project.module, packages=packages).encode()


@contextmanager
def _binary(project: Project, progress: Progress) -> Iterator[Path]:
    """The argsinfo program for the project's code as it is now, built when needed (in
    kplugin's cache; with the cache off, in a directory removed afterwards)."""
    from kplugin.core import cache

    root = project.root
    if proc.which("go") is None:
        raise Unavailable("Go is not on PATH")
    if safefs.lstat_mode(root / "go.sum") is None:
        raise Unavailable(f"{root / 'go.sum'} is missing (run go mod tidy)")
    program = _program(project)
    key = _sources_digest(root, project.module, sorted(p.package for p in project.plugins), program)
    home = cache.directory("argsinfo")
    if home is None:
        with tempfile.TemporaryDirectory(prefix="kplugin-argsinfo-") as own:
            yield _compile(root, program, Path(own) / "argsinfo", progress)
        return
    binary = home / key[:40] / "argsinfo"
    # one run at a time finds a build and marks it used, or prunes: a run never prunes
    # the build another has just found (the build itself runs outside the lock, whose
    # file is in the cache's own folder, the one known to be writable)
    with cache.exclusive(home / "builds"):
        found = binary.is_file() and _used(binary.parent)
        if not found:
            _prune(home)
    if not found:
        _compile(root, program, binary, progress)
    yield binary


def _compile(root: Path, program: bytes, binary: Path, progress: Progress) -> Path:
    from kplugin.core import golang

    progress("reading the plugins' Args from the Go code (go build, once per change of the code)")
    with tempfile.TemporaryDirectory(prefix="kplugin-argsinfo-src-") as tmp:
        main = Path(tmp) / "main.go"
        main.write_bytes(program)
        overlay = Path(tmp) / "overlay.json"
        overlay.write_text(json.dumps({"Replace": {str(root / _PROGRAM_DIR / "main.go"): str(main)}}))
        binary.parent.mkdir(parents=True, exist_ok=True)
        partial = binary.parent / f".argsinfo-{os.getpid()}"
        try:
            proc.run(
                # -trimpath and CGO_ENABLED=0 as kplugin build: the same build cache entries,
                # so reading the Args after a build (or before one) compiles no package twice;
                # -s -w as kplugin build too: no symbol table or DWARF, linked in 3/4 of the time
                ["go", "build", "-trimpath", "-ldflags=-s -w", "-overlay", str(overlay), "-o", str(partial), *_MAIN],
                cwd=root,
                env={
                    "GOFLAGS": "-mod=readonly",
                    "CGO_ENABLED": "0",
                    "GOWORK": "off",
                    **golang.build_env(root),
                },
                what="go build (the plugins' Args)",
            )
            os.replace(partial, binary)
        except ToolError as err:
            raise golang.compile_failure(err) from err
        finally:
            partial.unlink(missing_ok=True)
    return binary


# A build used this recently is never pruned: another kplugin run (a parallel CI job, a
# second terminal) may have just found it and be about to run it.
_IN_USE_SECONDS = 15 * 60


def _used(build: Path) -> bool:
    """Mark a cached build as just used (its folder's time), so pruning goes by last use;
    False when it is gone."""
    try:
        os.utime(build)
    except OSError:
        return False
    return True


def _prune(base: Path, keep: int = 6) -> None:
    """Keep the builds used last (each is tens of MB; one per change of the code): room
    for a new one beside the ``keep - 1`` used last, and any used in the last minutes."""
    now = time.time()
    used: list[tuple[float, Path]] = []
    try:
        builds = list(base.iterdir())
    except OSError:
        return  # the cache itself is gone: nothing to prune
    for build in builds:
        try:
            if build.is_dir():
                used.append((build.stat().st_mtime, build))
        except OSError:
            continue  # removed meanwhile (by hand: runs prune one at a time)
    used.sort(reverse=True)
    for last_use, build in used[keep - 1 :]:
        if now - last_use > _IN_USE_SECONDS:
            shutil.rmtree(build, ignore_errors=True)


def learn(
    project: Project, to_check: Mapping[str, Any] | None = None, progress: Progress = lambda _: None
) -> dict[str, PluginArgs]:
    """Each registered plugin's Args, and what its decoder makes of ``to_check`` (args by
    plugin name). Raises Unavailable when the Go code cannot be run here, and
    OperationError when it does not compile."""
    try:
        payload = json.dumps(dict(to_check or {}))
    except (TypeError, ValueError) as err:
        raise UsageError(f"args must be plain data (strings, numbers, lists, mappings): {err}") from None
    with _binary(project, progress) as binary:
        try:
            output = proc.run([str(binary)], stdin=payload, what="the plugins' args decoder", timeout=60, merge=False)
        except ToolError as err:
            raise OperationError(f"{err.summary}: {err.tail.splitlines()[-1] if err.tail else 'no output'}") from err
    raw = json.loads(output)
    return {
        name: PluginArgs(
            takes_args=bool(report.get("args")),
            type_name=str(report.get("type") or ""),
            fields=tuple(ArgField.from_json(f) for f in report.get("fields") or ()),
            defaults=report.get("defaults"),
            defaults_error=report.get("defaultsError"),
            decoded=report.get("decoded"),
            error=report.get("error"),
        )
        for name, report in sorted(raw.items())
    }


# --- the args a configuration carries --------------------------------------------------


def read_args_file(project: Project, plugin: PluginSpec) -> dict[str, Any] | None:
    """config/args/<package>.yaml as a mapping, None when there is none."""
    relative = args_file(plugin)
    data = safefs.read_project_file(project.root, relative.as_posix(), safefs.SMALL_FILE)
    if data is None:
        return None
    where = str(project.root / relative)
    value = yamlio.parse(safefs.decode(data, "args file", project.root / relative), where, path=relative)
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise UsageError(f"{where} must be a mapping of {plugin.name}'s args fields")
    return value


@dataclass
class ResolvedArgs:
    """The pluginConfig args of a rendered configuration, by plugin (no entry: the
    plugin takes no args), and notes for the user."""

    args: dict[str, dict[str, Any]] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    checked: bool = False  # decoded by the plugins' own Go code


def resolve(
    project: Project,
    given: Mapping[str, Any] | None = None,
    *,
    source: str = "",
    generated_defaults: Callable[[PluginSpec], dict[str, Any] | None] | None = None,
    progress: Progress = lambda _: None,
    run_go: bool = True,
) -> ResolvedArgs:
    """Each plugin's args for a configuration: ``given`` (by plugin, e.g. from --args,
    named ``source`` in errors) or else the plugin's args file, decoded and defaulted
    by the plugin's own Go code. ``generated_defaults`` returns the defaults of Args
    kplugin generated, where the code is still exactly what it generated (used when Go
    cannot run)."""
    user: dict[str, tuple[dict[str, Any], str]] = {}
    for plugin in project.plugins:
        if given is not None and plugin.name in given:
            user[plugin.name] = (dict(given[plugin.name] or {}), source)
        else:
            from_file = read_args_file(project, plugin)
            if from_file is not None:
                user[plugin.name] = (from_file, str(project.root / args_file(plugin)))
    unknown = sorted(set(given or {}) - {p.name for p in project.plugins})
    if unknown:
        raise UsageError(f"{source}: no plugin {unknown[0]!r} in this project")
    result = ResolvedArgs()
    try:
        if not run_go:
            raise Unavailable("not asked to run Go")
        learned = learn(project, {p.name: user.get(p.name, ({}, ""))[0] for p in project.plugins}, progress)
    except Unavailable as why:
        for plugin in project.plugins:
            values, _ = user.get(plugin.name, ({}, ""))
            defaults = generated_defaults(plugin) if generated_defaults is not None else None
            if defaults is not None:
                result.args[plugin.name] = {**defaults, **values}
            elif plugin.name in user:
                result.args[plugin.name] = values
        if run_go and any(values for values, _ in user.values()):
            result.notices.append(f"args not checked against the plugins' Go code ({why}): used as written")
        return result
    result.checked = True
    for plugin in project.plugins:
        report = learned.get(plugin.name)
        values, where = user.get(plugin.name, ({}, ""))
        if report is None:
            raise OperationError(
                f"plugin {plugin.name} is not registered: pkg/{plugin.package} does not call registry.Register "
                f"with its Name, or cmd/scheduler/plugins.go does not import it"
            )
        if not report.takes_args:
            if values:
                raise UsageError(
                    f"{where}: {plugin.name} takes no args (its register.go registers no args decoder); remove them"
                )
            continue
        if report.error is not None:
            raise UsageError(f"{where or plugin.name + ' (no args given)'}: {report.error}")
        result.args[plugin.name] = report.decoded or {}
    return result
