"""kplugin snapshot: a real cluster's scheduling state as a scenario."""

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kplugin.cli import app
from kplugin.cli.options import Force, Output

if TYPE_CHECKING:
    from kplugin.snapshot.job import CustomKinds

EPILOG = """Examples:

  kplugin snapshot -o cluster.json                      # $KUBECONFIG or ~/.kube/config, current context

  kplugin snapshot --kubeconfig prod.yaml --context eu-1 --namespace ml --namespace web -o ml.json

  kplugin snapshot --anonymize --keep-label example.com/gpu -o shareable.json

  kplugin snapshot --anonymize --anonymize-drivers -o bug-report.json   # driver names hashed too

  kplugin snapshot --project ./team-quota -o quotas.json   # the project's own kinds (config/crd/) too

  kplugin e2e gpu-aware --scenario cluster.json --compare default   # what would the plugin change?
"""


KubeconfigFile = Annotated[
    Path | None,
    typer.Option("--kubeconfig", help="The cluster's kubeconfig. Default: $KUBECONFIG, else ~/.kube/config."),
]
Context = Annotated[str | None, typer.Option("--context", help="The kubeconfig context. Default: current.")]
Namespaces = Annotated[
    list[str] | None,
    typer.Option("--namespace", "-n", help="Only this namespace's pods and objects (repeatable; nodes: all)."),
]
Anonymize = Annotated[
    bool,
    typer.Option("--anonymize", help="Hash every name and value that identifies the cluster; references still match."),
]
AnonymizeDrivers = Annotated[
    bool,
    typer.Option(
        "--anonymize-drivers",
        help="With --anonymize: hash driver, provisioner and extended resource names too (kept by default).",
    ),
]
Salt = Annotated[
    str | None,
    typer.Option("--salt", help="Key of --anonymize's hash. Default: the cluster's kube-system namespace uid."),
]
ProjectKinds = Annotated[
    Path | None,
    typer.Option(
        "--project",
        help="Also this kplugin project's own kinds (its config/crd/): the CRDs and every object of their kinds.",
    ),
]
KeepLabels = Annotated[
    list[str] | None,
    typer.Option("--keep-label", help="With --anonymize: keep this label key's values (repeatable)."),
]


@app.command(epilog=EPILOG)
def snapshot(
    kubeconfig: KubeconfigFile = None,
    context: Context = None,
    output: Output = None,
    force: Force = False,
    namespace: Namespaces = None,
    anonymize: Anonymize = False,
    salt: Salt = None,
    keep_label: KeepLabels = None,
    anonymize_drivers: AnonymizeDrivers = False,
    project: ProjectKinds = None,
) -> None:
    """Export a real cluster's scheduling state (nodes, pods, volumes, DRA, pod groups) as an e2e scenario."""
    import sys

    from kplugin.cli.console import out, say
    from kplugin.cli.progress import Reporter
    from kplugin.core import safefs
    from kplugin.snapshot import job as snapshots

    _check_options(namespace, anonymize, salt, keep_label, anonymize_drivers)
    custom = _project_kinds(project, anonymize) if project is not None else ()
    destination = safefs.output_target(output, "--output", force=force) if output is not None else None
    request = snapshots.Request(
        namespaces=tuple(sorted(set(namespace or ()))),
        anonymize=anonymize,
        salt=salt,
        keep_labels=tuple(keep_label or ()),
        anonymize_drivers=anonymize_drivers,
        custom=custom,
    )
    chunks: list[bytes] = []
    with (
        snapshots.connect(kubeconfig or _default_kubeconfig(), context) as cluster,
        Reporter(f"snapshot of {cluster.server} (context {cluster.context})…") as reporter,
    ):
        if destination is not None:
            # owner-only (0600) whatever the umask: a snapshot describes a whole cluster
            with safefs.atomic_writer(destination, new_mode=0o600) as handle:
                result = snapshots.take(cluster.client, request, handle.write, reporter.count)
        else:
            result = snapshots.take(cluster.client, request, chunks.append, reporter.count)
    if destination is None:
        out(b"".join(chunks).decode())
        sys.stdout.flush()
    for note in result.notes:
        say(f"[yellow]note:[/] {note}")
    counts = ", ".join(f"{count:,} {section}" for section, count in result.counts.items())
    say(
        f"snapshot of Kubernetes {result.kubernetes}: {counts} ({result.bytes:,} bytes) in {result.seconds}s"
        + (f"; wrote {output}" if output is not None else "")
        + ("; anonymized" if anonymize else "")
        + (" (drivers too)" if anonymize_drivers else "")
    )


def _check_options(
    namespace: list[str] | None,
    anonymize: bool,
    salt: str | None,
    keep_label: list[str] | None,
    anonymize_drivers: bool = False,
) -> None:
    from kplugin.core import names
    from kplugin.core.errors import UsageError

    for ns in namespace or ():
        problem = names.dns1123_label_problem(ns)
        if problem:
            raise UsageError(f"--namespace {ns[:60]!r} {problem}")
    for key in keep_label or ():
        problem = names.qualified_name_problem(key)
        if problem:
            raise UsageError(f"--keep-label {key[:60]!r} {problem}")
    if (salt is not None or keep_label) and not anonymize:
        raise UsageError("--salt and --keep-label go with --anonymize")
    if anonymize_drivers and not anonymize:
        raise UsageError("--anonymize-drivers goes with --anonymize; add --anonymize")
    if salt is not None and not salt:
        raise UsageError("--salt '' is empty; give a secret, or leave it out for the cluster's own")


def _project_kinds(path: Path, anonymize: bool) -> "CustomKinds":
    """The kinds of the project's CRDs (config/crd/, or an adopted repository's files;
    each CRD's first served version)."""
    from kplugin.core.errors import UsageError
    from kplugin.model import crds
    from kplugin.model.project import load
    from kplugin.snapshot import job as snapshots

    if anonymize:
        raise UsageError(
            "--anonymize cannot anonymize a project's own kinds (kplugin does not know which of their fields name "
            "the cluster): leave out --project, or share the snapshot as it is"
        )
    project = load(path, adopted=True)  # an adopted repository's CRDs are where it keeps them
    found = snapshots.project_kinds(project)
    if not found:
        where = "its recorded CRD files hold" if project.layout is not None else f"{project.root / crds.CRD_DIR} holds"
        raise UsageError(f"--project {path}: {where} no CustomResourceDefinition")
    return found


def _default_kubeconfig() -> Path:
    """$KUBECONFIG's first file, else ~/.kube/config."""
    from_env = os.environ.get("KUBECONFIG", "").split(os.pathsep)[0]
    return Path(from_env) if from_env else Path.home() / ".kube" / "config"
