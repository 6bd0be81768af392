"""A project at the 1.38 pre-release (issue 22), without Go builds: its go.mod names the
Go it needs (go directive, toolchain, godebug), the Makefile lets the go command fetch
that toolchain, the Dockerfile builds with its Go, and an upgrade 1.37 -> 1.34 ->
1.38.0-beta.0 -> 1.28.3 keeps the plugin's code byte for byte while go.mod gains and drops the lines
(1.32 to 1.37 carry their release's godebug line, 1.34's older than its go directive).
Building it with the selected toolchain: tests/integration/test_integration_prerelease.py."""

from __future__ import annotations

from pathlib import Path

from support import Kplugin, tree

from kplugin.generate import scaffold

BETA = "1.38.0-beta.0"


def test_a_project_at_the_prerelease_names_the_go_it_needs(kplugin: Kplugin, tmp_path: Path) -> None:
    run = kplugin("new", "early", "--k8s", BETA, "--no-tidy", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    project = tmp_path / "early"
    go_mod = (project / "go.mod").read_text()
    assert "\ngo 1.27.0\n" in go_mod and "\ntoolchain go1.27.3\n" in go_mod and "\ngodebug default=go1.27\n" in go_mod
    assert "require k8s.io/kubernetes v1.38.0-beta.0" in go_mod
    assert "k8s.io/api => k8s.io/api v0.38.0-beta.0" in go_mod
    makefile = (project / "Makefile").read_text()
    assert "\nexport GOTOOLCHAIN ?= auto\n" in makefile and "K8S_VERSION ?= v1.38.0-beta.0" in makefile
    assert "ARG GO_IMAGE=golang:1.27\n" in (project / "Dockerfile").read_text()
    assert "image: early:0.1.0-k8s1.38.0-beta.0" in (project / "kplugin.yaml").read_text()
    # a released minor's project names no toolchain: the machine's Go 1.26 builds it
    run = kplugin("new", "steady", "--k8s", "1.37", "--no-tidy", "-o", str(tmp_path))
    assert "toolchain" not in (tmp_path / "steady/go.mod").read_text()
    assert "GOTOOLCHAIN" not in (tmp_path / "steady/Makefile").read_text()


def test_upgrade_to_the_prerelease_and_back_keeps_the_code(kplugin: Kplugin, tmp_path: Path) -> None:
    run = kplugin("new", "moving", "--k8s", "1.37", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    project = tmp_path / "moving"

    def user_code() -> dict[str, bytes]:
        return {p: c for p, c in tree(project).items() if scaffold.is_user_file(Path(p))}  # type: ignore[arg-type]

    before = user_code()
    assert "godebug default=go1.26" in (project / "go.mod").read_text().splitlines()
    for version, lines, absent in [
        ("1.34", ("go 1.25.0", "godebug default=go1.24"), ("toolchain",)),
        (BETA, ("go 1.27.0", "toolchain go1.27.3", "godebug default=go1.27"), ()),
        ("1.28.3", ("go 1.20",), ("toolchain", "godebug")),
    ]:
        run = kplugin("upgrade", str(project), "--k8s", version, "--no-tidy")
        assert run.code == 0, run.stderr
        go_mod = (project / "go.mod").read_text().splitlines()
        assert all(line in go_mod for line in lines), go_mod[:12]
        for prefix in absent:
            assert not [line for line in go_mod if line.startswith(prefix)], prefix
        assert user_code() == before
