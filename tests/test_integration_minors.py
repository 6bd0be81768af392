"""One generator, several Kubernetes minors: the API drift (factory ctx in 1.29, test
helpers' move, PreScore NodeInfos in 1.30, PreFilter results in 1.31, Score NodeInfo in
1.33) is absorbed by the templates. Every supported minor: python -m kplugin.maintainer.matrix."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Run

from kplugin.versions import supported_releases

pytestmark = pytest.mark.integration
ALL_POINTS = "queuesort,prefilter,filter,prescore,score,reserve,permit,prebind,postbind"


def newest_minor() -> str:
    return supported_releases()[-1].key


@pytest.mark.parametrize("minor", ["1.30", newest_minor()])
def test_minor_builds_vets_and_passes(
    kplugin: Callable[..., Run], tmp_path: Path, minor: str, go_env: dict[str, str]
) -> None:
    run = kplugin("new", "drift", "--k8s", minor, "--extension-points", ALL_POINTS, "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    project = tmp_path / "drift"
    gomod = (project / "go.mod").read_text()
    assert f"k8s.io/kubernetes v{minor}." in gomod
    for cmd in (["go", "build", "./..."], ["go", "vet", "./..."], ["go", "test", "-count=1", "-v", "./..."]):
        proc = subprocess.run(cmd, cwd=project, env=go_env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"{cmd}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    out = proc.stdout
    for test in ["TestFilter", "TestScore", "TestBindingCycle", "TestQueueSort", "TestDecodeArgs"]:
        assert f"--- PASS: {test} " in out, test
    assert subprocess.run(["gofmt", "-l", "."], cwd=project, capture_output=True, text=True).stdout == ""


def test_newest_minor_scheduler_accepts_rendered_config(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    """The newest supported minor's real kube-scheduler, built by kplugin build, loads the
    configuration render-config makes, and rejects an unregistered plugin."""
    import json

    from ruamel.yaml import YAML

    from kplugin import render

    minor = newest_minor()
    assert kplugin("new", "newest", "--k8s", minor, "-o", str(tmp_path)).code == 0
    project = tmp_path / "newest"
    built = kplugin("build", str(project), "--builder", "local", "--json")
    assert built.code == 0, built.stderr
    (binary,) = json.loads(built.stdout)["binaries"]
    assert binary["version"].startswith(f"Kubernetes v{minor}.")
    args = tmp_path / "args.yaml"
    args.write_text("nodeLabel: example.com/pool\n")
    out = tmp_path / "config.yaml"
    run = kplugin(
        "render-config", str(project), "--weight", "Newest=4", "--args", str(args), "--validate", "-o", str(out)
    )
    assert run.code == 0, run.stderr
    written = tmp_path / "written.yaml"
    proc = subprocess.run(
        [
            binary["path"],
            "--config",
            str(out),
            "--write-config-to",
            str(written),
            "--secure-port=0",
            "--master=https://127.0.0.1:1",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    (profile,) = YAML(typ="safe").load(written)["profiles"]
    assert {"name": "Newest", "weight": 4} in profile["plugins"]["score"]["enabled"]
    assert {c["name"]: c["args"] for c in profile["pluginConfig"]}["Newest"] == {"nodeLabel": "example.com/pool"}
    accepted, message = render.validate(Path(binary["path"]), out.read_text().replace("name: Newest", "name: Ghost"))
    assert not accepted and '"Ghost" does not exist' in message
    assert kplugin("doctor", str(project)).code == 0
