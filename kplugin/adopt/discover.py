"""What kplugin finds in a repository it is asked to adopt, and whether it can adopt it:
a repository it cannot adopt is one UsageError that says why and what kplugin needs."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from kplugin.adopt import files as repo_files
from kplugin.adopt import gomod, registry
from kplugin.adopt.gocode import Module
from kplugin.adopt.registry import Command, Plugin, Unread
from kplugin.core.errors import Setting, UsageError
from kplugin.model import layout
from kplugin.model.spec import registered_name_problem, validate_project_name, validate_scheduler_name
from kplugin.model.versions import Target, catalog, resolve, supported_range, supported_releases

_PIN = re.compile(r"v?(?P<major>\d+)\.(?P<minor>\d+)\.(?P<patch>\d+)(?P<pre>-[0-9A-Za-z.-]+)?")


class Adoption(NamedTuple):
    """What adopt found: what kplugin.yaml records, and what it could not use."""

    root: Path
    name: str
    module: str
    target: Target
    scheduler_name: str
    main: PurePosixPath  # the main package that builds the scheduler (relative directory)
    arguments: tuple[str, ...]  # the arguments before the scheduler's own flags (a subcommand)
    command: Command
    plugins: tuple[Plugin, ...]
    missing_replaces: tuple[str, ...]
    files: repo_files.Files
    unread: tuple[Unread, ...]

    @property
    def main_package(self) -> str:
        """The main package as go build takes it: ./cmd/scheduler, or . at the top."""
        return "." if str(self.main) == "." else f"./{self.main}"


def kubernetes_target(mod: gomod.GoMod, where: str) -> Target:
    """The Kubernetes version go.mod pins, as kplugin knows it; a pin outside the minors
    kplugin knows is refused, naming it."""
    pin = mod.kubernetes
    if pin is None:
        raise UsageError(
            f"{where} does not require {gomod.KUBERNETES}: kplugin adopts a module that builds kube-scheduler "
            f"from it (require {gomod.KUBERNETES} vX.Y.Z)"
        )
    match = _PIN.fullmatch(pin)
    oldest = supported_releases()[0]
    if match is None:
        raise UsageError(f"{where} pins {gomod.KUBERNETES} at {pin!r}, which is not a release (vX.Y.Z); pin a release")
    minor = (int(match["major"]), int(match["minor"]))
    if minor < (oldest.newest.major, oldest.newest.minor):
        raise UsageError(
            f"{where} pins {gomod.KUBERNETES} {pin} (Kubernetes {minor[0]}.{minor[1]}), older than {oldest.key}, "
            f"the oldest minor kplugin knows ({supported_range()}); move the repository to {oldest.key} first "
            "(its framework API and config apiVersions changed in between), then adopt it"
        )
    if f"{minor[0]}.{minor[1]}" not in catalog():
        raise UsageError(
            f"{where} pins {gomod.KUBERNETES} {pin}, newer than any minor kplugin knows ({supported_range()}); "
            "update kplugin"
        )
    return resolve(pin.removeprefix("v"), where=f"{where}: {gomod.KUBERNETES}")


def _command(commands: list[Command], where: Path) -> tuple[Command, list[Unread]]:
    official = [c for c in commands if not c.forked]
    if not official:
        if commands:
            fork = commands[0]
            raise UsageError(
                f"{where} builds its scheduler with a copy of the app package of its own ({fork.app}, "
                f"{fork.file.path}:{fork.line}): kplugin needs Kubernetes' {registry.APP_PACKAGE} (its "
                "NewSchedulerCommand with app.WithPlugin), which it can move across minors; a fork of it it cannot"
            )
        raise UsageError(
            f"{where} has no call of NewSchedulerCommand from {registry.APP_PACKAGE} in its Go code: kplugin "
            "adopts a repository that builds kube-scheduler with app.NewSchedulerCommand(app.WithPlugin(...))"
        )
    chosen = sorted(official, key=lambda c: (c.package.name != "main", str(c.file.path), c.line))[0]
    others = [Unread(f"NewSchedulerCommand at {c.file.path}:{c.line}", f"kplugin builds the one at {chosen.file.path}:"
                     f"{chosen.line}") for c in commands if c is not chosen]  # fmt: skip
    return chosen, others


def _main(module: Module, command: Command, where: Path) -> tuple[PurePosixPath, tuple[str, ...], list[Unread]]:
    """The main package that builds the command, and the arguments that reach it."""
    if command.package.name == "main":
        return command.package.directory, _arguments(module, command), []
    mains = module.mains_reaching(command.package)
    if not mains:
        raise UsageError(
            f"{where}: no main package of the module imports {command.package.import_path}, where "
            f"{command.file.path}:{command.line} makes the scheduler command; kplugin builds a main package"
        )
    others = [Unread(f"main package {m.import_path}", f"kplugin builds {mains[0].import_path}") for m in mains[1:]]
    return mains[0].directory, _arguments(module, command), others


def _arguments(module: Module, command: Command) -> tuple[str, ...]:
    """The word before the scheduler's flags: the command's name when the code adds it to
    a parent command (a cobra subcommand), else none (the binary's own command)."""
    if not registry.attached(module, command):
        return ()
    return (command.renamed or registry.SCHEDULER_USE,)


def _plugins(module: Module, command: Command, target: Target, where: Path) -> tuple[list[Plugin], list[Unread]]:
    found = registry.registrations(module, command)
    if not found:
        raise UsageError(
            f"{where}: {command.file.path}:{command.line} calls NewSchedulerCommand without app.WithPlugin: "
            "no plugin to adopt (kube-scheduler rebuilt as it is); register each plugin with app.WithPlugin(name, New)"
        )
    plugins: list[Plugin] = []
    unread: list[Unread] = []
    for registration in found:
        read = registry.plugin(module, command, registration, (target.version.major, target.version.minor))
        if isinstance(read, Unread):
            unread.append(read)
        elif any(p.name == read.name for p in plugins):
            unread.append(Unread(f"WithPlugin({registration.name_expression}, ...) at line {read.line}",
                                 f"registers {read.name} a second time"))  # fmt: skip
        elif (problem := registered_name_problem(read.name)) is not None:
            unread.append(Unread(f"plugin {read.name!r}", f"its name {problem}"))
        else:
            plugins.append(read)
    if not plugins:
        raise UsageError(f"{where}: kplugin cannot read any plugin the scheduler registers: {unread[0].what}: "
                         f"{unread[0].reason}")  # fmt: skip
    return plugins, unread


def project_name(module_path: str, given: str | None) -> str:
    """The project's name: --name, else the module path's last element made a DNS label."""
    if given is not None:
        return validate_project_name(given, Setting.PROJECT_NAME)
    last = re.sub(r"^v\d+$", "", module_path.rstrip("/").rsplit("/", 1)[-1]) or module_path.split("/")[-2]
    derived = re.sub(r"[^a-z0-9-]+", "-", last.lower()).strip("-")[:63].strip("-")
    try:
        return validate_project_name(derived, "the name made from the module path")
    except UsageError:
        raise UsageError(
            f"cannot make a project name of the module path {module_path!r}; give one with {Setting.PROJECT_NAME} NAME"
        ) from None


def discover(root: Path, name: str | None = None) -> Adoption:
    """Read the repository at ``root``; UsageError when it cannot be adopted."""
    mod = gomod.read(root)
    target = kubernetes_target(mod, str(root / "go.mod"))
    module = Module(root, mod.module)
    command, unread = _command(registry.commands(module), root)
    main, arguments, more = _main(module, command, root)
    plugins, unusable = _plugins(module, command, target, root)
    found = repo_files.scan(root)
    project = project_name(mod.module, name)
    names = {n for c in layout.served(found.configs, target) for n in c.scheduler_names}
    names.discard("default-scheduler")
    scheduler = names.pop() if len(names) == 1 else project  # the configuration's, when it has a single one
    return Adoption(
        root=root,
        name=project,
        module=mod.module,
        target=target,
        scheduler_name=validate_scheduler_name(scheduler, "the scheduler name of the repository's configuration"),
        main=main,
        arguments=arguments,
        command=command,
        plugins=tuple(plugins),
        missing_replaces=mod.missing_replaces(target.release.staging_modules),
        files=found,
        unread=(*unread, *more, *unusable, *found.unread),
    )
