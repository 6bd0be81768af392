"""kplugin render-config without Go: rendering, inputs, merge."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from support import Run

K = Callable[..., Run]


@pytest.fixture
def project(kplugin: K, tmp_path: Path) -> Path:
    run = kplugin(
        "new",
        "gpu-aware",
        "--k8s",
        "1.28.3",
        "--no-tidy",
        "-o",
        str(tmp_path),
        "--extension-points",
        "prefilter,filter,score",
    )
    assert run.code == 0, run.stderr
    return tmp_path / "gpu-aware"


def load(text: str) -> dict:  # type: ignore[type-arg]
    return YAML(typ="safe").load(text)  # type: ignore[no-any-return]


def test_default_is_the_generated_config(kplugin: K, project: Path) -> None:
    run = kplugin("render-config", str(project))
    assert run.code == 0, run.stderr
    assert run.stdout == (project / "deploy/scheduler-config.yaml").read_text()
    assert kplugin("render-config", str(project)).stdout == run.stdout


def test_sample_defaults_only_while_args_go_is_as_generated(kplugin: K, project: Path) -> None:
    """kplugin.yaml records the sha256 of the args.go it wrote: while the file is unchanged
    its defaults are the sample's; once edited (and no Go ran: --no-tidy) kplugin claims none."""
    plugin_args = lambda: load(kplugin("render-config", str(project)).stdout)["profiles"][0]["pluginConfig"][0]["args"]  # noqa: E731
    assert plugin_args() == {"resourceName": "cpu"}
    with (project / "pkg/gpuaware/args.go").open("a") as handle:
        handle.write("// edited\n")
    assert plugin_args() == {}


def test_start_up_loads_neither_the_generator_nor_openssl(project: Path) -> None:
    """render-config's start-up is a benchmark target (benchmarks/cli_startup.py): a
    render checks args.go's sha256 with the interpreter's own SHA-256, not hashlib (which
    loads OpenSSL), and imports nothing of the generator. A fresh interpreter, as a user
    runs it."""
    program = (
        "import sys; from kplugin.cli import main\n"
        "try:\n    main(['render-config', sys.argv[1], '-o', sys.argv[2]])\n"
        "except SystemExit as done:\n    assert not done.code, done.code\n"
        "print('\\n'.join(sorted(sys.modules)))"
    )
    out = project.parent / "rendered.yaml"
    run = subprocess.run([sys.executable, "-c", program, str(project), str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    loaded = set(run.stdout.split())
    assert "kplugin.core.digest" in loaded and out.read_text() == (project / "deploy/scheduler-config.yaml").read_text()
    unwanted = {"_hashlib", "hashlib", "jinja2", "cookiecutter", "kplugin.generate.scaffold", "kplugin.generate.sync"}
    assert not loaded & unwanted, sorted(loaded & unwanted)


def test_options(kplugin: K, project: Path, tmp_path: Path) -> None:
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"nodeLabel": "example.com/pool", "resourceName": "nvidia.com/gpu"}))
    run = kplugin(
        "render-config",
        str(project),
        "--weight",
        "GpuAware=3",
        "--args",
        str(args),
        "--scheduler-name",
        "gpu-a",
        "--scheduler-name",
        "gpu-b",
        "--leader-elect",
        "false",
        "--percentage-of-nodes-to-score",
        "100",
        "--disable-default",
        "NodeResourcesFit",
    )
    assert run.code == 0, run.stderr
    doc = load(run.stdout)
    assert doc["leaderElection"] == {"leaderElect": False}
    assert doc["percentageOfNodesToScore"] == 100
    assert [p["schedulerName"] for p in doc["profiles"]] == ["gpu-a", "gpu-b"]
    profile = doc["profiles"][0]
    assert profile["plugins"]["preFilter"] == {"enabled": [{"name": "GpuAware"}]}
    assert profile["plugins"]["score"] == {"enabled": [{"name": "GpuAware", "weight": 3}]}
    assert profile["plugins"]["multiPoint"] == {"disabled": [{"name": "NodeResourcesFit"}]}
    assert profile["pluginConfig"] == [
        {"name": "GpuAware", "args": {"nodeLabel": "example.com/pool", "resourceName": "nvidia.com/gpu"}}
    ]
    assert "&id" not in run.stdout and "*id" not in run.stdout


def test_lease_named_after_scheduler(kplugin: K, project: Path) -> None:
    doc = load(kplugin("render-config", str(project), "--scheduler-name", "gpu-a").stdout)
    assert doc["leaderElection"] == {"leaderElect": True, "resourceName": "gpu-a", "resourceNamespace": "kube-system"}


def test_multipoint(kplugin: K, project: Path) -> None:
    doc = load(kplugin("render-config", str(project), "--multipoint", "--weight", "GpuAware=2").stdout)
    assert doc["profiles"][0]["plugins"] == {"multiPoint": {"enabled": [{"name": "GpuAware", "weight": 2}]}}


def test_disable_all_warns(kplugin: K, project: Path) -> None:
    run = kplugin("render-config", str(project), "--disable-default", "*")
    assert run.code == 0
    assert "debugging" in run.stderr
    assert load(run.stdout)["profiles"][0]["plugins"]["multiPoint"]["disabled"] == [{"name": "*"}]


def test_v1beta3_where_served(kplugin: K, project: Path) -> None:
    doc = load(kplugin("render-config", str(project), "--api-version", "v1beta3").stdout)
    assert doc["apiVersion"] == "kubescheduler.config.k8s.io/v1beta3"


def test_formats_agree_with_deploy_and_chart(kplugin: K, project: Path) -> None:
    cm = kplugin("render-config", str(project), "--format", "configmap").stdout
    assert cm == (project / "deploy/configmap.yaml").read_text()
    values = load(kplugin("render-config", str(project), "--format", "helm-values").stdout)
    chart = load((project / "charts/gpu-aware/values.yaml").read_text())
    assert values["schedulerConfig"] == chart["schedulerConfig"]
    assert values["schedulerName"] == chart["schedulerName"]


def test_output_file_and_force(kplugin: K, project: Path, tmp_path: Path) -> None:
    out = tmp_path / "config.yaml"
    assert kplugin("render-config", str(project), "-o", str(out)).code == 0
    assert out.read_text() == (project / "deploy/scheduler-config.yaml").read_text()
    again = kplugin("render-config", str(project), "-o", str(out), "--weight", "GpuAware=5")
    assert again.code == 2 and "--force" in again.stderr
    assert kplugin("render-config", str(project), "-o", str(out), "--weight", "GpuAware=5", "--force").code == 0
    assert "weight: 5" in out.read_text()


BAD = [
    (["--weight", "GpuAware=0"], "GpuAware=0"),
    (["--weight", "GpuAware=-1"], "GpuAware=-1"),
    (["--weight", "GpuAware=abc"], "GpuAware=abc"),
    (["--weight", "Other=2"], "'Other'"),
    (["--weight", "GpuAware"], "PLUGIN=N"),
    (["--api-version", "v1beta3", "--k8s", "1.29"], "v1beta3"),
    (["--api-version", "v1beta2"], "v1beta2"),
    (["--k8s", "1.27.0"], "1.27"),
    (["--format", "xml"], "'xml'"),
    (["--leader-elect", "maybe"], "'maybe'"),
    (["--percentage-of-nodes-to-score", "101"], "101"),
    (["--scheduler-name", "default-scheduler"], "'default-scheduler'"),
]


@pytest.mark.parametrize(("args", "named"), BAD)
def test_bad_input(kplugin: K, project: Path, tmp_path: Path, args: list[str], named: str) -> None:
    out = tmp_path / "out.yaml"
    run = kplugin("render-config", str(project), *args, "-o", str(out))
    assert run.code == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0], run.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ("nodeLabel: [unclosed\n", "not valid YAML"),
        ('{"nodeLabel": ', "not valid YAML"),
        ("- a\n- b\n", "must be a mapping"),
        ("{7: x}\n", "must be a mapping of field names"),
    ],
)
def test_bad_args_file(kplugin: K, project: Path, tmp_path: Path, content: str, named: str) -> None:
    args = tmp_path / "args.yaml"
    args.write_text(content)
    out = tmp_path / "out.yaml"
    run = kplugin("render-config", str(project), "--args", str(args), "-o", str(out))
    assert run.code == 2, run.stderr
    assert named in run.stderr and str(args) in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_output_in_missing_directory(kplugin: K, project: Path, tmp_path: Path) -> None:
    run = kplugin("render-config", str(project), "-o", str(tmp_path / "missing/config.yaml"))
    assert run.code == 2 and "does not exist" in run.stderr
    assert not (tmp_path / "missing").exists()


def test_not_a_project(kplugin: K, tmp_path: Path) -> None:
    run = kplugin("render-config", str(tmp_path))
    assert run.code == 2 and "not a kplugin project" in run.stderr


def test_corrupt_project_file(kplugin: K, project: Path) -> None:
    (project / "kplugin.yaml").write_text("name: [\n")
    run = kplugin("render-config", str(project))
    assert run.code == 2 and "kplugin.yaml" in run.stderr and "not valid YAML" in run.stderr


HAND_WRITTEN = """\
# Cluster scheduler configuration, maintained by hand.
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true   # keep HA
  resourceName: gpu-aware
  resourceNamespace: kube-system
profiles:
- schedulerName: default-scheduler
  # the default profile: untouched by kplugin
  plugins:
    score:
      enabled:
      - name: ImageLocality
        weight: 5  # images are big here
- schedulerName: gpu-aware
  plugins:
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 2  # ours
      - name: GpuAware
        weight: 9
  pluginConfig:
  - name: GpuAware
    args:
      resourceName: memory
"""


def test_merge_keeps_comments_and_other_profiles(kplugin: K, project: Path, tmp_path: Path) -> None:
    existing = tmp_path / "scheduler.yaml"
    existing.write_text(HAND_WRITTEN)
    run = kplugin("render-config", str(project), "--merge", str(existing), "--weight", "GpuAware=4")
    assert run.code == 0, run.stderr
    merged = existing.read_text()
    # byte for byte up to the changed profile
    head = HAND_WRITTEN[: HAND_WRITTEN.index("- schedulerName: gpu-aware")]
    assert merged.startswith(head)
    assert "weight: 2  # ours" in merged
    doc = load(merged)
    default, ours = doc["profiles"]
    assert default == load(HAND_WRITTEN)["profiles"][0]
    assert ours["plugins"]["score"]["enabled"] == [
        {"name": "NodeResourcesFit", "weight": 2},
        {"name": "GpuAware", "weight": 4},
    ]
    assert ours["plugins"]["preFilter"] == {"enabled": [{"name": "GpuAware"}]}
    assert ours["pluginConfig"] == [{"name": "GpuAware", "args": {"resourceName": "cpu"}}]


def test_merge_adds_a_missing_profile(kplugin: K, project: Path, tmp_path: Path) -> None:
    existing = tmp_path / "scheduler.yaml"
    existing.write_text(HAND_WRITTEN)
    run = kplugin("render-config", str(project), "--merge", str(existing), "--scheduler-name", "gpu-two")
    assert run.code == 0, run.stderr
    merged = existing.read_text()
    assert merged.startswith(HAND_WRITTEN)
    assert [p["schedulerName"] for p in load(merged)["profiles"]] == ["default-scheduler", "gpu-aware", "gpu-two"]


def test_merge_malformed(kplugin: K, project: Path, tmp_path: Path) -> None:
    existing = tmp_path / "scheduler.yaml"
    existing.write_text("profiles: [\n")
    run = kplugin("render-config", str(project), "--merge", str(existing))
    assert run.code == 2 and "not valid YAML" in run.stderr
    assert existing.read_text() == "profiles: [\n"


# --- kplugin's cache directory (Jinja bytecode, e2e's kube-apiserver builds) ---------


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"KPLUGIN_CACHE_DIR": "/c/kp", "XDG_CACHE_HOME": "/c/xdg"}, "/c/kp"),
        ({"XDG_CACHE_HOME": "/c/xdg"}, "/c/xdg/kplugin"),
        ({"HOME": "/c/home"}, "/c/home/.cache/kplugin"),
    ],
)
def test_where_the_cache_lives(monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], expected: str) -> None:
    from kplugin.core import cache

    for name in ("KPLUGIN_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert cache.root() == Path(expected)


def test_one_cached_file_is_made_once_by_runs_at_the_same_time(tmp_path: Path) -> None:
    """cache.exclusive: a second maker waits for the first, then finds the file made (two
    kplugin e2e runs, or two test workers, building the same kube-apiserver)."""
    import threading

    from kplugin.core import cache

    target = tmp_path / "kube-apiserver-v1.28.3"
    made: list[str] = []
    first_in, first_may_leave = threading.Event(), threading.Event()

    def make(who: str) -> None:
        with cache.exclusive(target):
            if who == "first":
                first_in.set()
                first_may_leave.wait(10)
            if not target.exists():
                target.write_text(who)
                made.append(who)

    first = threading.Thread(target=make, args=("first",))
    first.start()
    assert first_in.wait(10)
    second = threading.Thread(target=make, args=("second",))
    second.start()
    second.join(0.5)
    assert second.is_alive(), "the second maker waits while the first holds the lock"
    first_may_leave.set()
    first.join(10)
    second.join(10)
    assert made == ["first"] and target.read_text() == "first"
