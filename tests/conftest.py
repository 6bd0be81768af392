from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support import Run, run_directory

from kplugin.cli import main
from kplugin.core import golang


@pytest.fixture(scope="session", autouse=True)
def _cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """kplugin's cache (kube-apiserver binaries, the plugins' Args programs) in a directory of this run, not ~/.cache,
    shared by the run's workers (pytest-xdist), so that each kube-apiserver is built once per run.

    Only kplugin's: setting XDG_CACHE_HOME instead would also move Go's build cache
    (GOCACHE defaults under it), so every run would rebuild Kubernetes into a fresh,
    multi-gigabyte cache instead of sharing the machine's.
    """
    home = run_directory(tmp_path_factory.getbasetemp()) / "kplugin-cache"  # cache.exclusive: built once
    home.mkdir(exist_ok=True)
    previous = os.environ.get("KPLUGIN_CACHE_DIR")
    os.environ["KPLUGIN_CACHE_DIR"] = str(home)
    yield home
    if previous is None:
        os.environ.pop("KPLUGIN_CACHE_DIR", None)
    else:
        os.environ["KPLUGIN_CACHE_DIR"] = previous


# what changes kplugin's output when the suite itself runs in CI (GitHub Actions adds
# workflow commands): the tests that want them set them
_CI_OUTPUT = ("GITHUB_ACTIONS", "GITHUB_WORKSPACE", "COLUMNS", "KPLUGIN_HEARTBEAT")


@pytest.fixture(scope="session", autouse=True)
def _plain_output() -> Iterator[None]:
    saved = {name: os.environ.pop(name) for name in _CI_OUTPUT if name in os.environ}
    yield
    os.environ.update(saved)


@pytest.fixture
def kplugin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Run]:
    """Run the CLI in-process as the console script does; returns code and output."""
    monkeypatch.setenv("CI", "true")

    def run(*args: str) -> Run:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exit_:
            main(list(args))
        out = capsys.readouterr()
        code = exit_.value.code
        return Run(code if isinstance(code, int) else 1, out.out, out.err)

    return run


@pytest.fixture(scope="session")
def go_env() -> dict[str, str]:
    """Go shares one module and build cache across the whole run (the defaults), and
    compiles as kplugin build does (CGO_ENABLED=0, -trimpath): Go's build cache keys a
    package by its flags, so tests that build, vet and test with other flags would
    compile all of Kubernetes again for each set (on a cold cache, minutes per version).
    The generated projects build with CGO_ENABLED=0 (static) in their Dockerfile too.

    ``go test`` runs without its own vet (``-vet=off``; the other go commands ignore the
    flag): every project a test runs ``go test`` on is vetted whole by ``go vet`` or by
    golangci-lint's govet (test_integration_tools, the same shapes at the minors in
    test_integration_compat's LINTED), whose analyzers include go test's. go test's vet
    runs with other flags, so its facts about every dependency are a cache of their own:
    on a cold cache about 100 CPU-seconds per Kubernetes version (1.37.2: 105 against 4
    with -vet=off), spent only to repeat a check. (test_integration_prerelease keeps it: its project is vetted nowhere
    else.)"""
    env = dict(os.environ)
    env.setdefault("GOFLAGS", "-mod=mod -trimpath -vet=off")
    env.setdefault("CGO_ENABLED", "0")
    env.update(golang.compile_env())  # as kplugin's own compiles
    return env
