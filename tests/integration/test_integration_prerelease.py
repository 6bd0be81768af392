"""The Kubernetes pre-release in the catalog, built for real (issue 22): a minor that
needs a newer Go than the machine's is generated, tidied, built and tested with the
toolchain its go.mod names (kplugin selects it through GOTOOLCHAIN and says so; the
Makefile lets the go command fetch it), the binary is the pre-release's own
kube-scheduler, and that binary accepts the configuration kplugin renders. The other
minors build with the machine's Go in the same run, so a project on the pre-release
and one on a release live side by side without anything exported."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support import Kplugin, every_point

from kplugin.core import golang
from kplugin.model.versions import MinorRelease, supported_releases

pytestmark = pytest.mark.integration

# each pre-release in the catalog (none between a minor's release and the next one's first
# pre-release: then there is nothing to build here)
EARLY = [r for r in supported_releases() if not r.released]


@pytest.mark.parametrize("early", EARLY, ids=[str(r.newest) for r in EARLY])
def test_the_prerelease_builds_with_its_toolchain_and_its_scheduler_takes_the_config(
    kplugin: Kplugin, tmp_path: Path, go_env: dict[str, str], early: MinorRelease
) -> None:
    beta = str(early.newest)
    # with a pod group's points too, whose types 1.38 changed (GenericPodGroup)
    run = kplugin("new", "early", "--k8s", beta, "--extension-points", every_point(beta), "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    local = golang.local_go()
    assert local is not None
    older = tuple(int(x) for x in local.split(".")[:2]) < tuple(int(x) for x in early.go_directive.split(".")[:2])
    selected = f"using {early.toolchain} (GOTOOLCHAIN; fetched once)"
    assert (selected in run.stderr) == older, run.stderr
    project = tmp_path / "early"
    assert (project / "go.sum").is_file()

    run = kplugin("build", str(project), "--builder", "local", "--json")
    assert run.code == 0, run.stderr
    (binary,) = json.loads(run.stdout)["binaries"]
    assert binary["version"] == f"Kubernetes v{beta}" and binary["static"]

    run = kplugin("render-config", str(project), "--validate")
    assert run.code == 0, run.stderr
    assert "accepts the configuration" in run.stderr

    # the generated tests, through the Makefile, with nothing exported but the test's flags;
    # with go test's vet, which the other tests leave to go vet and golangci-lint
    vetted = {**go_env, "GOFLAGS": go_env["GOFLAGS"].replace(" -vet=off", "")}
    test = subprocess.run(["make", "test"], cwd=project, env=vetted, capture_output=True, text=True, check=False)
    assert test.returncode == 0, test.stdout[-3000:] + test.stderr[-2000:]
    assert "ok  \texample.com/early/pkg/early" in test.stdout
    tests = (project / "pkg/early/plugin_test.go").read_text()
    assert "func TestGeneratePlacements(" in tests and "func TestScorePlacement(" in tests
    version = subprocess.run(["make", "-s", "-f", "-", "v"], cwd=project, env=go_env, capture_output=True, text=True,
                             input="include Makefile\nv:\n\t@$(GO) env GOVERSION\n", check=False)  # fmt: skip
    assert version.stdout.strip() == (early.toolchain if older else f"go{golang.local_go()}"), version.stderr
