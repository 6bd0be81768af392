"""kplugin's command line: a thin layer over the library; errors map to exit codes here.

Exit codes: 0 success, 1 the operation failed, 2 bad usage or bad input.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from typing import Annotated, Any, NamedTuple

import click
import typer

from kplugin import __version__
from kplugin.cli import state

app = typer.Typer(
    name="kplugin",
    help="Scaffold, configure, build and test out-of-tree Kubernetes scheduler plugins.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from kplugin.cli.console import out

        out(f"kplugin {__version__}\n")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    """Scaffold, configure, build and test out-of-tree Kubernetes scheduler plugins."""
    from kplugin.cli.console import note
    from kplugin.core import golang

    state.debug = state.debug or debug
    golang.announce_with(note)  # "using go1.27.3 (GOTOOLCHAIN)": one line, when a version needs a newer Go


class Command(NamedTuple):
    module: str  # the module that declares it (imported only when the command runs)
    summary: str  # the first line of its docstring, for the top-level help (a test keeps them equal)


# Command modules register themselves on import; only the invoked one is imported
# (building every command's parameters costs more start-up than the rest of kplugin), and
# listing the commands in the top-level help needs none of their modules.
COMMANDS = {
    "new": Command("kplugin.cli.new", "Generate a complete scheduler plugin project."),
    "adopt": Command(
        "kplugin.cli.adopt",
        "Make an existing scheduler-plugin repository a kplugin project: read it, write kplugin.yaml.",
    ),
    "build": Command(
        "kplugin.cli.build", "Build the project's kube-scheduler (static) and its image, then verify the binary."
    ),
    "render-config": Command(
        "kplugin.cli.render_config", "Render the KubeSchedulerConfiguration for the project and a Kubernetes version."
    ),
    "doctor": Command(
        "kplugin.cli.doctor", "Find what silently breaks scheduler plugins in production. Exit 1 on any error."
    ),
    "versions": Command("kplugin.cli.versions", "The Kubernetes versions kplugin generates for."),
    "add": Command(
        "kplugin.cli.add",
        "Add to an existing project: a plugin, an extension point of a plugin, or a kind of its own API.",
    ),
    "upgrade": Command(
        "kplugin.cli.upgrade", "Move the project to another Kubernetes version, keeping the plugin code as it is."
    ),
    "refresh": Command(
        "kplugin.cli.upgrade",
        "Rewrite the generated files from the current Args and RBAC rules, at the project's own version.",
    ),
    "e2e": Command(
        "kplugin.cli.e2e",
        "Run the project's scheduler against a real local control plane and a scenario of nodes and pods.",
    ),
    "snapshot": Command(
        "kplugin.cli.snapshot",
        "Export a real cluster's scheduling state (nodes, pods, volumes, DRA, pod groups) as an e2e scenario.",
    ),
    "bench": Command(
        "kplugin.cli.bench",
        "Measure what the project's plugins cost the scheduler: throughput, latency, CPU, against a baseline.",
    ),
}

__all__ = ["COMMANDS", "Command", "app", "main"]


def register(args: list[str]) -> None:
    """Import the command module ``args`` names. For a bare --version nothing; for the
    top-level help (or a word that is no command) parameterless stand-ins that only
    carry the commands' names and summaries."""
    import importlib

    # main() may run more than once in a process (tests): stand-ins never shadow commands
    app.registered_commands = [c for c in app.registered_commands if c.callback is not _listed_only]
    words = [a for a in args if not a.startswith("-")]
    bare_version = not words and "--version" in args and "--help" not in args
    if words and words[0] in COMMANDS:
        importlib.import_module(COMMANDS[words[0]].module)
    elif not bare_version:
        real = {c.name for c in app.registered_commands}
        for name, command in COMMANDS.items():
            if name not in real:
                app.command(name, help=command.summary)(_listed_only)


def _listed_only() -> None:  # pragma: no cover - stands in for a command in the help only
    raise RuntimeError("command module not imported")


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the app and turn every error into one line and a code."""
    args = list(argv if argv is not None else sys.argv[1:])
    state.debug = "--debug" in args or bool(os.environ.get("KPLUGIN_DEBUG"))
    code = 0
    try:
        register(args)
        command = typer.main.get_command(app)
        _refuse_empty_paths(command)
        # The click command itself, not app(...): typer's main would turn Ctrl-C (and so
        # SIGTERM and SIGHUP) into a silent exit 130 before the handler below sees it.
        with command.make_context("kplugin", args) as context:
            returned = command.invoke(context)
        if isinstance(returned, int) and not isinstance(returned, bool):
            code = returned
    except click.exceptions.Exit as exit_:
        code = exit_.exit_code
    except getattr(click.exceptions, "NoArgsIsHelpError", ()) as err:  # click >= 8.2
        sys.stderr.write(err.format_message() + "\n")
        code = 2
    except click.exceptions.Abort:
        sys.stderr.write("kplugin: aborted\n")
        code = 130
    except state.QuietExit as quiet:
        code = quiet.code
    except BrokenPipeError:  # stdout's reader went away: nothing to tell anyone
        code = 1
    except click.ClickException as err:
        hint = ""
        ctx = getattr(err, "ctx", None)
        if ctx is not None:
            hint = f" (see '{ctx.command_path} --help')"
        # typer and click >= 8.2 both append their suggestion: say it once
        message = re.sub(r"( Did you mean [^?]*\?)(\1)+", r"\1", err.format_message())
        if message.count("Did you mean") > 1:  # several matches: typer's list and click's, in other words
            message = re.sub(r" \(Did you mean one of: [^)]*\)", "", message)
        # click quotes the whole bad value: a number of 5,000 digits is shown by its start
        message = re.sub(r"'([^'\n]{40})[^'\n]{20,}'", r"'\1...'", message)
        sys.stderr.write(f"kplugin: error: {message}{hint}\n")
        _annotate(message)
        code = err.exit_code
    except KeyboardInterrupt as err:  # Ctrl-C, or SIGTERM/SIGHUP (core.interrupts.Terminated)
        from kplugin.core.interrupts import interruption

        message, code = interruption(err)
        sys.stderr.write(message)
    except Exception as err:
        code = _report(err)
    code = _flush_stdout(code)
    sys.exit(code)


class _NonEmptyPath(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.2
    """A path parameter that refuses '': click would take an empty value (an unset
    shell variable) for the current directory, and an empty value is never a default."""

    def __init__(self, inner: click.ParamType[Any]) -> None:
        self.inner = inner
        self.name = inner.name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "":
            self.fail("an empty path; give a path, or leave the option out for its default", param, ctx)
        return self.inner.convert(value, param, ctx)


def _refuse_empty_paths(command: click.Command) -> None:
    for param in command.params:
        if isinstance(param.type, click.Path):
            param.type = _NonEmptyPath(param.type)
    for sub in getattr(command, "commands", {}).values():
        _refuse_empty_paths(sub)


def _flush_stdout(code: int) -> int:
    """Flush stdout now, while a failure can still be reported: a full disk is one line
    and exit 1, a closed pipe a quiet exit 1 (and never Python's 'Exception ignored')."""
    stream = sys.stdout
    if stream is None:
        return code
    try:
        stream.flush()
    except BrokenPipeError:
        code = code or 1
    except OSError as err:
        if not code:  # a failure already reported (the same full disk, say) is not said twice
            sys.stderr.write(f"kplugin: error: writing to stdout: {err.strerror or err}\n")
            code = 1
    else:
        return code
    state.silence_stdout()  # nothing more can be written there
    return code


_OS_HINTS = {
    errno.ENOSPC: " (free some disk space and run the command again)",
    errno.EDQUOT: " (free some disk space and run the command again)",
    errno.EACCES: " (check the permissions of that path)",
    errno.EPERM: " (check the permissions of that path)",
    errno.EROFS: " (that file system is read-only: choose another directory)",
}


def _report(err: Exception) -> int:
    from kplugin.core.errors import KpluginError, ToolError
    from kplugin.core.interrupts import report_interrupt

    if state.debug:
        import traceback

        traceback.print_exception(err)
    code = report_interrupt(err)  # Ctrl-C while a module was being imported, say
    if code is not None:
        return code
    if isinstance(err, KpluginError):
        from kplugin.cli.flags import message, render

        sys.stderr.write(f"kplugin: error: {message(err)}\n")
        details = [render(line) for line in err.details]
        for line in details:
            sys.stderr.write(f"  {line}\n")
        _annotate(message(err), details)
        if isinstance(err, ToolError) and state.debug:
            sys.stderr.write(err.tail + "\n")
        return err.exit_code
    if isinstance(err, OSError) and err.strerror:
        # A file operation kplugin does not wrap itself (disk full, permissions): a
        # failed operation, not a bug.
        where = f": {err.filename}" if err.filename else ""
        sys.stderr.write(f"kplugin: error: {err.strerror}{where}{_OS_HINTS.get(err.errno or 0, '')}\n")
        return 1
    sys.stderr.write(f"kplugin: internal error: {type(err).__name__}: {err} (rerun with --debug for the traceback)\n")
    return 1


def _annotate(message: str, details: list[str] | None = None) -> None:
    """On GitHub Actions, an error that names a file and line (and each detail line that
    does, such as the compiler's) also as an annotation there."""
    from kplugin.cli import github

    if github.active():
        github.write(github.error_annotations(message, details or []))
