"""A project's kube-scheduler readied for a run, the one pipeline kplugin build, e2e and
bench share: a retargeted copy of the project when the run is for another Kubernetes
version than the project's (--k8s), the run's inputs read from what is built, the build
(whose builder verifies the binary: static, the architecture, the pinned version), the
run's configuration loaded by that binary, and the control plane's kube-apiserver built
from the same pin.

What a command shows around each stage, and which inputs it reads and checks, are its
``Steps``; ``ready`` is a context manager because the retargeted copy lives until the
run is over (its errors name the project's files, not the copy's)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from kplugin.builder import BuilderName, BuildRequest, BuildResult, Choice
from kplugin.core.progress import Progress
from kplugin.model.project import Project
from kplugin.model.versions import Target

T = TypeVar("T")


class Steps(Protocol[T]):
    """What a command does at each stage of ``ready``."""

    def retargeting(self, pinned: Project, target: Target) -> AbstractContextManager[object]:
        """Around the making of the retargeted copy (go mod tidy downloads modules)."""
        ...

    def prepare(self, project: Project) -> T:
        """The run's inputs, read and checked from ``project`` (the copy, when retargeted)
        before anything is built."""
        ...

    def building(self, project: Project, choice: Choice) -> AbstractContextManager[Progress]:
        """Around the build, the check and the kube-apiserver: yields the progress."""
        ...

    def check(self, inputs: T, scheduler: Path) -> None:
        """The run's configuration, as the built ``scheduler`` loads it."""
        ...


@dataclass(frozen=True)
class Ready(Generic[T]):
    project: Project  # what was built: the project, or its retargeted copy
    inputs: T
    built: BuildResult
    scheduler: Path
    apiserver: Path | None  # with control_plane: kube-apiserver of the same Kubernetes version


@contextmanager
def ready(
    pinned: Project,
    target: Target,
    request: BuildRequest,
    choice: Choice,
    steps: Steps[T],
    *,
    control_plane: bool = False,
    keep_binary: bool = True,
) -> Iterator[Ready[T]]:
    """``pinned`` built for ``target`` as ``request`` asks (its project is the one built),
    through a retargeted copy when ``target`` is another version; with ``keep_binary`` a
    copy's local build goes to the project's bin/vX.Y.Z/ (unless the request says where),
    else it goes with the copy. The copy is removed when the context ends."""
    import kplugin.builder as builds  # through the package, where tests replace build()
    from kplugin.kube import controlplane

    with ExitStack() as stack:
        project = pinned
        if target.version != pinned.version:
            with steps.retargeting(pinned, target):
                project = stack.enter_context(_retargeted(pinned, target))
            if keep_binary and request.output is None and choice.builder is BuilderName.LOCAL:
                request = replace(request, output=pinned.bin_dir / target.version.tag)
        inputs = steps.prepare(project)
        with steps.building(project, choice) as progress:
            built = builds.build(replace(request, project=project), progress, choice)
            scheduler = Path(built.binaries[0].path)
            steps.check(inputs, scheduler)
            apiserver = controlplane.apiserver_binary(project, progress) if control_plane else None
        yield Ready(project, inputs, built, scheduler, apiserver)


def _retargeted(pinned: Project, target: Target) -> AbstractContextManager[Project]:
    """The throw-away copy: a generated project rendered again for ``target``, an adopted
    repository's code moved there (kplugin upgrade's move, in a stage)."""
    if pinned.layout is not None:
        from kplugin.adopt import move

        return move.retargeted(pinned, target)
    from kplugin.generate import upgrade

    return upgrade.retargeted(pinned, target)
