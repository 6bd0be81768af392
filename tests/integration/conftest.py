"""The integration suites' shared set-up: each Kubernetes version they build is compiled
once per run, before any of them builds it.

Two pytest-xdist workers that build the same version at once would each compile all of
Kubernetes (Go's build cache shares a package only once one build has finished it): on
a cold cache that is minutes of both cores spent twice. So the first integration test on
each worker compiles the packages every build of a version shares (kube-scheduler's app
package, and kube-apiserver's where a test replays on a control plane of that version,
with the flags kplugin builds with: CGO_ENABLED=0, -trimpath), under a lock the workers
share (a worker that comes second finds it done):
first every version's modules are downloaded at once, then the versions are compiled one
at a time, the pre-release with the Go its go.mod names. Warm, this is a few seconds of
cache hits. A version that does not compile (a pre-release's sources, say) is written to
the run's compile-failures.txt and skipped here: only the tests that build it fail, with
their own build's error, and the other versions' tests run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from support import prereleases, run_directory

from kplugin.core import cache, golang
from kplugin.model.points import ExtensionPoint
from kplugin.model.versions import newest_release

SCHEDULER = "k8s.io/kubernetes/cmd/kube-scheduler/app"
APISERVER = "k8s.io/kubernetes/cmd/kube-apiserver/app"  # e2e's control plane (about 200 CPU-s cold)
# The versions the integration suites build, and what of Kubernetes each needs compiled
# (a kube-apiserver only where a test replays on a control plane of that version).
BUILT = {
    "1.28.3": (SCHEDULER, APISERVER),  # the oldest pin
    "1.34": (SCHEDULER,),  # the kube-scheduler/framework split's first minor (compat): no replay
    str(ExtensionPoint.PLACEMENT_GENERATE.row.first): (SCHEDULER, APISERVER),  # the oldest with placements; hints
    newest_release().key: (SCHEDULER, APISERVER),
}
# compiled with them (modules, its Go toolchain, its scheduler and kube-apiserver): its own
# test builds it, the pod-group tests replay on it. One that does not compile fails those
# tests alone (see above).
PRERELEASES = dict.fromkeys(prereleases(), (SCHEDULER, APISERVER))
# The integration files that take longest on a cold cache, longest first: `make test` hands
# the workers whole files in collection order, so these start first and the short
# files fill in around them, instead of one long file running alone at the end.
LONGEST_FIRST = (
    "test_integration_build.py",  # three image and cross builds of Kubernetes: about 10 minutes cold
    "test_integration_podgroups.py",  # replays of pod groups at 1.36, the newest minor and the pre-release
    "test_integration_compat.py",
    "test_integration_tools.py",
    "test_integration_args.py",
    "test_integration_api.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The integration files in LONGEST_FIRST order, ahead of every other test (a stable
    sort: each file's tests keep their order)."""

    def rank(item: pytest.Item) -> int:
        name = item.path.name
        if name in LONGEST_FIRST:
            return LONGEST_FIRST.index(name)
        return len(LONGEST_FIRST) if "integration" in item.path.parts else len(LONGEST_FIRST) + 1

    items.sort(key=rank)


def _generate(version: str, base: Path) -> Path | None:
    """A project at ``version``, tidied: mostly downloads from the Go module proxy (None:
    it could not be made)."""
    where = base / f"compile-{version}"
    env = {**os.environ, "CI": "true"}
    failed = _run([sys.executable, "-m", "kplugin", "new", "warm", "--k8s", version, "-o", str(where)], env)
    return None if failed else where / "warm"


def _compile_all(base: Path) -> None:
    done = base / "compiled"
    with cache.exclusive(done):  # the lock kplugin's own cache uses, beside the marker
        if done.exists():
            return
        # the versions' modules are downloaded at once (the network's time, not the CPU's),
        # then each version is compiled with both cores
        compiled = {**BUILT, **PRERELEASES}
        with ThreadPoolExecutor(len(compiled)) as pool:
            projects = list(pool.map(lambda version: _generate(version, base), compiled))
        failures = []
        for version, project, packages in zip(compiled, projects, compiled.values(), strict=True):
            if project is None:
                failures.append(f"{version}: kplugin new failed")
                continue
            problem = _run(  # a pre-release with the Go its go.mod names (build_env)
                ["go", "build", "-trimpath", *packages],
                {**os.environ, "CI": "true", "CGO_ENABLED": "0", "GOFLAGS": "-mod=mod", **golang.build_env(project)},
                project,
            )
            if problem is not None:
                failures.append(f"{version}: {problem}")
        (base / "compile-failures.txt").write_text("\n\n".join(failures) + ("\n" if failures else ""))
        done.touch()


def _run(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> str | None:
    """None when the command succeeds; else what failed, with the tail of its output."""
    done = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}"
    return None


@pytest.fixture(scope="session", autouse=True)
def _kubernetes_compiled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    _compile_all(run_directory(tmp_path_factory.getbasetemp()))  # shared by the run's workers
    yield


# --- a real browser for the HTML reports (Debian's chromium, driven by Playwright) -------------


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    assert executable, "chromium is missing: make setup installs Debian's"
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def open_page(browser: Any) -> Iterator[Callable[..., Any]]:
    """A page of ``path`` in a colour scheme; its console errors and uncaught exceptions
    are collected in ``page.errors``."""
    pages: list[Any] = []

    def open_(path: Path, scheme: str = "light") -> Any:
        page = browser.new_page(viewport={"width": 1200, "height": 1400}, color_scheme=scheme)
        page.errors = []
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.on("request", lambda r: page.errors.append(f"request {r.url}") if not r.url.startswith("file:") else None)
        page.goto(path.as_uri())
        pages.append(page)
        return page

    yield open_
    for page in pages:
        page.close()
