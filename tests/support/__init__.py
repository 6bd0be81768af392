"""What the suites share: the repository's root, the in-process CLI's result (the
``kplugin`` fixture of conftest.py returns it), a preexec_fn for interrupted children, a
tree reader, a copy of an example at another version. The hostile-input helpers
(hostile, hostile_mounts), the stand-in API server (fakeapi), the seeded Docker images
(dockerenv) and the bad names (names) are modules of this package."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def sigint_default() -> None:
    """preexec_fn for a kplugin a test interrupts: SIGINT back to its default. A shell
    that runs the suite in the background (``.ci/run &``) leaves SIGINT ignored, children
    inherit that, and Python then installs no KeyboardInterrupt handler: the signal the
    test sends would be lost."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str


Kplugin = Callable[..., Run]  # the kplugin fixture: runs the CLI in-process


def example_pin(name: str) -> str:
    """The Kubernetes version examples/NAME is pinned to (its kplugin.yaml)."""
    from ruamel.yaml import YAML

    return str(YAML(typ="safe").load((REPO / "examples" / name / "kplugin.yaml").read_text())["kubernetes"])


def example_at(kplugin: Kplugin, name: str, parent: Path, version: str | None = None) -> Path:
    """A copy of examples/NAME in ``parent``, moved from its pin to ``version`` (when
    given and another) with kplugin upgrade."""
    import shutil

    project = parent / name
    shutil.copytree(REPO / "examples" / name, project)
    if version is not None and version != example_pin(name):
        run = kplugin("upgrade", str(project), "--k8s", version)
        assert run.code == 0, run.stderr
    return project


def prereleases() -> list[str]:
    """The catalog's pre-releases (the newest of each minor without a release), as
    --k8s takes them; none between a minor's release and the next one's first pre-release."""
    from kplugin.model.versions import supported_releases

    return [str(r.newest) for r in supported_releases() if not r.released]


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root, by relative path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run_directory(base: Path) -> Path:
    """Where the whole run keeps what its pytest-xdist workers share: ``base`` is a
    worker's basetemp (pytest's ``getbasetemp()``), whose parent is the run's."""
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def every_point(version: str) -> str:
    """Every extension point the version's minor has, as --extension-points takes them."""
    from kplugin.model import points

    return points.available_words(points.parse_minor(".".join(version.split(".")[:2])))


def allocations(output: str) -> dict[str, int]:
    """allocs/op of each benchmark in `go test -bench -benchmem` output, by name (the
    framework may log between a benchmark's name and its figures)."""
    found = re.findall(r"^(Benchmark\w+)-\d+\s.*?\s(\d+) allocs/op", output, re.M | re.S)
    return {name: int(count) for name, count in found}
