"""Which Go kplugin runs for a module (issue 22): the machine's while it is new enough,
else the toolchain go.mod names, selected through GOTOOLCHAIN (said in one line); a
module that needs a newer Go and names none is refused naming the Go it needs. Uses the
machine's real go (go env GOVERSION)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kplugin.core import golang
from kplugin.core.errors import OperationError, ToolError


def module(tmp_path: Path, body: str) -> Path:
    (tmp_path / "go.mod").write_text(f"module example.com/m\n\n{body}")
    return tmp_path


@pytest.fixture(autouse=True)
def _machine_toolchain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOTOOLCHAIN", raising=False)


def newer_than_local() -> str:
    local = golang.local_go()
    assert local is not None
    major, minor = (int(x) for x in local.split(".")[:2])
    return f"{major}.{minor + 1}.0"


def test_the_machines_go_when_it_is_new_enough(tmp_path: Path) -> None:
    assert golang.toolchain_env(module(tmp_path, "go 1.20\n\ntoolchain go1.99.0\n")) == {}


def test_the_named_toolchain_when_the_machines_go_is_older(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    monkeypatch.setattr(golang, "_announce", golang._announce)  # both restored after the test
    monkeypatch.setattr(golang, "_announced", set())
    golang.announce_with(said.append)
    needed = newer_than_local()
    env = golang.toolchain_env(module(tmp_path, f"go {needed}\n\ntoolchain go{needed[:-2]}.3\n"))
    assert env == {"GOTOOLCHAIN": f"go{needed[:-2]}.3"}
    line = (f"Go {needed} needed, this machine has {golang.local_go()}: using go{needed[:-2]}.3 "
            "(GOTOOLCHAIN; fetched once)")  # fmt: skip
    assert said == [line]
    golang.toolchain_env(tmp_path)
    assert said == [line], "said once"
    # once per command: the next one (in the same process, as the test suite and an
    # embedding program run them) says it again
    golang.announce_with(said.append)
    golang.toolchain_env(tmp_path)
    assert said == [line, line]


def test_a_newer_go_without_a_toolchain_is_refused(tmp_path: Path) -> None:
    needed = newer_than_local()
    with pytest.raises(OperationError) as err:
        golang.toolchain_env(module(tmp_path, f"go {needed}\n"))
    assert f"needs Go {needed} and this machine has Go {golang.local_go()}" in str(err.value)


def test_the_users_gotoolchain_stands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOTOOLCHAIN", "local")
    assert golang.toolchain_env(module(tmp_path, f"go {newer_than_local()}\n")) == {}
    output = "go: example.com/m requires go >= 1.27.0 (running go 1.26.8; GOTOOLCHAIN=local)\n"
    failed = ToolError(["go", "mod", "tidy"], 1, output, "go mod tidy failed (exit 1)")
    assert golang.explain_go_failure(failed) == (
        "go mod tidy failed (exit 1): Go 1.27.0 is needed and this machine runs 1.26.8 with GOTOOLCHAIN=local; "
        "unset GOTOOLCHAIN (kplugin then selects the toolchain go.mod names) or install Go 1.27.0"
    )


def test_compiles_collect_garbage_less_often_unless_the_user_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """kplugin's compiling go commands run with GOGC=400 (a fifth less CPU on a cold
    Kubernetes compile); a GOGC the user set is theirs."""
    monkeypatch.delenv("GOGC", raising=False)
    assert golang.compile_env() == {"GOGC": "400"}
    monkeypatch.setenv("GOGC", "50")
    assert golang.compile_env() == {}
