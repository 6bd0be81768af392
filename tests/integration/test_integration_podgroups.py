"""A pod group's extension points in the real scheduler (issue 23): examples/rack-gang at
1.37 and at the pre-release in the catalog (its scheduler and kube-apiserver built with the
Go it needs), and its placement points at 1.36, the oldest minor that has them, replayed
on a control plane that kplugin e2e starts with the gates its points need
(GenericWorkload, TopologyAwareWorkloadScheduling; at 1.36 GangScheduling too, which a
gang needs there) and the API version that serves PodGroups. The plugin's
GeneratePlacements keeps the gang in one rack; the default profile spreads it over both."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support import REPO, Kplugin, example_at, example_pin, prereleases

from kplugin.model import points
from kplugin.model.points import ExtensionPoint
from kplugin.model.versions import resolve, supported_releases

pytestmark = pytest.mark.integration

# the example at its pin (1.37) and at each pre-release: 1.38 changed the types of a pod
# group's points (GenericPodGroup), which the example's layer maps
VERSIONS = [example_pin("rack-gang"), *prereleases()]
# the oldest minor with the placement points (1.36) differs from 1.37: ScorePlacement gets
# the group's cycle state there (no PlacementCycleState yet), PodGroups are served as
# scheduling.k8s.io/v1alpha2, and there is no PodGroupPostFilter
PLACEMENT_FIRST = str(resolve(str(ExtensionPoint.PLACEMENT_GENERATE.row.first)).version)  # its newest patch
PLACEMENTS = [PLACEMENT_FIRST, *VERSIONS]
SERVED = {PLACEMENT_FIRST: "scheduling.k8s.io/v1alpha2"}  # the pod-group API of a minor; v1beta1 from 1.37
# the gates e2e turns on for the example's points and pod groups: 1.36 has gang scheduling
# behind a gate of its own (without it, its scheduler placed the gang's pods in both racks)
GATES = {PLACEMENT_FIRST: "GangScheduling=true,GenericWorkload=true,TopologyAwareWorkloadScheduling=true"}

SCENARIO = REPO / "examples" / "rack-gang-scenario.yaml"
GANG = ("g-1", "g-2", "g-3", "g-4")


def served(version: str) -> str:
    return SERVED.get(version, "scheduling.k8s.io/v1beta1")


def rack_gang(kplugin: Kplugin, parent: Path, version: str) -> Path:
    """examples/rack-gang at ``version``. Before PodGroupPostFilter (1.37): a project made
    there by kplugin new with RackGang's two placement points, and the example's code for
    them, written once against internal/fw (the layer gives ScorePlacement the state each
    minor passes)."""
    if version != PLACEMENT_FIRST:
        return example_at(kplugin, "rack-gang", parent, version)
    run = kplugin("new", "rack-gang", "--k8s", version, "--extension-points", "placementgenerate,placementscore",
                  "--plugin", "RackGang", "-o", str(parent))  # fmt: skip
    assert run.code == 0, run.stderr
    example = (REPO / "examples/rack-gang/pkg/rackgang/plugin.go").read_text()
    placements = example.split("\n// PodGroupPostFilter runs when ")[0] + "\n"
    for gone in ("var _ fw.PodGroupPostFilterPlugin = &RackGang{}\n", '\t"fmt"\n'):
        assert gone in placements
        placements = placements.replace(gone, "")
    (parent / "rack-gang/pkg/rackgang/plugin.go").write_text(placements)
    return parent / "rack-gang"


def scenario_at(path: Path, version: str, parent: Path) -> Path:
    """The example's scenario with its PodGroup at the API version ``version`` serves."""
    if served(version) == "scheduling.k8s.io/v1beta1":
        return path
    text = path.read_text()
    assert "apiVersion: scheduling.k8s.io/v1beta1\n" in text
    moved = parent / path.name
    moved.write_text(text.replace("apiVersion: scheduling.k8s.io/v1beta1\n", f"apiVersion: {served(version)}\n"))
    return moved


@pytest.mark.parametrize("version", PLACEMENTS)
def test_a_placement_plugin_keeps_the_gang_in_one_rack(
    kplugin: Kplugin, tmp_path: Path, version: str, open_page: Any
) -> None:
    project = rack_gang(kplugin, tmp_path, version)
    scenario = scenario_at(SCENARIO, version, tmp_path)
    run = kplugin("e2e", str(project), "--scenario", str(scenario), "--json")
    assert run.code == 0, run.stderr[-3000:]
    said = [line for line in run.stderr.splitlines() if "kube-apiserver runs with" in line]
    gates = "--feature-gates=" + GATES.get(version, "GenericWorkload=true,TopologyAwareWorkloadScheduling=true")
    assert len(said) == 1 and f"kube-apiserver runs with {gates} " in said[0], run.stderr
    assert f"kube-scheduler with {gates}:" in said[0], said
    assert f"--runtime-config={served(version)}=true" in said[0], said
    result = json.loads(run.stdout)
    assert result["ok"] and result["kubernetes"] == version, result
    placed = {p["pod"]: p["node"] for p in result["pods"]}
    assert {placed[pod] for pod in GANG} <= {"a-1", "a-2"}, placed

    html = tmp_path / "whatif.html"
    run = kplugin("e2e", str(project), "--scenario", str(scenario), "--compare", "default", "--json",
                  "--report", str(html))  # fmt: skip
    assert run.code == 0, run.stderr[-3000:]
    compared = json.loads(run.stdout)
    moved = {m["pod"]: m for m in compared["moved"]}
    # the default profile has one placement of every node: its spread puts a pod on b-1
    assert any(m["default"]["node"] == "b-1" for m in moved.values()), compared["summary"]
    assert all(m["plugin"]["node"] in ("a-1", "a-2") for m in moved.values()), compared["moved"]
    # as a group: both profiles place the whole gang (the default's own gang scheduling),
    # the plugin's in one rack, the default's across both
    (group,) = compared["groups"]
    assert group["plugin"]["outcome"] == group["default"]["outcome"] == "all", group
    assert group["plugin"]["nodes"] == ["a-1", "a-2"] and "b-1" in group["default"]["nodes"], group
    # the report of another shape (a placement plugin, a gang), in a real browser: the group
    # as a group under both profiles, the moved pods
    page = open_page(html)
    assert page.errors == [], page.errors
    row = [c.inner_text() for c in page.locator("#groups tbody tr").first.locator("td").all()]
    assert row[0] == group["group"] and row[6] == "a-1, a-2" and "b-1" in row[8], row
    assert page.locator("#changes tbody tr").count() == len(compared["moved"]) + len(
        compared["becameSchedulable"] + compared["becameUnschedulable"]
    )
    page.screenshot(path=str(tmp_path / "whatif.png"), full_page=True)


@pytest.mark.parametrize("version", PLACEMENTS)
def test_the_placement_taken_and_each_placements_scores(
    kplugin: Kplugin, tmp_path: Path, version: str, open_page: Any
) -> None:
    """Both racks take the gang: the scheduler tries both placements RackGang generates and
    takes the best total; RackGang's PlacementScore (MaxScore over the nodes used) is what
    tips it to rack-b, one node. e2e reads the placements and their scores per plugin from
    the scheduler's log and shows them in --json, the text and the report."""
    project = rack_gang(kplugin, tmp_path, version)
    pack = scenario_at(REPO / "examples" / "rack-gang-pack-scenario.yaml", version, tmp_path)
    html = tmp_path / "pack.html"
    run = kplugin("e2e", str(project), "--scenario", str(pack), "--json", "--report", str(html))
    assert run.code == 0, run.stderr[-3000:]
    result = json.loads(run.stdout)
    assert result["ok"] and result["kubernetes"] == version, result
    (group,) = result["groups"]
    assert group["placement"] == "rack-b" and group["placementsTried"] == ["rack-a", "rack-b"], group
    scores = {s["placement"]: s for s in group["placementScores"]}
    assert [s["placement"] for s in group["placementScores"]] == ["rack-b", "rack-a"], group  # best first
    assert (scores["rack-b"]["plugins"]["RackGang"], scores["rack-a"]["plugins"]["RackGang"]) == (100, 50), scores
    for score in scores.values():  # the total is the plugins' (weights 1)
        assert score["total"] == sum(score["plugins"].values()), score
    assert f"; placement rack-b ({scores['rack-b']['total']}, rack-a {scores['rack-a']['total']})" in run.stderr
    page = open_page(html)
    assert page.errors == [], page.errors
    row = [c.inner_text() for c in page.locator("#groups tbody tr").first.locator("td").all()]
    assert row[-1].startswith("rack-b (scores: rack-b "), row


@pytest.mark.parametrize("version", PLACEMENTS)
def test_a_gang_that_does_not_fit_binds_no_pod_until_a_step_adds_capacity(
    kplugin: Kplugin, tmp_path: Path, version: str
) -> None:
    """All or nothing, in the real scheduler's GangScheduling: three of the four pods would
    fit, none is bound; without the step the four stay pending, with it (a node added to
    rack-a) all four are bound in rack-a. At 1.36 gang scheduling has a gate of its own,
    which e2e turns on with GenericWorkload."""
    project = rack_gang(kplugin, tmp_path, version)
    grow = scenario_at(REPO / "examples" / "rack-gang-grow-scenario.yaml", version, tmp_path)
    stuck = tmp_path / "stuck.yaml"
    stuck.write_text(grow.read_text().split("\nsteps:\n")[0] + "\n")  # the same, without the step
    # the scheduler's own log (-v 4, kept) shows RackGang's PodGroupPostFilter called for
    # the group (1.37 on): the configuration runs it before DefaultPreemption, which finds
    # no victims and would otherwise end the chain first
    run = kplugin("e2e", str(project), "--scenario", str(stuck), "--json", "--timeout", "8", "--keep",
                  "--scheduler-v", "4")  # fmt: skip
    assert run.code == 0, run.stderr[-3000:]
    kept = Path(run.stderr.rsplit("logs kept in ", 1)[1].split()[0])
    log = (kept / "kube-scheduler.log").read_text()
    shutil.rmtree(kept)
    called = [line for line in log.splitlines() if 'logger="PodGroupPostFilter.RackGang"' in line]
    if version == PLACEMENT_FIRST:  # no PodGroupPostFilter in 1.36, so none in its project
        assert called == [] and "podgrouppostfilter" not in (project / "kplugin.yaml").read_text()
    else:
        assert called and all('podGroup="default/gang"' in line and "waiting=4 needed=4" in line
                              for line in called), log[-3000:]  # fmt: skip
    result = json.loads(run.stdout)
    assert result["kubernetes"] == version, result
    pods = {p["pod"]: p for p in result["pods"]}
    assert {name: pods[name]["node"] for name in GANG} == dict.fromkeys(GANG), pods
    (group,) = result["groups"]
    assert group["attempts"] >= 1, group  # tried as a group (the scheduler's log), and held back
    del group["attempts"]
    assert group.pop("requeues") == [] and group.pop("backoffRetries") >= 0, group  # no event moved it
    # from 1.38 GangScheduling's PlacementFeasible refuses each rack, whose pods fall short
    # of minCount (the framework's V(4), which e2e asks for)
    minor = resolve(version).version
    feasible = (minor.major, minor.minor) >= points.parse_minor(str(ExtensionPoint.PLACEMENT_FEASIBLE.row.first))
    refused = [{"placement": rack, "plugin": "GangScheduling"} for rack in ("rack-a", "rack-b")] if feasible else []
    assert group.pop("placementsRefused") == refused, group
    assert group == {"group": "gang", "minCount": 4, "pods": 4, "bound": 0, "outcome": "none", "placed": False,
                     "nodes": [], "placement": None, "placementsTried": ["rack-a", "rack-b"],
                     "placementScores": []}  # fmt: skip
    run = kplugin("e2e", str(project), "--scenario", str(stuck), "--timeout", "8")
    assert "pod group gang (gang of 4): 0/4 bound (held back: all or nothing); " in run.stderr, run.stderr

    run = kplugin("e2e", str(project), "--scenario", str(grow), "--json")
    assert run.code == 0, run.stderr[-3000:]
    result = json.loads(run.stdout)
    assert result["ok"], result
    pods = {p["pod"]: p for p in result["pods"]}
    assert {pods[name]["node"] for name in GANG} == {"a-1", "a-2"}, pods
    (group,) = result["groups"]
    assert (group["bound"], group["outcome"], group["placed"], group["nodes"]) == (4, "all", True, ["a-1", "a-2"])
    assert group["attempts"] >= 2, group  # before the step and after it
    if version == PLACEMENT_FIRST:
        # 1.36's queue holds pods, not groups: a failed group cycle activates the group's
        # pods again (ForceActivate), so the gang is retried in a burst, not on an event
        assert any(r["event"] == "ForceActivate" for name in GANG for r in pods[name]["requeues"]), pods
    else:
        # the log tells what brought it back: its backoff's end (1.37 puts a failed gang in
        # the backoff queue with no plugin to wait for), or a cluster event
        assert group["backoffRetries"] + len(group["requeues"]) >= 1, group


def test_on_an_existing_cluster_the_scheduler_gets_the_gates_and_the_cluster_must_serve_pod_groups(
    kplugin: Kplugin, tmp_path: Path
) -> None:
    """--kubeconfig: kplugin starts only the scheduler, so it turns the gates on there and
    first asks the cluster whether it serves PodGroups (the user's kube-apiserver must
    run with the gates): one served gets the same placement, one that is not gets one line."""
    from kplugin.kube.controlplane import ControlPlane, apiserver_binary
    from kplugin.model.project import load

    project = example_at(kplugin, "rack-gang", tmp_path)
    loaded = load(project)
    apiserver = apiserver_binary(loaded, lambda _: None)
    gates = "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true"
    for work in ("gated", "plain"):
        (tmp_path / work).mkdir()
    with ControlPlane(tmp_path / "gated", apiserver, lambda _: None, loaded.gate_flags.apiserver) as plane:
        run = kplugin("e2e", str(project), "--scenario", str(SCENARIO), "--kubeconfig", str(plane.kubeconfig()),
                      "--json")  # fmt: skip
        assert run.code == 0, run.stderr[-3000:]
        said = [line for line in run.stderr.splitlines() if "runs with" in line]
        assert len(said) == 1, run.stderr
        assert said[0].endswith(
            f"kube-scheduler runs with {gates}: the plugins' points and the scenario's pod groups need them "
            "(and the cluster to serve podgroups of scheduling.k8s.io/v1beta1)"
        ), said
        placed = {p["pod"]: p["node"] for p in json.loads(run.stdout)["pods"]}
        assert {placed[pod] for pod in GANG} <= {"a-1", "a-2"}, placed
    with ControlPlane(tmp_path / "plain", apiserver, lambda _: None) as plane:
        run = kplugin("e2e", str(project), "--scenario", str(SCENARIO), "--kubeconfig", str(plane.kubeconfig()))
        assert run.code == 1
        errors = [line for line in run.stderr.splitlines() if line.startswith("kplugin: error:")]
        assert errors == [
            "kplugin: error: the cluster does not serve podgroups of scheduling.k8s.io/v1beta1, which the plugins' "
            "feature gates need: its kube-apiserver must run with the gates on and "
            "--runtime-config=scheduling.k8s.io/v1beta1=true"
        ], run.stderr
        assert "Traceback" not in run.stderr


@pytest.mark.parametrize("version", VERSIONS)
def test_a_high_priority_gang_preempts_its_way_in_through_the_pod_group_post_filter_chain(
    kplugin: Kplugin, tmp_path: Path, version: str
) -> None:
    """The pod group's PodGroupPostFilter chain in the real scheduler, when it finds
    victims: the project's RackGang runs first and says why the group waits, then the
    in-tree DefaultPreemption (the configuration keeps it last) evicts the low-priority
    pods of one rack and nominates its nodes, and the gang is bound there, all four."""
    project = example_at(kplugin, "rack-gang", tmp_path, version)
    preempt = REPO / "examples" / "rack-gang-preempt-scenario.yaml"
    run = kplugin("e2e", str(project), "--scenario", str(preempt), "--json", "--keep", "--scheduler-v", "4")
    assert run.code == 0, run.stderr[-3000:]
    kept = Path(run.stderr.rsplit("logs kept in ", 1)[1].split()[0])
    log = (kept / "kube-scheduler.log").read_text()
    shutil.rmtree(kept)
    lines = log.splitlines()
    ours = [i for i, line in enumerate(lines) if 'logger="PodGroupPostFilter.RackGang"' in line]
    evicted = [i for i, line in enumerate(lines) if "Preemptor Pod preempted victim Pod" in line]
    assert ours and evicted and ours[0] < evicted[0], log[-3000:]
    result = json.loads(run.stdout)
    assert result["kubernetes"] == version, result
    assert result["ok"], result  # the scenario's expect: the gang in rack-a, its two pods preempted
    pods = {p["pod"]: p for p in result["pods"]}
    assert {pods[name]["node"] for name in GANG} == {"a-1", "a-2"}, pods
    assert pods["low-b1"]["node"] == "b-1", pods
    for victim, node in (("low-a1", "a-1"), ("low-a2", "a-2")):
        # the log names the group and the domain its placement took; the node is the victim's own
        assert (pods[victim]["node"], pods[victim]["preemptedBy"], pods[victim]["preemptedOn"]) == (None, "gang", node)
    (group,) = result["groups"]
    assert (group["bound"], group["outcome"], group["placed"]) == (4, "all", True), group
    # what brought it back after the preemption is explained: the end of its backoff, or
    # the victims' deletion (AssignedPodDelete), whichever the scheduler saw first
    assert group["backoffRetries"] + len(group["requeues"]) >= 1, group
    run = kplugin("e2e", str(project), "--scenario", str(preempt))
    assert "why: preempted by pod group gang on a-1" in run.stdout, run.stdout


PERMIT_GANG = REPO / "examples" / "permit-gang-scenario.yaml"


def test_a_coscheduling_style_gang_and_a_native_gang_in_one_replay(
    kplugin: Kplugin, tmp_path: Path, go_env: dict[str, str]
) -> None:
    """examples/permit-gang at 1.37: its own PodGroup CRD (PermitGang's PreFilter and
    Permit) and the native PodGroup (the in-tree GangScheduling) in one scenario. With two
    of three pods each, no pod of either gang binds; the default profile, without
    PermitGang, binds the CRD gang's pods one by one. The step adds each gang's third pod:
    all six bind. Its Go tests hold pods at Permit in the real framework types."""
    project = example_at(kplugin, "permit-gang", tmp_path)
    for command in (["vet", "./..."], ["test", "-count=1", "./pkg/..."]):
        done = subprocess.run(["go", *command], cwd=project, env=go_env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    stuck = tmp_path / "stuck.yaml"
    pending = "".join(f"  {name}: pending\n" for name in ("crd-1", "crd-2", "native-1", "native-2"))
    stuck.write_text(PERMIT_GANG.read_text().split("\nsteps:\n")[0] + "\nexpect:\n" + pending)
    # no attempt for the native gang's pods: e2e reads that GangScheduling's PreEnqueue holds
    # them, and waits no longer (the default --timeout is 120 s)
    run = kplugin("e2e", str(project), "--scenario", str(stuck), "--json")
    assert run.code == 0, run.stderr[-3000:]
    pods = {p["pod"]: p for p in json.loads(run.stdout)["pods"]}
    for name in ("native-1", "native-2"):
        assert pods[name]["reason"] == (
            "held out of the scheduling queue by PreEnqueue plugin GangScheduling: "
            "waiting for minCount pods from a gang to appear in scheduling queue"
        ), pods[name]
    assert "PodGroup default/crd-gang has 2 of its minMember 3 pods" in pods["crd-1"]["reason"], pods["crd-1"]
    run = kplugin("e2e", str(project), "--scenario", str(stuck), "--compare", "default", "--json")
    assert run.code == 0, run.stderr[-3000:]
    diff = json.loads(run.stdout)
    changed = {c["pod"]: c for c in diff["becameUnschedulable"]}
    assert sorted(changed) == ["crd-1", "crd-2"], diff  # bound by the default profile, held by PermitGang
    for change in changed.values():
        assert change["default"]["node"] in ("node-1", "node-2"), change
        assert "PodGroup default/crd-gang has 2 of its minMember 3 pods" in change["plugin"]["reason"], change
    assert diff["summary"]["same"] == 2, diff  # the native gang's two pods, pending under both

    run = kplugin("e2e", str(project), "--scenario", str(PERMIT_GANG), "--json")
    assert run.code == 0, run.stderr[-3000:]
    result = json.loads(run.stdout)
    assert result["ok"] and (result["denied"], result["unserved"]) == ([], []), result
    pods = {p["pod"]: p for p in result["pods"]}
    assert {name: p["node"] is not None for name, p in pods.items()} == dict.fromkeys(pods, True), pods
    assert pods["crd-1"]["attempts"] >= 2, pods["crd-1"]  # turned away, then back with its sibling
    (group,) = result["groups"]  # the native one: the CRD's is the plugin's own kind
    assert (group["group"], group["bound"], group["outcome"]) == ("native-gang", 3, "all"), group


# PlacementFeasible (1.38 on): the first version that has it, as --k8s takes it (the
# pre-release until 1.38 is released)
FEASIBLE = next(
    (r.key if r.released else str(r.newest))
    for r in supported_releases()
    if points.parse_minor(r.key) >= points.parse_minor(str(ExtensionPoint.PLACEMENT_FEASIBLE.row.first))
)
WHOLE = REPO / "examples" / "rack-gang-whole-scenario.yaml"


def test_a_placement_feasible_plugin_refuses_a_rack_that_holds_the_gang_in_part(
    kplugin: Kplugin, tmp_path: Path
) -> None:
    """The gang's policy asks for 2 of its 4 pods, so GangScheduling alone takes rack-a,
    which holds 3 (RackGang's PlacementScore prefers its one node): examples/rack-gang, with
    no PlacementFeasible, binds 3 pods there (the fourth waits, or goes to rack-b in a later
    cycle, as the queue's timing has it: the gang is split either way). The same plugin made
    with PlacementFeasible refuses rack-a when its fourth pod does not fit (the scheduler's
    own log: "PodGroup placement rejected by plugin"), and the whole gang goes to rack-b;
    the default profile spreads it over both racks. The scenario's pods are a backlog
    (created before the scheduler starts): PlacementFeasible sees one pod-group cycle's
    pods, and pods arriving one at a time may start the gang's first cycle with 2 of them."""
    made = tmp_path / "feasible"
    run = kplugin("new", "rack-gang", "--k8s", FEASIBLE, "--plugin", "RackGang", "-o", str(made),
                  "--extension-points", "placementgenerate,placementfeasible,placementscore")  # fmt: skip
    assert run.code == 0, run.stderr
    project = made / "rack-gang"
    run = kplugin("e2e", str(project), "--scenario", str(WHOLE), "--json", "--keep", "--scheduler-v", "4")
    assert run.code == 0, run.stderr[-3000:]
    kept = Path(run.stderr.rsplit("logs kept in ", 1)[1].split()[0])
    log = (kept / "kube-scheduler.log").read_text()
    shutil.rmtree(kept)
    refused = [line for line in log.splitlines() if '"PodGroup placement rejected by plugin"' in line]
    assert refused and all('plugin="RackGang"' in line for line in refused), log[-3000:]
    result = json.loads(run.stdout)
    assert result["ok"] and result["kubernetes"] == FEASIBLE, result
    pods = {p["pod"]: p["node"] for p in result["pods"]}
    assert {pods[name] for name in GANG} == {"b-1", "b-2"}, pods
    (group,) = result["groups"]
    assert (group["bound"], group["outcome"], group["placement"]) == (4, "all", "rack-b"), group
    assert group["placementsTried"] == ["rack-a", "rack-b"], group
    assert group["placementsRefused"] == [{"placement": "rack-a", "plugin": "RackGang"}], group

    run = kplugin("e2e", str(project), "--scenario", str(WHOLE), "--compare", "default", "--json")
    assert run.code == 0, run.stderr[-3000:]
    compared = json.loads(run.stdout)
    (group,) = compared["groups"]
    assert group["plugin"]["nodes"] == ["b-1", "b-2"] and "a-1" in group["default"]["nodes"], group
    assert group["default"]["outcome"] == "all", group

    # the control: the example has no PlacementFeasible, and takes rack-a with 3 of 4
    partial = tmp_path / "partial.yaml"
    partial.write_text(WHOLE.read_text().split("\nexpect:\n")[0] + "\n")
    example = example_at(kplugin, "rack-gang", tmp_path / "example", FEASIBLE)
    run = kplugin("e2e", str(example), "--scenario", str(partial), "--json", "--timeout", "15")
    assert run.code == 0, run.stderr[-3000:]
    result = json.loads(run.stdout)
    pods = {p["pod"]: p["node"] for p in result["pods"]}
    assert [pods[name] for name in GANG].count("a-1") == 3, pods
    (group,) = result["groups"]
    assert group["bound"] in (3, 4) and group["outcome"] != "none", group
