"""Issue 15's proof in the real scheduler: the generated QueueingHints and SignPod.

Hints, at the oldest minor whose queue uses them by default and at the newest: a pod the
sample plugin's Filter rejects as UnschedulableAndUnresolvable (no node has the configured
label; nothing else rejects it: no nodeSelector, enough of the resource) gets no new
attempt when another label is added to a node, and is bound within seconds once a node
gains the configured label: long before the unschedulable-pod flush (5 minutes, left at
its default) could have retried it. Attempts and requeues come from the scheduler's own
log (e2e --json), the times from its kept log (--keep). The plugin's other two hints
(more of the resource on a node; a pod holding it deleted) the same way, with the
profile's NodeResourcesFit disabled so that the plugin alone rejects the pod.

SignPod, at the newest minor: the project's profile keeps batching on (no "Disabling
signatures" line in the scheduler's log); a copy of the project whose plugin no longer
has SignPod is a doctor warning (signpod-missing, with file:line) and brings the line back.

etcd is Debian's; kube-apiserver and the scheduler are built from the project's pin. One
project per minor, shared by the tests of this module, so each minor builds once (the
copy without SignPod rebuilds the plugin's package and links)."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import REPO, Kplugin, Run

from kplugin.cli import main
from kplugin.model.versions import newest_release

pytestmark = pytest.mark.integration

# SchedulerQueueingHints (pkg/features/kube_features.go): beta and on by default in
# 1.28.0-1.28.4, off from 1.28.5 to 1.31, on by default again from 1.32
# (versioned_kube_features.go); 1.37 has no gate. 1.28.3 is the oldest pin whose queue
# uses hints, with 1.28's hint values (QueueAfterBackoff, QueueSkip) through the adapter.
# 1.32-1.36 behave alike (hints on, the queue's preCheckForNode skipped, the hint logged
# up to 1.34): 1.36 stands for them, the minor whose control plane the pod-group tests
# start anyway (the oldest with the placement points), so the run compiles no Kubernetes
# of its own for this class (1.32 did: minutes cold). 1.28.3 covers the logged hint.
HINTS_EARLY = "1.28.3"
HINTS_ON = "1.36"
NEWEST = newest_release().key
FLUSH_SECONDS = 300  # podMaxInUnschedulablePodsDuration's default, which e2e leaves alone
ARGS = (REPO / "examples" / "e2e-args.yaml").read_text()  # nodeLabel example.com/accelerator, example.com/gpu
POD = "waits-for-label"

# neither node has the plugin's label: its Filter rejects the pod on both
# (UnschedulableAndUnresolvable), and only it: the pod has no selector and both nodes
# have the GPU it asks for
NODES_AND_POD = """\
nodes:
- {name: n1, labels: {zone: a}, capacity: {example.com/gpu: "2"}}
- {name: n2, labels: {zone: a}, capacity: {example.com/gpu: "2"}}
pods:
- {name: waits-for-label, requests: {example.com/gpu: "1"}}
"""
# another label on another node: the plugin's hint says QueueSkip
UNRELATED_STEPS = """\
steps:
- labelNode: {node: n2, labels: {team: ml}}
- wait: 5
"""
UNRELATED = NODES_AND_POD + UNRELATED_STEPS + "expect:\n  waits-for-label: pending\n"
# ... then the plugin's label on n1: the hint says Queue
LABELLED = (
    NODES_AND_POD
    + UNRELATED_STEPS
    + '- labelNode: {node: n1, labels: {example.com/accelerator: "true"}}\n'
    + "expect:\n  waits-for-label: n1\n"
)
DISABLING = "Disabling signatures for profile"


def cli(*args: str) -> Run:
    """The CLI in-process, outside a test's fixtures (for the module's projects)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CI", "true")
        with pytest.raises(SystemExit) as exit_:
            main(list(args))
    code = exit_.value.code
    return Run(code if isinstance(code, int) else 1, "", "")


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], Path]]:
    """A project per minor (the sample plugin with Filter, Score and EnqueueExtensions),
    made once for the module so that its scheduler is built once."""
    made: dict[str, Path] = {}

    def project(version: str) -> Path:
        if version not in made:
            where = tmp_path_factory.mktemp(f"hints-{version}")
            run = cli("new", "gpu", "--k8s", version, "-o", str(where),
                      "--extension-points", "filter,score,enqueueextensions")  # fmt: skip
            assert run.code == 0
            made[version] = where / "gpu"
        return made[version]

    yield project


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where e2e makes its working directories (--keep leaves them there)."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


def e2e(kplugin: Kplugin, project: Path, tmp_path: Path, scenario: str, *options: str) -> tuple[dict[str, Any], Path]:
    """Run the scenario with --keep --json: the report, and the scheduler's kept log."""
    tmp_path.mkdir(parents=True)
    (tmp_path / "scenario.yaml").write_text(scenario)
    (tmp_path / "args.yaml").write_text(ARGS)
    run = kplugin("e2e", str(project), "--scenario", str(tmp_path / "scenario.yaml"),
                  "--args", str(tmp_path / "args.yaml"), "--keep", "--json", *options)  # fmt: skip
    assert run.code == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["ok"] and report["work"], report
    log = Path(report["work"]) / "kube-scheduler.log"
    assert log.is_file(), report["work"]
    return report, log


# klog's header: Lmmdd hh:mm:ss.uuuuuu
_STAMP = re.compile(r"^[IWEF]\d{4} (\d{2}):(\d{2}):(\d{2}\.\d{6}) ")


def elapsed(start: str, end: str) -> float:
    """Seconds from one log line to a later one (klog gives no year: across midnight too)."""

    def of_day(line: str) -> float:
        match = _STAMP.match(line)
        assert match, line
        return int(match[1]) * 3600 + int(match[2]) * 60 + float(match[3])

    return (of_day(end) - of_day(start)) % 86400


def lines_about(log: Path, message: str, name: str = POD) -> list[str]:
    pod = re.compile(rf'(?:pod|entity)="default/{name}"')
    return [line for line in log.read_text(errors="replace").splitlines() if message in line and pod.search(line)]


@pytest.mark.parametrize("version", [HINTS_EARLY, HINTS_ON, NEWEST])
def test_a_label_requeues_the_pod_and_an_unrelated_one_does_not(
    kplugin: Kplugin, projects: Callable[[str], Path], tmp_path: Path, scratch: Path, version: str
) -> None:
    project = projects(version)

    # an unrelated label: no requeue, no new attempt; the pod waits
    report, log = e2e(kplugin, project, tmp_path / "unrelated", UNRELATED)
    assert (report["kubernetes"] + ".").startswith(version + "."), report["kubernetes"]
    (pod,) = report["pods"]
    assert (pod["node"], pod["attempts"], pod["requeues"]) == (None, 1, []), pod
    assert "does not have label example.com/accelerator" in pod["reason"], pod["reason"]
    # and node by node (kplugin's reporting plugin logs each node's Filter status; the
    # scheduler's message only counts them)
    assert pod["nodeRejections"] == [
        {"node": node, "plugin": "Gpu", "code": "UnschedulableAndUnresolvable",
         "reason": f"node {node} does not have label example.com/accelerator"}
        for node in ("n1", "n2")
    ], pod  # fmt: skip
    assert len(lines_about(log, "Attempting to schedule pod")) == 1
    # the queue asked the plugin's hint, which said QueueSkip ("pod" 1.28-1.36, "entity"
    # 1.37; the event is "NodeLabelChange" in 1.28's queue, "NodeUpdateNodeLabel" later)
    skipped = [line for line in log.read_text(errors="replace").splitlines()
               if "Event is not making" in line and POD in line
               and re.search(r'event="(NodeUpdateNodeLabel|NodeLabelChange)"', line)]  # fmt: skip
    assert len(skipped) == 1, skipped
    # e2e names that event for the pod where the log names the pod (1.28-1.36)
    if version != NEWEST:
        (event,) = pod["skippedEvents"]
        assert event["event"] in ("NodeUpdateNodeLabel", "NodeLabelChange") and event["count"] == 1, pod

    # then the plugin's label on a node: one requeue by that Node event, a second
    # attempt, bound at once
    report, log = e2e(kplugin, project, tmp_path / "labelled", LABELLED)
    (pod,) = report["pods"]
    assert (pod["node"], pod["attempts"]) == ("n1", 2), pod
    (requeue,) = pod["requeues"]
    assert "Node" in requeue["event"], requeue
    if "hint" in requeue:  # the minors whose queue logs it (1.28-1.34)
        assert requeue["hint"] in {"QueueAfterBackoff", "QueueImmediately"}, requeue
    moved = next(line for line in lines_about(log, "moved to an internal scheduling queue")
                 if f'event="{requeue["event"]}"' in line)  # fmt: skip
    (bound,) = lines_about(log, "Successfully bound pod to node")
    first, second = lines_about(log, "Attempting to schedule pod")
    after_label, waited = elapsed(moved, bound), elapsed(first, bound)
    print(f"{version}: requeued by {requeue}, bound {after_label:.3f}s after the scheduler saw the label, "
          f"{waited:.3f}s after the first attempt (the steps waited 5s)")  # fmt: skip
    # the label came after the 5 s step; the second attempt and the binding right after it
    assert elapsed(first, moved) >= 5 and elapsed(moved, second) <= after_label < 5, (first, moved, second, bound)
    # --json has the same times, in seconds after the pods were created: the attempts', and
    # the requeue's between them
    at_first, at_second = pod["attemptsAt"]
    assert 0 <= at_first < requeue["at"] <= at_second, pod  # the same millisecond, often
    assert abs((at_second - at_first) - elapsed(first, second)) < 0.002, (pod, first, second)
    assert abs((requeue["at"] - at_first) - elapsed(first, moved)) < 0.002, (pod, first, moved)
    # the whole wait (first attempt, the 5 s step, the label) is far below the flush
    assert waited < FLUSH_SECONDS / 10, (first, bound)
    assert report["scheduling"]["seconds"] < FLUSH_SECONDS / 10, report["scheduling"]


# The plugin's other two hints, for a pod it rejects for want of free GPUs. Only the
# plugin may reject it: NodeResourcesFit, which counts the same extended resource (and has
# hints of its own), is disabled in the profile.
FIT_OFF = ("--disable-default", "NodeResourcesFit")
WAITS = "waits-for-gpu"
# n1 has 1 GPU, the pod wants 2: more CPU is a QueueSkip, more GPUs a Queue
ALLOCATABLE = f"""\
nodes:
- {{name: n1, labels: {{example.com/accelerator: "true"}}, capacity: {{example.com/gpu: "1"}}}}
pods:
- {{name: {WAITS}, requests: {{example.com/gpu: "2"}}}}
steps:
- updateNode: {{node: n1, capacity: {{cpu: "16"}}}}
- wait: 5
- updateNode: {{node: n1, capacity: {{example.com/gpu: "4"}}}}
expect:
  {WAITS}: n1
"""
# n1's 2 GPUs are taken: deleting a pod without GPUs is a QueueSkip, the GPUs' holder a Queue
DELETED = f"""\
nodes:
- {{name: n1, labels: {{example.com/accelerator: "true"}}, capacity: {{example.com/gpu: "2"}}}}
pods:
- {{name: holds-gpus, nodeName: n1, requests: {{example.com/gpu: "2"}}}}
- {{name: holds-cpu, nodeName: n1, requests: {{cpu: "1"}}}}
- {{name: {WAITS}, requests: {{example.com/gpu: "1"}}}}
steps:
- deletePods: [holds-cpu]
- wait: 5
- deletePods: [holds-gpus]
expect:
  {WAITS}: n1
"""


@pytest.mark.parametrize("version", [HINTS_EARLY, HINTS_ON, NEWEST])
@pytest.mark.parametrize(
    ("scenario", "event"),
    [(ALLOCATABLE, "Allocatable"), (DELETED, "AssignedPodDelete")],
    ids=["allocatable", "deleted"],
)
def test_more_gpus_or_a_freed_gpu_requeue_the_pod_and_other_changes_do_not(
    kplugin: Kplugin,
    projects: Callable[[str], Path],
    tmp_path: Path,
    scratch: Path,
    version: str,
    scenario: str,
    event: str,
) -> None:
    """isSchedulableAfterNodeChange (more allocatable) and isSchedulableAfterPodDeleted in
    the real scheduler: the unrelated change of the same kind is skipped by the plugin's
    hint (one "not making pod schedulable" line for that event, no attempt), the related
    one requeues the pod, which is bound at its second attempt."""
    report, log = e2e(kplugin, projects(version), tmp_path / "run", scenario, *FIT_OFF)
    (pod,) = [p for p in report["pods"] if p["pod"] == WAITS]
    assert (pod["node"], pod["attempts"]) == ("n1", 2), pod
    (requeue,) = pod["requeues"]
    assert event in requeue["event"], requeue
    if "hint" in requeue:  # the minors whose queue logs it (1.28-1.34)
        assert requeue["hint"] in {"QueueAfterBackoff", "QueueImmediately"}, requeue
    text = log.read_text(errors="replace").splitlines()
    skipped = [line for line in text if "Event is not making" in line and WAITS in line and event in line]
    # 1.28's queue runs a pre-check of its own on a node event first (preCheckForNode in
    # eventhandlers.go: the pod must fit the node's resources), which drops the unrelated
    # change before any hint is asked; from 1.32 it skips that pre-check when hints are on,
    # and the plugin's hint says QueueSkip. A pod's deletion has no pre-check.
    asked = scenario == DELETED or version != HINTS_EARLY
    assert len(skipped) == (1 if asked else 0), skipped
    first, second = lines_about(log, "Attempting to schedule pod", WAITS)
    moved = next(line for line in lines_about(log, "moved to an internal scheduling queue", WAITS)
                 if f'event="{requeue["event"]}"' in line)  # fmt: skip
    # the unrelated change came first, then the 5 s step, then the one that requeues
    assert elapsed(first, moved) >= 5 and elapsed(moved, second) < 5, (first, moved, second)
    if asked:
        assert elapsed(first, skipped[0]) < elapsed(first, moved), (skipped, moved)


def signatures_disabled(log: Path) -> list[str]:
    return [line for line in log.read_text(errors="replace").splitlines() if DISABLING in line]


def test_signpod_keeps_batching_on_and_its_absence_is_a_warning(
    kplugin: Kplugin, projects: Callable[[str], Path], tmp_path: Path, scratch: Path
) -> None:
    project = projects(NEWEST)
    report, log = e2e(kplugin, project, tmp_path / "signed", LABELLED)
    assert lines_about(log, "Successfully bound pod to node"), "the scheduler's log, at work"
    assert signatures_disabled(log) == []  # the line is logged at V(0) when a profile has it
    run = kplugin("doctor", str(project), "--json")
    assert not [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "signpod-missing"], run.stdout

    # a copy whose plugin does not sign: the method and its assertion removed
    unsigned = tmp_path / "unsigned" / "gpu"
    shutil.copytree(project, unsigned, symlinks=True)
    plugin = unsigned / "pkg" / "gpu" / "plugin.go"
    text = plugin.read_text()
    start = text.index("var _ fw.SignPlugin = &Gpu{}")
    end = text.index("\n}\n", text.index("func (pl *Gpu) SignPod(")) + 3
    plugin.write_text(text[:start] + text[end:])
    assert "SignPod" not in plugin.read_text()

    run = kplugin("doctor", str(unsigned), "--json")
    (hit,) = [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "signpod-missing"]
    lines = plugin.read_text().splitlines()
    declared = next(i for i, line in enumerate(lines, 1) if line.startswith("type Gpu struct"))
    assert (hit["file"], hit["line"], hit["severity"]) == ("pkg/gpu/plugin.go", declared, "warning"), hit
    assert "without SignPod" in hit["what"] and DISABLING in hit["why"] and "SignPod" in hit["fix"], hit
    text_run = kplugin("doctor", str(unsigned))
    assert f"pkg/gpu/plugin.go:{declared}: warning: [signpod-missing]" in text_run.stdout, text_run.stdout

    # it builds and schedules as before, pod by pod: the scheduler says so for the profile
    report, log = e2e(kplugin, unsigned, tmp_path / "unsigned-run", LABELLED)
    assert [(p["pod"], p["node"]) for p in report["pods"]] == [(POD, "n1")]
    (line,) = signatures_disabled(log)
    assert f'profile="{report["schedulerName"]}"' in line and '"Gpu"' in line, line
    print(f"{NEWEST} without SignPod: {line}")


@pytest.fixture(autouse=True)
def _no_kept_directories_left(scratch: Path) -> Iterator[None]:
    yield
    for kept in scratch.iterdir():
        shutil.rmtree(kept, ignore_errors=True)
    assert os.listdir(scratch) == []
