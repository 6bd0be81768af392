"""Where a repository builds its kube-scheduler, and what it registers there.

The scheduler command is a call of ``NewSchedulerCommand`` of Kubernetes' own
``cmd/kube-scheduler/app``; each ``WithPlugin(name, factory)`` of that package in the same
file registers a plugin. A plugin is then read from its factory: the package it lives in,
the type it returns (the one whose methods name its extension points) and the Args it
decodes (a type assertion on the factory's runtime.Object, or DecodeInto)."""

from __future__ import annotations

import re
from typing import NamedTuple

from kplugin.adopt.gocode import (
    Function,
    GoFile,
    GoPackage,
    Module,
    function,
    methods,
    split_arguments,
    string_value,
    types_with,
)
from kplugin.generate.gosource import close
from kplugin.model.points import ExtensionPoint, available, method

APP_PACKAGE = "k8s.io/kubernetes/cmd/kube-scheduler/app"
# the name NewSchedulerCommand's cobra command has (its Use) unless the code renames it
SCHEDULER_USE = "kube-scheduler"


class Command(NamedTuple):
    """A call of NewSchedulerCommand: where, through which app package, in which function."""

    package: GoPackage
    file: GoFile
    line: int
    app: str  # the import path of the app package it calls
    alias: str  # the name that package is used by in the file
    arguments: str  # the call's arguments, as written
    renamed: str | None  # cmd.Use = "..." after the call, where the code renames the command
    variable: str | None  # the variable the command is assigned to, if any
    function: str | None  # the function the call is in

    @property
    def forked(self) -> bool:
        return self.app != APP_PACKAGE


class Registration(NamedTuple):
    """One WithPlugin(name, factory) of the scheduler command's file."""

    file: GoFile
    line: int
    name_expression: str
    factory_expression: str
    name: str | None  # what the name expression stands for, where the code says


class Plugin(NamedTuple):
    """A registered plugin, read from its factory."""

    name: str
    package: str  # the factory's import path
    factory: str  # the factory function's name
    type_name: str  # the plugin's Go type
    points: tuple[ExtensionPoint, ...]
    args_type: str | None  # import path and type name (path.Type) of its Args, None: it takes none
    line: int  # of its registration


class Unread(NamedTuple):
    """Something adopt found but cannot use, and why."""

    what: str
    reason: str


_CALL = re.compile(r"(?<![\w.])(?P<alias>\w+)\.NewSchedulerCommand\s*\(")
_WITH_PLUGIN = r"(?<![\w.]){alias}\.WithPlugin\s*\("


def commands(module: Module) -> list[Command]:
    """Every NewSchedulerCommand call of the module, sorted by file and line."""
    found = []
    for package in module.packages.values():
        for file in package.files:
            for call in _CALL.finditer(file.shape):
                app = file.imports.get(call["alias"], "")
                if not app.endswith("/app"):
                    continue
                end = close(file.shape, call.end())
                arguments = file.code[call.end() : end - 1]
                variable = _bound(file, call)
                renamed = _renamed(file, call, variable)
                found.append(
                    Command(package, file, file.line(call.start()), app, call["alias"], arguments, renamed, variable,
                            _enclosing(file, call.start()))
                )  # fmt: skip
    return sorted(found, key=lambda c: (str(c.file.path), c.line))


def _bound(file: GoFile, call: re.Match[str]) -> str | None:
    """The variable the command is assigned to (``cmd := app.NewSchedulerCommand(``)."""
    start = file.code.rfind("\n", 0, call.start()) + 1
    bound = re.match(r"\s*(?:var\s+)?(\w+)\s*:?=\s*$", file.code[start : call.start()])
    return bound[1] if bound else None


def _renamed(file: GoFile, call: re.Match[str], variable: str | None) -> str | None:
    """The name the code gives the command it got (``cmd.Use = "scheduler"``), if any."""
    if variable is None:
        return None
    renamed = re.search(rf"(?<![\w.]){re.escape(variable)}\.Use\s*=\s*\"(?P<use>[^\"\n]+)\"", file.code[call.end() :])
    return renamed["use"].split()[0] if renamed else None


def _enclosing(file: GoFile, offset: int) -> str | None:
    """The name of the top-level function (or method) the offset is in."""
    found = None
    for match in re.finditer(r"^func\s*(?:\([^)]*\)\s*)?(\w+)\s*[(\[]", file.shape[:offset], re.M):
        found = match[1]
    return found


def attached(module: Module, command: Command) -> bool:
    """Whether the command is added to a parent command (cobra's AddCommand) with the
    variable it is held in or the function that makes it: then it runs as a subcommand."""
    names = [n for n in (command.function,) if n]
    for package in module.packages.values():
        for file in package.files:
            for call in re.finditer(r"\.AddCommand\s*\(", file.shape):
                argument = file.shape[call.end() : close(file.shape, call.end())]
                if any(re.search(rf"(?<![\w])(?:\w+\.)?{re.escape(n)}\s*\(", argument) for n in names):
                    return True
                if file is command.file and command.variable and re.search(rf"\b{command.variable}\b", argument):
                    return True
                if file is command.file and re.search(
                    rf"\b{re.escape(command.alias)}\.NewSchedulerCommand\s*\(", argument
                ):
                    return True  # root.AddCommand(app.NewSchedulerCommand(...))
    return False


def registrations(module: Module, command: Command) -> list[Registration]:
    """The WithPlugin calls of the command's file (the call's own arguments, or a slice of
    options built beside it), in source order."""
    file = command.file
    found = []
    for call in re.finditer(_WITH_PLUGIN.format(alias=re.escape(command.alias)), file.shape):
        end = close(file.shape, call.end())
        arguments = split_arguments(file, call.end(), end - 1)
        if len(arguments) != 2:
            continue
        name_expression, factory_expression = arguments[0][1], arguments[1][1]
        name = string_value(module, command.package, file, name_expression)
        found.append(Registration(file, file.line(call.start()), name_expression, factory_expression, name))
    return found


def _factory(module: Module, command: Command, expression: str) -> tuple[GoPackage, Function] | str:
    """The package and function a factory expression names, or why it cannot be read."""
    match = re.fullmatch(r"(?:(?P<qualifier>\w+)\.)?(?P<name>[A-Za-z_]\w*)", expression)
    if match is None:
        return "its factory is not a function named by the code (a literal or a call); name a function instead"
    package: GoPackage | None = command.package
    if match["qualifier"]:
        imported = command.file.imports.get(match["qualifier"], "")
        package = module.package(imported)
        if package is None:
            return f"its factory is in {imported or match['qualifier']}, outside the repository's module"
    assert package is not None
    found = function(package, match["name"])
    if found is None:
        return f"no function {match['name']} in {package.import_path}"
    return package, found


# what a factory does with its runtime.Object: asserts its type, or decodes it into a value
_ASSERTED = r"(?<![\w.]){param}\s*\.\(\s*\*\s*(?:(?P<qualifier>\w+)\.)?(?P<type>[A-Z]\w*)\s*\)"
_DECODED = r"\bDecodeInto\s*\(\s*{param}\s*,\s*&?\s*(?P<var>\w+)\s*\)"
_HANDED = r"(?<![\w.])(?P<name>[A-Za-z_]\w*)\s*\([^()]*(?<![\w.]){param}\b"
_OBJECT_PARAMETER = re.compile(r"(?P<name>\w+)\s+(?:\w+\.)?Object\b")


def _type_path(package: GoPackage, file: GoFile, qualifier: str | None, name: str) -> str:
    return f"{file.imports.get(qualifier, qualifier) if qualifier else package.import_path}.{name}"


def _variable_type(body: str, variable: str) -> tuple[str | None, str] | None:
    """The type a variable of a function body is declared with (var x T, x := T{}, x := &T{},
    x := new(T))."""
    v = re.escape(variable)
    for pattern in (
        rf"\bvar\s+{v}\s+\*?(?:(?P<q>\w+)\.)?(?P<t>[A-Z]\w*)",
        rf"\b{v}\s*:?=\s*&?(?:(?P<q>\w+)\.)?(?P<t>[A-Z]\w*)\s*\{{",
        rf"\b{v}\s*:?=\s*new\(\s*(?:(?P<q>\w+)\.)?(?P<t>[A-Z]\w*)\s*\)",
    ):
        found = re.search(pattern, body)
        if found is not None:
            return found["q"], found["t"]
    return None


def args_type(package: GoPackage, found: Function, depth: int = 0) -> str | None:
    """The Args type a factory reads from its runtime.Object parameter (path.Type), through
    the helper functions of its package it hands that object to (two levels); None: it
    reads none."""
    parameter = _OBJECT_PARAMETER.search(found.parameters)
    if parameter is None:
        return None
    param, body = re.escape(parameter["name"]), found.body
    asserted = re.search(_ASSERTED.format(param=param), body)
    if asserted is not None:
        return _type_path(package, found.file, asserted["qualifier"], asserted["type"])
    decoded = re.search(_DECODED.format(param=param), body)
    if decoded is not None and (declared := _variable_type(body, decoded["var"])) is not None:
        return _type_path(package, found.file, declared[0], declared[1])
    if depth < 2:
        for call in re.finditer(_HANDED.format(param=param), body):
            helper = function(package, call["name"])
            if helper is not None and helper != found and (inner := args_type(package, helper, depth + 1)):
                return inner
    return None


def _plugin_type(package: GoPackage, found: Function) -> str | None:
    """The type a factory returns: the one of its package that has a Name method and is
    built in the factory's body, else the package's only such type."""
    named = types_with(package, "Name")
    built = [t for t in named if re.search(rf"&?\b{re.escape(t)}\s*\{{", found.body)]
    if len(built) == 1:
        return built[0]
    return named[0] if len(named) == 1 else None


def plugin(module: Module, command: Command, registration: Registration, minor: tuple[int, int]) -> Plugin | Unread:
    """The plugin a registration adds, or why adopt cannot read it."""
    call = f"WithPlugin({registration.name_expression}, {registration.factory_expression})"
    what = f"{call} at {registration.file.path}:{registration.line}"
    if registration.name is None:
        return Unread(what, f"the code does not say which name {registration.name_expression} stands for "
                            "(a string constant of the repository is needed)")  # fmt: skip
    factory = _factory(module, command, registration.factory_expression)
    if isinstance(factory, str):
        return Unread(what, factory)
    package, found = factory
    type_name = _plugin_type(package, found)
    if type_name is None:
        return Unread(what, f"cannot tell which type of {package.import_path} {registration.factory_expression} "
                            "returns (no single type with a Name method built there)")  # fmt: skip
    declared = methods(package, type_name)
    points = tuple(p for p in ExtensionPoint if available(p, minor) and method(p) in declared)
    if not points:
        return Unread(what, f"{package.import_path}.{type_name} declares no extension point's method")
    factory_name = registration.factory_expression.rpartition(".")[2]
    return Plugin(
        registration.name, package.import_path, factory_name, type_name, points, args_type(package, found),
        registration.line,
    )  # fmt: skip
