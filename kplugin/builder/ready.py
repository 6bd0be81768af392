"""A project's kube-scheduler readied for a run, the one pipeline kplugin build, e2e and
bench share: a retargeted copy of the project when the run is for another Kubernetes
version than the project's (--k8s), the run's inputs read from what is built, the build
(whose builder verifies the binary: static, the architecture, the pinned version), the
run's configuration loaded by that binary, and the control plane's kube-apiserver built
from the same pin.

The inputs a run reads and the check of its configuration are its ``Job``'s; what is
going on is told to an ``Observer``, which only reports. ``ready`` is a context manager
because the retargeted copy lives until the run is over (its errors name the project's
files, not the copy's)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from kplugin.builder import BuilderName, BuildRequest, BuildResult, Choice, build
from kplugin.core.progress import Observer
from kplugin.kube import controlplane
from kplugin.model.project import Project
from kplugin.model.versions import Target

T = TypeVar("T")


class Job(Protocol[T]):
    """What a run reads before anything is built, and how its configuration is checked."""

    def prepare(self, project: Project) -> T:
        """The run's inputs, read and checked from ``project`` (the copy, when retargeted)
        before anything is built."""
        ...

    def check(self, inputs: T, scheduler: Path) -> str | None:
        """The run's configuration, as the built ``scheduler`` loads it: an error when it
        refuses it, a note (returned) when the check could not decide."""
        ...


class Nothing:
    """The job of a plain build: no inputs, no configuration."""

    def prepare(self, project: Project) -> None:
        return None

    def check(self, inputs: None, scheduler: Path) -> str | None:
        return None


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
    job: Job[T],
    observer: Observer,
    *,
    control_plane: bool = False,
    keep_binary: bool = True,
) -> Iterator[Ready[T]]:
    """``pinned`` built for ``target`` as ``request`` asks (its project is the one built),
    through a retargeted copy when ``target`` is another version; with ``keep_binary`` a
    copy's local build goes to the project's bin/vX.Y.Z/ (unless the request says where),
    else it goes with the copy. The copy is removed when the context ends."""
    with ExitStack() as stack:
        project = pinned
        if target.version != pinned.version:
            observer.step(
                f"retargeting a copy of {pinned.root.name} to Kubernetes {target.version} "
                f"(go mod tidy downloads modules; {pinned.root.name} stays pinned to {pinned.version})"
            )
            project = stack.enter_context(_retargeted(pinned, target, observer.note))
            if keep_binary and request.output is None and choice.builder is BuilderName.LOCAL:
                request = replace(request, output=pinned.bin_dir / target.version.tag)
        inputs = job.prepare(project)
        built = build(replace(request, project=project), observer.step, choice)
        scheduler = Path(built.binaries[0].path)
        if (undecided := job.check(inputs, scheduler)) is not None:
            observer.note(undecided)
        apiserver = controlplane.apiserver_binary(project, observer.step) if control_plane else None
        yield Ready(project, inputs, built, scheduler, apiserver)


def _retargeted(pinned: Project, target: Target, notify: Callable[[str], None]) -> AbstractContextManager[Project]:
    """The throw-away copy: a generated project rendered again for ``target``, an adopted
    repository's code moved there (kplugin upgrade's move, in a stage; what it says goes to
    ``notify``)."""
    if pinned.layout is not None:
        from kplugin.adopt import move

        return move.retargeted(pinned, target, notify)
    from kplugin.generate import upgrade

    return upgrade.retargeted(pinned, target)
