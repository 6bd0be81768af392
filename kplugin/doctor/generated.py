"""Check 10: the generated files are as kplugin wrote them."""

from __future__ import annotations

from collections.abc import Iterator

from kplugin.core import digest, safefs
from kplugin.core.errors import UsageError
from kplugin.doctor.context import Context
from kplugin.doctor.rules import Problem


def check_generated(ctx: Context) -> Iterator[Problem]:
    """10. generated files as kplugin wrote them (kplugin.yaml records their sha256)."""

    for name, recorded in sorted(ctx.project.generated.items()):
        path = ctx.project.root / name
        try:
            data = safefs.read_project_file(ctx.project.root, name)
        except UsageError as err:
            yield Problem("generated-unreadable", path, None, err.message)
            continue
        if data is None:
            yield Problem("generated-missing", path, None, f"generated file {name} is missing")
        elif digest.sha256_hex(data) != recorded:
            yield Problem("generated-edited", path, None, f"generated file {name} was edited by hand")
    yield from _clients_stale(ctx)


def _clients_stale(ctx: Context) -> Iterator[Problem]:
    """The project's generated client code (pkg/generated/) made by the code-generator the
    target version's Makefile runs (make generate records it beside the code)."""
    from kplugin.generate import codegen
    from kplugin.model import apitypes

    if not ctx.project.apis:
        return
    try:
        found = codegen.made_by(ctx.project.root)
    except UsageError as err:  # a stamp that is no regular file
        yield Problem("generated-unreadable", ctx.project.root / apitypes.GENERATOR_STAMP, None, err.message)
        return
    wanted = apitypes.tool_versions(ctx.target.facts, ctx.target.version.staging_tag)[apitypes.CLIENTS_GENERATOR]
    if found is None or found == wanted:
        return  # none generated: the build says what is missing
    made = f"code-generator {found}" if found else "a code-generator it does not record"
    yield Problem(
        "generated-clients-stale", ctx.project.root / apitypes.GENERATED_DIR, None,
        f"{apitypes.GENERATED_DIR}/ was made by {made}; the Makefile of Kubernetes {ctx.target.version} runs {wanted}",
    )  # fmt: skip
