"""--cgo on a project kplugin made: a local build only (the Docker build's base image has
no C libraries); the failed build it answers is tested in tests/integration/test_integration_adopt.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from support import Run, tree


def test_cgo_is_a_local_build(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    assert kplugin("new", "gpu", "--no-tidy", "-o", str(tmp_path)).code == 0
    before = tree(tmp_path / "gpu")
    run = kplugin("build", str(tmp_path / "gpu"), "--cgo", "--builder", "docker")
    assert run.code == 2 and run.stderr.startswith("kplugin: error: --cgo builds with --builder local")
    bad = kplugin("build", str(tmp_path / "gpu"), "--cgo", "--builder", "fancy")
    assert bad.code == 2 and "--builder 'fancy'" in bad.stderr
    assert tree(tmp_path / "gpu") == before
