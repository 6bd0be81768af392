"""The integration suites' compile phase (tests/integration/conftest.py) is a warm-up:
a version that does not compile is recorded and skipped, so that only the tests that
build it fail (issue 44, item 8: one pre-release that did not compile failed every
integration test of the run)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest


def compile_phase() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "integration" / "conftest.py"
    spec = importlib.util.spec_from_file_location("integration_compile_phase", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_version_that_does_not_compile_is_recorded_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    phase = compile_phase()
    monkeypatch.setattr(phase, "BUILT", {"1.28.3": ("a",), "1.37": ("b",)})
    monkeypatch.setattr(phase, "PRERELEASES", {"1.38.0-beta.0": ("c",)})
    made = {"1.28.3": tmp_path / "old", "1.37": None, "1.38.0-beta.0": tmp_path / "pre"}
    monkeypatch.setattr(phase, "_generate", lambda version, base: made[version])
    monkeypatch.setattr(phase.golang, "build_env", lambda project: {})
    built = []

    def run(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> str | None:
        built.append(cmd[-1])
        return "go build failed (1):\nundefined: x" if cmd[-1] == "c" else None

    monkeypatch.setattr(phase, "_run", run)
    phase._compile_all(tmp_path)  # no failure raised: the warm-up goes on
    assert built == ["a", "c"]
    assert (tmp_path / "compiled").exists()
    failures = (tmp_path / "compile-failures.txt").read_text()
    assert "1.37: kplugin new failed" in failures and "1.38.0-beta.0: go build failed (1):\nundefined: x" in failures
