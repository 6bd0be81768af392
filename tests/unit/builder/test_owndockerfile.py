"""kplugin's own Dockerfile for an adopted repository: the project template's, for the
recorded main package and arguments; a generated project's Dockerfile is the same
template with kplugin's layout, byte for byte."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from support import REPO, Run

from kplugin.builder import owndockerfile
from kplugin.core.errors import UsageError
from kplugin.model import project as projects

FIXTURES = REPO / "tests/fixtures/adopt"


def adopted(kplugin: Callable[..., Run], tmp_path: Path, fixture: str) -> projects.Project:
    copy = Path(shutil.copytree(FIXTURES / fixture, tmp_path / fixture))
    assert kplugin("adopt", str(copy)).code == 0
    return projects.load(copy, adopted=True)


def test_it_builds_the_recorded_main_package_and_gives_the_word_before_the_flags(
    kplugin: Callable[..., Run], tmp_path: Path
) -> None:
    text = owndockerfile.render(adopted(kplugin, tmp_path, "cobrashape"))
    assert "    ./cmd/platform\n" in text and "./cmd/scheduler" not in text
    assert text.rstrip().endswith('ENTRYPOINT ["/usr/local/bin/kube-scheduler", "scheduler"]')
    assert "-X k8s.io/component-base/version.gitMinor=36" in text and "ARG K8S_VERSION=v1.36.5" in text
    assert "RUN --mount=type=cache,target=/go/pkg/mod go mod download\n" in text
    assert "USER 65532:65532" in text


def test_a_module_replaced_by_a_directory_is_downloaded_with_the_sources(
    kplugin: Callable[..., Run], tmp_path: Path
) -> None:
    """cgoshape replaces example.com/gpuinfo by ./gpuinfo: go.mod and go.sum alone cannot
    be downloaded from, so the sources are copied first."""
    text = owndockerfile.render(adopted(kplugin, tmp_path, "cgoshape"))
    assert "go mod download" not in text and "COPY go.mod go.sum" not in text and "COPY . .\n" in text


def test_the_dockerfile_and_its_ignore_file_live_outside_the_repository(
    kplugin: Callable[..., Run], tmp_path: Path
) -> None:
    project = adopted(kplugin, tmp_path, "forkshape")
    with owndockerfile.written(project) as path:
        assert not path.is_relative_to(project.root)
        assert Path(f"{path}.dockerignore").read_text() == ".git\n.kplugin\n"
    assert not path.exists()


@pytest.mark.parametrize("example", ["gpu-aware", "permit-gang", "team-quota"])
def test_with_kplugin_s_layout_it_is_the_generated_dockerfile_byte_for_byte(example: str) -> None:
    """One template: rendered for a generated project (cmd/scheduler, no arguments, the
    modules downloaded first), it is the Dockerfile kplugin new wrote."""
    project = projects.load(REPO / "examples" / example)
    assert owndockerfile.render(project) == (REPO / "examples" / example / "Dockerfile").read_text()


def test_a_module_replaced_from_outside_the_repository_is_refused(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    project = adopted(kplugin, tmp_path, "cgoshape")
    go_mod = project.root / "go.mod"
    go_mod.write_text(go_mod.read_text().replace("=> ./gpuinfo", "=> ../gpuinfo"))
    with pytest.raises(UsageError, match=r"replaces example.com/gpuinfo => ../gpuinfo, outside the repository"):
        owndockerfile.render(project)
