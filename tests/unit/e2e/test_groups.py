"""Pod groups as groups in e2e's report (issue 23, item 4): membership from the pods'
schedulingGroup, the gang's minimum from its PodGroup, all or nothing per replay."""

from __future__ import annotations

from pathlib import Path

from support import REPO

from kplugin.e2e.groups import GroupOutcome, group_json, group_line, groups
from kplugin.e2e.logs import read_log
from kplugin.e2e.session import PodPlacement
from kplugin.scenario.format import load_scenario

GROW = REPO / "examples" / "rack-gang-grow-scenario.yaml"


def placed(**nodes: str | None) -> list[PodPlacement]:
    return [PodPlacement(pod, node, "" if node else "0/2 nodes are available") for pod, node in nodes.items()]


def test_a_gang_held_back_then_placed() -> None:
    scenario = load_scenario(GROW)
    (held,) = groups(scenario, placed(**{"g-1": None, "g-2": None, "g-3": None, "g-4": None}))
    assert held.key == "gang" and held.min_count == 4 and held.pods == ("g-1", "g-2", "g-3", "g-4")
    assert held.outcome is GroupOutcome.NONE and not held.placed
    assert group_line(held) == "pod group gang (gang of 4): 0/4 bound (held back: all or nothing)"
    (whole,) = groups(scenario, placed(**{"g-1": "a-1", "g-2": "a-2", "g-3": "a-1", "g-4": "a-2"}))
    assert whole.outcome is GroupOutcome.ALL and whole.placed and whole.nodes == ("a-1", "a-2")
    assert group_json(whole) == {
        "group": "gang",
        "minCount": 4,
        "pods": 4,
        "bound": 4,
        "outcome": "all",
        "placed": True,
        "nodes": ["a-1", "a-2"],
        "attempts": 0,
        "placement": None,  # no log read: not told
        "placementsTried": [],
        "placementsRefused": [],
        "placementScores": [],
        "requeues": [],
        "backoffRetries": 0,
    }


def test_a_basic_group_in_a_namespace_and_one_without_its_object(tmp_path: Path) -> None:
    """Another shape: no gang policy (placed when every pod is), a namespace, and pods that
    name a group the scenario does not hold (reported without a policy)."""
    scenario_file = tmp_path / "basic.yaml"
    scenario_file.write_text(
        "nodes:\n- {name: n1, capacity: {cpu: '4'}}\n"
        "objects:\n"
        "- apiVersion: scheduling.k8s.io/v1beta1\n  kind: PodGroup\n"
        "  metadata: {name: web, namespace: team}\n  spec: {schedulingPolicy: {basic: {}}}\n"
        "pods:\n"
        "- {name: w-1, namespace: team, schedulingGroup: {podGroupName: web}}\n"
        "- {name: w-2, namespace: team, schedulingGroup: {podGroupName: web}}\n"
        "- {name: o-1, schedulingGroup: {podGroupName: other}}\n"
        "- {name: alone}\n"
    )
    scenario = load_scenario(scenario_file)
    other, web = groups(scenario, placed(**{"team/w-1": "n1", "team/w-2": None, "o-1": "n1", "alone": "n1"}))
    assert (web.key, web.min_count, web.outcome, web.placed) == ("team/web", None, GroupOutcome.SOME, False)
    assert group_line(web) == "pod group team/web (no gang policy): 1/2 bound, on n1"
    assert (other.key, other.min_count, other.outcome, other.placed) == ("other", None, GroupOutcome.ALL, True)
    assert groups(load_scenario(REPO / "examples" / "steps-scenario.yaml"), []) == []


# a pod group's cycles as 1.37's schedule_one_podgroup.go logs them (V(3) and V(4))
GROUP_LOG = """\
I1205 20:40:01.100000       1 schedule_one_podgroup.go:126] "Attempting to schedule pod group" podGroupType="podgroup" podGroup="default/gang"
I1205 20:40:01.100100       1 schedule_one_podgroup.go:661] "Attempting to schedule a pod belonging to a pod group" podGroup="default/gang" pod="default/g-1"
I1205 20:40:01.100200       1 schedule_one_podgroup.go:661] "Attempting to schedule a pod belonging to a pod group" podGroup="default/gang" pod="default/g-2"
I1205 20:40:09.000000       1 schedule_one_podgroup.go:126] "Attempting to schedule pod group" podGroupType="podgroup" podGroup="default/gang"
I1205 20:40:09.000100       1 schedule_one_podgroup.go:661] "Attempting to schedule a pod belonging to a pod group" podGroup="default/gang" pod="default/g-1"
I1205 20:40:09.000200       1 schedule_one.go:117] "Attempting to schedule pod" pod="team/alone"
"""  # noqa: E501


def test_a_groups_cycles_and_its_pods_attempts_are_read_from_the_log() -> None:
    facts = read_log(GROUP_LOG.splitlines())
    assert {k: g.attempts for k, g in facts.groups.items()} == {"gang": 2}
    assert facts.attempts == {"g-1": 2, "g-2": 1, "team/alone": 1}
    (gang,) = groups(load_scenario(GROW), placed(**{"g-1": "a-1"}), facts.groups)
    assert gang.attempts == 2 and group_json(gang)["attempts"] == 2
    assert group_line(gang) == "pod group gang (gang of 4): 1/4 bound, on a-1; 2 attempt(s)"


def test_on_an_existing_cluster_a_groups_cycles_are_keyed_as_the_scenario_names_it() -> None:
    """There the run's namespaces are its own (kp-<run>-<name>): the log's group is mapped
    back as its pods are, and a group of another run's namespace is not counted."""
    own = {"kp-abc123-default": "default"}

    def key(reference: str) -> str | None:
        namespace, _, name = reference.partition("/")
        original = own.get(namespace)
        return None if original is None else (name if original == "default" else f"{original}/{name}")

    log = GROUP_LOG.replace('"default/', '"kp-abc123-default/').replace('pod="team/alone"', 'pod="other/alone"')
    facts = read_log(log.splitlines(), key)
    assert {k: g.attempts for k, g in facts.groups.items()} == {"gang": 2}
    assert facts.attempts == {"g-1": 2, "g-2": 1}


# real lines of kube-scheduler 1.37.2 (active_queue.go, backoff_queue.go,
# scheduling_queue.go): examples/rack-gang-grow-scenario.yaml's gang, which failed twice
# and came back each time when its backoff ended; one line made up (the NodeAdd) as a
# cluster event would move it
GROUP_MOVES = """\
I1206 05:17:53.879345   20026 scheduling_queue.go:823] "Entity moved to an internal scheduling queue, because it is gated" type="podgroup" entity="default/gang" event="UnscheduledPodAdd" queue="Unschedulable"
I1206 05:17:53.895333   20026 active_queue.go:414] "Entity moved to an internal scheduling queue" type="podgroup" entity="default/gang" event="UnscheduledPodAdd" queue="Active"
I1206 05:17:53.989163   20026 backoff_queue.go:314] "Entity moved to an internal scheduling queue" podGroupType="podgroup" podGroup="default/gang" type="podgroup" entity="default/gang" event="ScheduleAttemptFailure" queue="Backoff"
I1206 05:17:55.001364   20026 active_queue.go:414] "Entity moved to an internal scheduling queue" type="podgroup" entity="default/gang" event="BackoffComplete" queue="Active"
I1206 05:17:55.003481   20026 backoff_queue.go:314] "Entity moved to an internal scheduling queue" podGroupType="podgroup" podGroup="default/gang" type="podgroup" entity="default/gang" event="ScheduleAttemptFailure" queue="Backoff"
I1206 05:17:58.001998   20026 active_queue.go:414] "Entity moved to an internal scheduling queue" type="podgroup" entity="default/gang" event="BackoffComplete" queue="Active"
I1206 05:17:58.101998   20026 active_queue.go:414] "Entity moved to an internal scheduling queue" type="podgroup" entity="default/gang" event="NodeAdd" queue="Active"
I1206 05:17:58.201998   20026 active_queue.go:414] "Entity moved to an internal scheduling queue" type="pod" entity="default/g-1" event="NodeAdd" queue="Active"
"""  # noqa: E501


def test_a_groups_moves_are_its_own_and_its_backoff_retries_are_counted() -> None:
    facts = read_log(GROUP_MOVES.splitlines())
    gang = facts.groups["gang"]
    assert gang.backoffs == 2
    assert [(r.event, r.queue) for r in gang.requeues] == [("NodeAdd", "Active")]
    assert gang.requeues[0].at is not None
    # a pod's move stays the pod's, and the group's moves are not a pod's named "gang"
    assert [(r.event, r.queue) for r in facts.requeues["g-1"]] == [("NodeAdd", "Active")]
    assert "gang" not in facts.requeues
    (group,) = groups(load_scenario(GROW), placed(**{"g-1": None}), facts.groups)
    shown = group_json(group)
    assert shown["backoffRetries"] == 2 and [r["event"] for r in shown["requeues"]] == ["NodeAdd"]
    assert group_line(group).endswith(", 2 after a backoff; requeued by: NodeAdd (Active)")
