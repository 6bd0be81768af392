"""builder.ready, the pipeline build, e2e and bench share, without Go: what the move of an
adopted repository's throw-away copy says reaches the job's observer (kplugin build --k8s
and e2e --k8s say what kplugin upgrade would)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support import REPO, Run

from kplugin.adopt import move
from kplugin.builder import BuilderName, BuildRequest, Choice, ready
from kplugin.model import project as projects
from kplugin.model.versions import resolve

NOTICE = "example.com/x@v0.1.0 requires k8s.io/api v0.34.0: the replace set makes it v0.36.5"


class Recorder:
    def __init__(self) -> None:
        self.steps: list[str] = []
        self.notes: list[str] = []

    def step(self, text: str) -> None:
        self.steps.append(text)

    def count(self, what: str, done: int, total: int) -> None:
        pass

    def note(self, text: str) -> None:
        self.notes.append(text)


def test_the_move_of_a_retargeted_copy_is_told_to_the_observer(
    kplugin: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repository = Path(shutil.copytree(REPO / "tests/fixtures/adopt/crdshape", tmp_path / "crdshape"))
    assert kplugin("adopt", str(repository)).code == 0
    pinned = projects.load(repository, adopted=True)
    target = resolve("1.36")
    assert target.version != pinned.version

    def in_stage(project: Any, to: Any, moved: move.Moved, changes: Any) -> Callable[[Path], None]:
        # the move itself (go mod tidy, the compile check) is the integration tests'
        return lambda root: moved.notices.append(NOTICE)

    built = SimpleNamespace(binaries=[SimpleNamespace(path=str(tmp_path / "kube-scheduler"))])
    monkeypatch.setattr(move, "_in_stage", in_stage)
    monkeypatch.setattr(ready, "build", lambda *_, **__: built)
    observer = Recorder()
    request = BuildRequest(project=pinned, builder=BuilderName.LOCAL)
    choice = Choice(BuilderName.LOCAL, "test")
    with ready.ready(pinned, target, request, choice, ready.Nothing(), observer) as done:
        assert done.project.root != pinned.root, "the copy is built"
    assert observer.notes == [NOTICE]
    assert any(step.startswith("retargeting a copy of crdshape to Kubernetes 1.36") for step in observer.steps)
