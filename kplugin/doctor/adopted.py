"""doctor on a repository kplugin adopted: the checks that read what every repository has
(go.mod's pins; each of its KubeSchedulerConfiguration files: apiVersion, leader election,
weights; its kube-scheduler, where kplugin built one) and the framework's removed and
deprecated names in all of its Go code, tests included. The checks that read the files
a kplugin project has (deploy/, config/rbac/, pkg/<plugin>/) do not apply."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from kplugin.core import safefs
from kplugin.core.errors import Setting
from kplugin.doctor.api_version import check_api_version
from kplugin.doctor.binary import check_binary
from kplugin.doctor.checks import run_checks
from kplugin.doctor.context import Context, Finding
from kplugin.doctor.go_mod import check_go_mod
from kplugin.doctor.lease import check_lease
from kplugin.doctor.rules import Problem
from kplugin.doctor.weights import check_weights
from kplugin.generate import gorewrite, gosource
from kplugin.model.apichanges import API_CHANGES, PACKAGES, framework_moves
from kplugin.model.project import Project
from kplugin.model.versions import Target

Check = Callable[[Context], Iterable[Problem]]
# run on each configuration file the repository has
PER_CONFIG: tuple[Check, ...] = (check_api_version, check_lease, check_weights)


def check_code(ctx: Context) -> Iterator[Problem]:
    """The framework's names the target minor removed or deprecates, where the repository's
    Go code uses them (comments and strings left out)."""
    minor = (ctx.target.version.major, ctx.target.version.minor)
    moved = f"kplugin upgrade {Setting.K8S} {ctx.target.version} rewrites it: it moved to {PACKAGES['fwk']}"
    rows = [(re.compile(p), since, rule, moved, True) for p, since, rule, _ in framework_moves()] + [
        (re.compile(p), since, rule, fix, False) for p, since, rule, fix in API_CHANGES
    ]
    rows = [row for row in rows if tuple(int(x) for x in row[1].split(".")) <= minor]
    root = ctx.project.root
    for relative in gorewrite.go_files(root):
        text = ctx.text(root / relative)
        if text is None:
            continue
        code = gosource.shape_of(text)
        # framework.X is the old package's only where the file imports it by that name
        old_package = gosource.imports(gosource.blank_comments(text)).get("framework") == PACKAGES["framework"]
        for pattern, since, rule, fix, is_move in rows:
            if is_move and not old_package:
                continue
            for match in pattern.finditer(code):
                yield Problem(
                    rule, root / relative, gosource.line_of(code, match.start()),
                    f"{match[0]} is {'gone' if rule == 'api-removed' else 'deprecated'} from {since}", fix=fix,
                )  # fmt: skip


def run(project: Project, target: Target, binary: Path | None = None) -> list[Finding]:
    """Every finding for the adopted ``project`` at ``target``."""
    assert project.layout is not None
    scheduler = binary or project.bin_dir / "kube-scheduler"
    found: list[Finding] = []
    for config in project.layout.configs:
        safefs.read_project_file(project.root, config.path)  # a regular file inside, never a link (or refused)
        ctx = Context(project=project, target=target, config_path=project.root / config.path, binary=scheduler,
                      config_given=True)  # fmt: skip
        found += run_checks(ctx, PER_CONFIG)
    ctx = Context(project=project, target=target, config_path=project.root, binary=scheduler,
                  config_given=binary is not None)  # fmt: skip
    found += run_checks(ctx, (check_go_mod, check_code, check_binary))
    return list(dict.fromkeys(found))
