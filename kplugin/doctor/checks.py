"""The checks in the order doctor runs them, running them, and the JSON report."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kplugin.doctor.api_version import check_api_version
from kplugin.doctor.args import check_args
from kplugin.doctor.binary import check_binary
from kplugin.doctor.context import Context, Finding
from kplugin.doctor.extension_points import check_extension_points
from kplugin.doctor.framework import check_framework
from kplugin.doctor.generated import check_generated
from kplugin.doctor.go_mod import check_go_mod
from kplugin.doctor.lease import check_lease
from kplugin.doctor.plugin_names import check_plugin_names
from kplugin.doctor.rbac import check_rbac
from kplugin.doctor.rules import ERROR, INFO, RULES, WARNING, Problem, Rule, listed
from kplugin.doctor.scheduler_name import check_scheduler_names
from kplugin.doctor.weights import check_weights
from kplugin.model.project import Project
from kplugin.model.versions import Target

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
    return list(dict.fromkeys(run_checks(ctx, CHECKS)))  # a bad node is met by several checks


def run_checks(ctx: Context, checks: Iterable[Callable[[Context], Iterable[Problem]]]) -> list[Finding]:
    """The findings of ``checks`` on ``ctx``, with the problems a check met on the way
    (ctx.problems: a malformed node) in the order they were met."""
    found: list[Finding] = []
    for check in checks:
        for problem in check(ctx):
            found.extend(ctx.finding(p) for p in ctx.problems)
            ctx.problems.clear()
            found.append(ctx.finding(problem))
        found.extend(ctx.finding(p) for p in ctx.problems)
        ctx.problems.clear()
    return found


def list_rules() -> list[Rule]:
    """Every rule, as a list of them shows it (rules.listed)."""
    return [listed(rule) for rule in RULES]


def as_json(findings: list[Finding]) -> dict[str, Any]:
    return {
        "errors": sum(f.severity == ERROR for f in findings),
        "warnings": sum(f.severity == WARNING for f in findings),
        "notes": sum(f.severity == INFO for f in findings),
        "findings": [asdict(f) for f in findings],
    }
