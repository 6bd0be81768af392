"""The library names what a user sets in its own terms (kplugin.core.errors.Setting); the
CLI alone spells them as flags (kplugin.cli.flags), so what users read stays the option
they type while no library module knows the command line."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import click
import typer
from support import REPO, Kplugin

from kplugin.cli import COMMANDS, app
from kplugin.cli.flags import FLAGS, render
from kplugin.core.errors import KpluginError, OperationError, Setting, ToolError, UsageError
from kplugin.core.errors import render as render_words
from kplugin.model import versions

LIBRARY = REPO / "kplugin"
# a CLI flag as the user types it: --k8s, --builder (not x--y, not ---)
FLAG = re.compile(r"(?<![\w-])--[a-z]")
# Modules with a command line of their own: python -m kplugin.maintainer.catalog --write.
OWN_COMMAND_LINE = ("kplugin/cli/", "kplugin/maintainer/")
# Flags that stay spelled in a library module, each with the reason. A new one fails the
# test: name a Setting instead, or add it here with its reason.
KNOWN: dict[tuple[str, str], str] = {
    # the flags of programs kplugin runs, in messages about running them
    ("kplugin/builder/verify.py", " --version says "): "kube-scheduler's own --version",
    ("kplugin/doctor/rules.py", "the Deployment starts kube-scheduler with --config"): "kube-scheduler's --config",
    ("kplugin/doctor/rules.py", "run kube-scheduler with --feature-gates={gates} (kplugin refresh writes it "
     "into deploy/ and the chart)"): "kube-scheduler's --feature-gates",
    ("kplugin/doctor/framework.py", "--feature-gates[= ](?P<gates>[\\w=,.-]+)"): "kube-scheduler's, read",
    ("kplugin/doctor/framework.py", "--feature-gates turns on "): "kube-scheduler's, in a Deployment",
    ("kplugin/doctor/rules.py", "remove {gate} from the Deployment's --feature-gates (kplugin refresh writes the gates "
     "the version needs into deploy/ and the chart)"): "kube-scheduler's --feature-gates",
    ("kplugin/doctor/rules.py", "=true from the scheduler's --feature-gates in the Deployment of deploy/ and of "
     "the chart at 1.37, or target 1.38"): "kube-scheduler's --feature-gates",
    ("kplugin/model/manifests.py", "--runtime-config="): "kube-apiserver's, in its command line",
    ("kplugin/kube/cluster.py", ", which the plugins' feature gates need: its kube-apiserver must run with the "
     "gates on and --runtime-config="): "kube-apiserver's --runtime-config, for the user's cluster",
}  # fmt: skip


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _not_a_message(node: ast.Constant, parents: dict[int, ast.AST]) -> bool:
    """A string that is no message: an element of a command line kplugin runs (a list
    literal: ["go", "build", "-trimpath"], kube-apiserver's --kubeconfig=...), the name
    of a command in proc.run(..., what=...), or a pattern or text kplugin rewrites
    (re.sub, str.replace) in a file it writes (a Dockerfile)."""
    parent = parents[id(node)]
    if isinstance(parent, ast.JoinedStr):
        parent = parents[id(parent)]
    if isinstance(parent, (ast.List, ast.Tuple)):  # a tuple of arguments too (model.apitypes)
        return True
    if isinstance(parent, ast.keyword) and parent.arg == "what":
        return True
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute):
        return parent.func.attr in {"sub", "replace"}
    return False


def flag_mentions() -> list[tuple[str, int, str]]:
    """Every string in a library module (outside the CLI) that spells a flag and may
    reach a user: a message, a note, a hint, a name given to an error (where=...)."""
    mentions = []
    for path in sorted(LIBRARY.rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative.startswith(OWN_COMMAND_LINE):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstrings(tree)
        parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and FLAG.search(node.value)
                and id(node) not in docstrings
                and not _not_a_message(node, parents)
            ):
                mentions.append((relative, node.lineno, node.value))
    return mentions


def test_no_library_message_spells_a_cli_flag() -> None:
    found = flag_mentions()
    unexpected = [f"{path}:{line}: {text!r}" for path, line, text in found if (path, text) not in KNOWN]
    assert not unexpected, "name a kplugin.core.errors.Setting instead of a flag:\n" + "\n".join(unexpected)
    stale = set(KNOWN) - {(path, text) for path, _, text in found}
    assert not stale, f"no longer spelled, remove from KNOWN: {sorted(stale)}"


def test_the_scan_sees_messages_and_skips_command_lines(tmp_path: Path) -> None:
    source = (
        '"""Docstring: --k8s."""\n'
        "def f(where: str = '--k8s'):\n"
        "    run(['go', 'build', '-trimpath', '--kubeconfig=x'], what='kube-scheduler --version')\n"
        "    text = text.replace('--platform=$X ', '')\n"
        "    raise UsageError(f'{where} bad; use --builder local')\n"
    )
    tree = ast.parse(source)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    docstrings = _docstrings(tree)
    flagged = [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and FLAG.search(n.value)
        and id(n) not in docstrings
        and not _not_a_message(n, parents)
    ]
    assert sorted(flagged) == [" bad; use --builder local", "--k8s"]


def _cli_options() -> set[str]:
    for command in COMMANDS.values():
        importlib.import_module(command.module)
    options: set[str] = set()

    def walk(command: click.Command) -> None:
        for param in command.params:
            options.update(o for o in param.opts + param.secondary_opts if o.startswith("--"))
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    walk(typer.main.get_command(app))
    return options


def test_every_setting_has_a_flag_the_cli_has() -> None:
    assert set(FLAGS) == set(Setting)
    assert len(set(FLAGS.values())) == len(FLAGS), "two settings spelled the same"
    missing = {setting: flag for setting, flag in FLAGS.items() if flag not in _cli_options()}
    assert not missing, f"FLAGS names options no command has: {missing}"


def test_a_setting_is_a_placeholder_with_words_of_its_own() -> None:
    for setting in Setting:
        # doctor's rules format their text with the settings as parameters of these names
        assert setting.value == "{" + setting.name.lower() + "}"
        assert setting.words and not FLAG.search(setting.words)
        assert f"{setting}" == setting.value


def test_an_error_without_the_mapping_uses_the_library_words() -> None:
    err = UsageError(f"{Setting.BUILDER} 'x' is not one of auto, docker, local; or pass {Setting.FORCE}")
    assert str(err) == "builder 'x' is not one of auto, docker, local; or pass force=True"
    assert err.render(FLAGS) == "--builder 'x' is not one of auto, docker, local; or pass --force"
    assert err.message == "{builder} 'x' is not one of auto, docker, local; or pass {force}"
    try:
        versions.resolve("1.99")
    except UsageError as refused:
        assert str(refused).startswith(f"{Setting.K8S.words} 1.99: Kubernetes 1.99 is not supported")
        assert refused.render(FLAGS).startswith("--k8s 1.99: Kubernetes 1.99 is not supported")
    else:
        raise AssertionError("1.99 resolved")


def test_only_setting_placeholders_are_replaced() -> None:
    text = "top directory must be {{cookiecutter.project_name}}; {a: 1} {k8s_x} {K8S} {k8s}"
    assert render(text) == "top directory must be {{cookiecutter.project_name}}; {a: 1} {k8s_x} {K8S} --k8s"
    assert render_words("no placeholder {here}") == "no placeholder {here}"
    assert render("a {weight} of {weight}") == "a --weight of --weight"


def test_the_error_api_keeps_working() -> None:
    err = OperationError(f"/tmp/stage/x: use {Setting.BUILDER} local", details=["/tmp/stage/y.go:1: {k8s}"])
    assert err.relocated("/tmp/stage", "/home/p") is err
    assert err.render(FLAGS) == "/home/p/x: use --builder local" and err.details == ["/home/p/y.go:1: {k8s}"]
    assert err.exit_code == 1 and UsageError("x").exit_code == 2
    assert isinstance(err, KpluginError) and str(KpluginError("plain")) == "plain"
    tool = ToolError(["go", "build"], 2, "out", f"go build failed; check the {Setting.K8S} version")
    assert str(tool) == "go build failed; check the target version"
    assert tool.render(FLAGS) == "go build failed; check the --k8s version"
    assert tool.returncode == 2 and tool.cmd == ["go", "build"] and tool.tail == "out"


def test_the_cli_prints_flags(kplugin: Kplugin, tmp_path: Path) -> None:
    run = kplugin("new", "gpu", "--k8s", "1.99", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 2
    assert run.stderr.startswith("kplugin: error: --k8s 1.99: Kubernetes 1.99 is not supported; supported: ")
    (tmp_path / "gpu").mkdir()
    (tmp_path / "gpu" / "notes.txt").write_text("mine\n")
    run = kplugin("new", "gpu", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 2
    assert run.stderr.endswith("exists and is not empty; pass --force to write into it\n"), run.stderr
