from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kplugin import builder as build
from kplugin.core import elf, golang
from kplugin.core.errors import Setting, ToolError, UsageError, parse_choice


def test_dynamic_binary_is_detected() -> None:
    ls = Path(shutil.which("ls") or "/bin/ls")
    info = elf.inspect(ls)
    assert info.has_interpreter and not info.static


def test_not_elf(tmp_path: Path) -> None:
    script = tmp_path / "x"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(elf.NotElf):
        elf.inspect(script)


def test_platforms() -> None:
    assert [str(p) for p in build.parse_platforms("linux/amd64,linux/arm64,linux/amd64")] == [
        "linux/amd64",
        "linux/arm64",
    ]
    with pytest.raises(UsageError, match="windows/amd64"):
        build.parse_platforms("windows/amd64")
    with pytest.raises(UsageError, match="linux/sparc"):
        build.parse_platforms("linux/sparc")


def test_unknown_builder() -> None:
    with pytest.raises(UsageError, match="'podman'"):
        parse_choice(build.BuilderName, "podman", Setting.BUILDER)


def test_legacy_dockerfile_has_no_buildkit_syntax() -> None:
    text = (
        "FROM --platform=$BUILDPLATFORM ${GO_IMAGE} AS build\n"
        "RUN --mount=type=cache,target=/go/pkg/mod go mod download\n"
        "RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \\\n"
        "    go build ./cmd/scheduler\n"
    )
    assert build.dockerfile_without_buildkit(text) == (
        "FROM ${GO_IMAGE} AS build\nRUN go mod download\nRUN \\\n    go build ./cmd/scheduler\n"
    )


def test_legacy_build_stage_is_labelled_for_removal() -> None:
    text = "ARG GO_IMAGE\nFROM ${GO_IMAGE} AS build\nWORKDIR /src\n\nFROM scratch\nCOPY --from=build /x /x\n"
    assert build.label_build_stage(text, "gpu-aware") == (
        "ARG GO_IMAGE\nFROM ${GO_IMAGE} AS build\nLABEL io.kplugin.build-stage-of=gpu-aware\nWORKDIR /src\n\n"
        "FROM scratch\nCOPY --from=build /x /x\n"
    )


def test_compile_errors_are_extracted() -> None:
    output = (
        "#12 0.5 go: downloading x\n"
        "#12 41.2 # example.com/p/pkg/p\n"
        "#12 41.2 pkg/p/plugin.go:51:53: undefined: undefinedName\n"
        "./pkg/p/args.go:3:1: syntax error: non-declaration statement outside function body\n"
        "ERROR: process did not complete successfully\n"
    )
    err = golang.compile_failure(ToolError(["go"], 1, output, "go build failed (exit 1)"))
    assert err.details == [
        "pkg/p/plugin.go:51:53: undefined: undefinedName",
        "./pkg/p/args.go:3:1: syntax error: non-declaration statement outside function body",
    ]
