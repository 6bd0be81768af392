# ruff: noqa: E501 - real log lines, verbatim
"""The replay's parts without a control plane: the scheduler's log lines of the oldest
and the newest minor (attempts, requeues with their events, preemptions), resource
arithmetic, label selectors, following pods through watch events, and the comparison
of two replays."""

from __future__ import annotations

from pathlib import Path

import pytest

from kplugin.core.errors import UsageError
from kplugin.core.progress import Quiet
from kplugin.e2e import compare, create, logs, replay, run, usage
from kplugin.e2e.logs import Preemption, Requeue
from kplugin.e2e.session import CreationTotals, PodPlacement, ProfileLabel, ReplayProfile, Session
from kplugin.e2e.watch import NOMINATION_SETTLED, PodState, PodWatch, is_decided, meets
from kplugin.kube import labelselector
from kplugin.scenario import entries
from kplugin.scenario.format import DELETED, PENDING, PREEMPTED, Node, Pod, Scenario, Step, StepAction

# real lines of kube-scheduler 1.28.3 (schedule_one.go, scheduling_queue.go, preemption.go)
LOG_1_28 = """\
I1203 20:40:01.100000       1 schedule_one.go:93] "Attempting to schedule pod" pod="default/waits"
I1203 20:40:01.100100       1 scheduling_queue.go:699] "Pod moved to an internal scheduling queue" pod="default/waits" event="ScheduleAttemptFailure" queue="Unschedulable"
I1203 20:40:03.000000       1 scheduling_queue.go:1110] "Pod moved to an internal scheduling queue" pod="default/waits" event="NodeLabelChange" queue="Active" hint=1
I1203 20:40:03.000100       1 schedule_one.go:93] "Attempting to schedule pod" pod="default/waits"
I1203 20:40:03.000200       1 schedule_one.go:93] "Attempting to schedule pod" pod="ml/urgent"
I1203 20:40:03.000300       1 preemption.go:385] "Preemptor Pod preempted victim Pod" preemptor="ml/urgent" victim="default/batch-1" node="gpu-1"
I1203 20:40:03.000400       1 scheduling_queue.go:537] "Pod moved to an internal scheduling queue" pod="ml/urgent" event="PodAdd" queue="Active"
"""
# and of 1.37.2 (the queue logs entities, from active_queue.go and backoff_queue.go)
LOG_1_37 = """\
I1203 20:41:01.000000       1 schedule_one.go:117] "Attempting to schedule pod" pod="default/late-2"
I1203 20:41:01.000100       1 scheduling_queue.go:1137] "Pod moved to an internal scheduling queue" pod="default/late-2" event="ScheduleAttemptFailure" queue="Unschedulable" schedulingCycle=4 hint="QueueSkip" unschedulable plugins=["NodeUnschedulable"]
I1203 20:41:04.000000       1 active_queue.go:414] "Entity moved to an internal scheduling queue" type="Pod" entity="default/late-2" event="UpdateNodeTaint" queue="Active"
I1203 20:41:04.000100       1 backoff_queue.go:314] "Entity moved to an internal scheduling queue" type="Pod" entity="default/other" event="AddNode" queue="Backoff"
I1203 20:41:04.000200       1 schedule_one.go:117] "Attempting to schedule pod" pod="default/late-2"
I1203 20:41:04.000300       1 executor.go:153] "Preemptor Pod preempted victim Pod" preemptor="default/big" victim="default/small" node="n1"
"""


def at(header: str) -> float:
    """A klog header's time, as read_log reads it (the year is this one's, or the last)."""
    when = logs.line_time(header)
    assert when is not None
    return when


def test_log_of_the_oldest_minor() -> None:
    facts = logs.read_log(LOG_1_28.splitlines())
    assert facts.attempts == {"waits": 2, "ml/urgent": 1}
    assert facts.requeues == {
        "waits": [Requeue("NodeLabelChange", "Active", "QueueAfterBackoff", at("I1203 20:40:03.000000"))]
    }, "own arrivals and failures are not"
    assert facts.attempt_times["waits"] == [at("I1203 20:40:01.100000"), at("I1203 20:40:03.000100")]
    assert round(facts.attempt_times["waits"][1] - facts.attempt_times["waits"][0], 6) == 1.9001
    assert facts.preempted == {"batch-1": Preemption("ml/urgent", "gpu-1")}


def test_log_of_the_newest_minor() -> None:
    facts = logs.read_log(LOG_1_37.splitlines())
    assert facts.attempts == {"late-2": 2}
    assert facts.requeues == {
        "late-2": [Requeue("UpdateNodeTaint", "Active", at=at("I1203 20:41:04.000000"))],
        "other": [Requeue("AddNode", "Backoff", at=at("I1203 20:41:04.000100"))],
    }
    assert facts.preempted == {"small": Preemption("big", "n1")}


# and of 1.32.13 (a real run of tests/integration/test_integration_hints.py): the pod's own arrival
# is "UnschedulablePodAdd", and the label's move is logged twice, without and with its hint
LOG_1_32 = """\
I1203 22:53:50.806517   25273 scheduling_queue.go:587] "Pod moved to an internal scheduling queue" pod="default/waits-for-label" event="UnschedulablePodAdd" queue="Active"
I1203 22:53:50.806621   25273 schedule_one.go:99] "Attempting to schedule pod" pod="default/waits-for-label"
I1203 22:53:50.807096   25273 scheduling_queue.go:794] "Pod moved to an internal scheduling queue" pod="default/waits-for-label" event="ScheduleAttemptFailure" queue="Unschedulable" schedulingCycle=2 hint=0 unschedulable plugins={"Gpu":{}}
I1203 22:53:52.075865   25273 scheduling_queue.go:1124] "Event is not making pod schedulable" pod="default/waits-for-label" event="NodeUpdateNodeLabel"
I1203 22:53:57.077607   25273 scheduling_queue.go:587] "Pod moved to an internal scheduling queue" pod="default/waits-for-label" event="NodeUpdateNodeLabel" queue="Active"
I1203 22:53:57.077642   25273 scheduling_queue.go:1130] "Pod moved to an internal scheduling queue" pod="default/waits-for-label" event="NodeUpdateNodeLabel" queue="Active" hint=1
I1203 22:53:57.077730   25273 schedule_one.go:99] "Attempting to schedule pod" pod="default/waits-for-label"
"""


def test_log_of_a_minor_that_logs_each_move_twice() -> None:
    """Read as the replay reads the file: lines with their newlines."""
    facts = logs.read_log(LOG_1_32.splitlines(keepends=True))
    assert facts.attempts == {"waits-for-label": 2}
    # one move, at the time it was first logged
    first = at("I1203 22:53:57.077607")
    assert facts.requeues == {"waits-for-label": [Requeue("NodeUpdateNodeLabel", "Active", "QueueAfterBackoff", first)]}


def test_log_keys_map_to_the_scenario() -> None:
    """On an existing cluster pods live in kplugin's namespaces: the key maps them back."""
    facts = logs.read_log(LOG_1_28.splitlines(), key=lambda ref: "x" if ref == "ml/urgent" else None)
    assert facts.attempts == {"x": 1} and facts.preempted == {}


def test_quantities() -> None:
    assert [usage.milli(q) for q in ("1", "500m", "1.5", "2Ki", "1G", "0")] == [1000, 500, 1500, 2048000, 10**12, 0]
    assert [usage.shown("cpu", a) for a in (1500, 2000)] == ["1500m", "2"]
    assert usage.shown("memory", 4 * 1024**3 * 1000) == "4Gi" and usage.shown("memory", 1500 * 1000) == "1500"
    with pytest.raises(ValueError):
        usage.milli("lots")


def test_pod_requests_count_init_and_sidecar_containers_and_overhead() -> None:
    containers = [{"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}, {"name": "none"}]
    init = [
        {"resources": {"requests": {"cpu": "3"}}},  # alone, before the sidecar
        {"restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},  # a sidecar
        {"resources": {"requests": {"cpu": "1", "memory": "4Gi"}}},  # with the sidecar running
    ]
    got = usage.pod_requests(containers, init, {"cpu": "100m"})
    assert got == {"cpu": 3000 + 100, "memory": 4 * 1024**3 * 1000}


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ("app=web", {"app": "web"}, True),
        ("app==web,tier!=db", {"app": "web", "tier": "db"}, False),
        ("env in (a, b),!canary", {"env": "b"}, True),
        ("env notin (a),gpu", {"env": "c", "gpu": ""}, True),
        ("env in (a,b)", {}, False),
    ],
)
def test_label_selectors(selector: str, labels: dict[str, str], matches: bool) -> None:
    assert labelselector.parse(selector)(labels) is matches


def test_a_bad_selector() -> None:
    with pytest.raises(UsageError, match=r"reschedule selector 'app=Web Server': 'app=Web Server' is not"):
        labelselector.parse("app=Web Server")


def event(
    kind: str, name: str, uid: str = "1", node: str | None = None, **status: object
) -> tuple[str, dict[str, object]]:
    return kind, {
        "metadata": {"name": name, "namespace": "default", "uid": uid},
        "spec": {"nodeName": node},
        "status": status,
    }


def test_following_pods_through_watch_events() -> None:
    watch = PodWatch(client=None, path="", key=lambda ns, name: name)  # type: ignore[arg-type]
    unschedulable = {"conditions": [{"type": "PodScheduled", "status": "False", "message": "0/3 nodes fit"}]}
    for kind, obj in (
        event("ADDED", "a"),
        event("MODIFIED", "a", node="n1"),
        event("ADDED", "b"),
        event("MODIFIED", "b", **unschedulable),
        event("ADDED", "c"),
        event("MODIFIED", "c", nominatedNodeName="n2", **unschedulable),
        event("ADDED", "d", node="n1"),
        event("DELETED", "d", node="n1"),
    ):
        watch._update(kind, obj)
    states = watch.snapshot()
    assert (states["a"].node, states["b"].reason, states["c"].nominated) == ("n1", "0/3 nodes fit", "n2")
    assert [is_decided(states[k]) for k in "abcd"] == [True, True, False, True], "a preemptor waits"
    # ... until nothing changed for longer than the scheduler's longest backoff: its
    # nomination is left over from a cycle whose outcome is final
    assert not is_decided(states["c"], quiet=NOMINATION_SETTLED - 1) and is_decided(states["c"], NOMINATION_SETTLED)
    assert meets(states["d"], (PREEMPTED,)) and meets(states["b"], (PENDING,))
    assert not meets(states["a"], ("n2",)) and meets(states["a"], ("n1", "n2"))
    watch._update(*event("ADDED", "d", uid="2"))  # deleted, then made again by a step
    assert watch.snapshot()["d"] == PodState(uid="2")


def test_log_detail_keeps_the_log_small() -> None:
    small = Scenario(nodes=(Node("n"),), pods=(Pod("p"),))
    assert replay.detail_level(small) == (
        f"{logs.SCORE_VMODULE},{logs.QUEUE_VMODULE}",
        "scores, attempts, requeues",
    )
    big = Scenario(nodes=tuple(Node(f"n{i}") for i in range(5000)), pods=tuple(Pod(f"p{i}") for i in range(50_000)))
    # above 5,000 pods no requeues, but the pods a PreEnqueue plugin holds all the same
    # (issue 44, item 8: they were found only when --timeout ran out)
    assert replay.detail_level(big) == (f"{logs.ATTEMPT_VMODULE},{logs.HELD_VMODULE}", "attempts, held pods")
    assert "scheduling_queue=4" in logs.HELD_VMODULE
    # a snapshot's bound pods log no scores: 500 nodes with 1,500 bound and 500 to place
    nodes = tuple(Node(f"n{i}") for i in range(500))
    bound = tuple(Pod(f"b{i}", node_name=f"n{i % 500}") for i in range(1500))
    snapshot = Scenario(nodes=nodes, pods=(*bound, *(Pod(f"p{i}") for i in range(500))))
    assert replay.detail_level(snapshot) == (f"{logs.SCORE_VMODULE},{logs.QUEUE_VMODULE}", "scores, attempts, requeues")
    more = Scenario(nodes=nodes, pods=tuple(Pod(f"p{i}") for i in range(501)))
    assert replay.detail_level(more) == (f"{logs.ATTEMPT_VMODULE},{logs.QUEUE_VMODULE}", "attempts, requeues")


def placement(pod: str, node: str | None, **more: object) -> PodPlacement:
    return PodPlacement(pod, node, more.pop("reason", "") if node is None else "", **more)  # type: ignore[arg-type]


def session(profile: str, placements: list[PodPlacement]) -> Session:
    return Session(profile, profile, placements, CreationTotals(10, 1.0), 3, 0.5, "admin")


def test_the_comparison_of_two_replays() -> None:
    from kplugin.e2e.run import Inputs
    from kplugin.model import project, schedconfig

    nodes = (
        Node("a", capacity={"cpu": "4", "memory": "8Gi", "pods": "110"}),
        Node("b", capacity={"cpu": "4", "memory": "8Gi", "pods": "110"}),
    )
    pods = tuple(Pod(n, requests={"cpu": "1"}) for n in ("bound", "moves", "stays", "lost", "won", "victim", "gone"))
    scenario = Scenario(
        nodes=nodes,
        pods=pods,
        steps=(Step(StepAction.DELETE_PODS, pod_keys=(("default", "gone"),)),),
    )
    meta = project.parse(nodes[0].name and __import__("pathlib").Path("/x"), {
        "name": "p", "module": "example.com/p", "kubernetes": "1.28.3", "schedulerName": "p", "image": "p:1",
        "plugins": [{"name": "P", "extensionPoints": ["filter"]}],
    })  # fmt: skip
    inputs = Inputs(meta, scenario, schedconfig.SchedulerConfig(("p",), meta.plugins), None)
    plugin = session(
        "plugin",
        [
            placement("bound", "a", bound_before=True),
            placement("moves", "a", scores=(logs.NodeScore("a", 90, {"P": 90}), logs.NodeScore("b", 10, {"P": 10}))),
            placement("stays", "b"),
            placement("lost", None, reason="0/2 nodes: P said no"),
            placement("won", "a"),
            placement("victim", None, bound_before=True, preempted_by="won", preempted_on="a"),
            placement("gone", None, deleted=True),
        ],
    )
    default = session(
        "default",
        [
            placement("bound", "a", bound_before=True),
            placement("moves", "b", scores=(logs.NodeScore("b", 50, {}), logs.NodeScore("a", 50, {}))),
            placement("stays", "b"),
            placement("lost", "b"),
            placement("won", None, reason="0/2 nodes: Insufficient cpu"),
            placement("victim", "a", bound_before=True),
            placement("gone", None, deleted=True),
        ],
    )
    result = compare.compare(inputs, plugin, default, 12.0)
    assert (result.compared, result.same) == (4, 1)
    assert [c.pod for c in result.moved] == ["moves"]
    assert [c.pod for c in result.became_unschedulable] == ["lost"]
    assert [c.pod for c in result.became_schedulable] == ["won"]
    assert result.victims == {"plugin": [compare.Victim("victim", "won", "a")], "default": []}
    use = {(u.node, u.resource): (u.plugin, u.default) for u in result.use}
    assert use == {
        ("a", "cpu"): (3000, 2000),  # bound, moves, won vs bound, victim
        ("a", "pods"): (3000, 2000),
        ("b", "cpu"): (1000, 3000),
        ("b", "pods"): (1000, 3000),
    }
    assert result.totals == {"cpu": (4000, 5000), "pods": (4000, 5000)}
    text = compare.text(result)
    assert text.splitlines()[0] == (
        "what-if on Kubernetes 1.28.3: 4 pod(s) compared: 1 placed alike, 1 moved, 1 became schedulable, "
        "1 became unschedulable; preempted: plugin 1, default 0"
    )
    assert "  moves                          a -> b  (a tie of best scores with the default profile" in text
    assert "      plugin:\n        node  total   P\n        a        90  90\n        b        10  10\n" in text
    assert "      plugin: 0/2 nodes: P said no" in text and "  victim                         by won on a" in text
    document = compare.as_json(result)
    assert document["summary"]["preempted"] == {"plugin": 1, "default": 0}
    assert document["nodeUse"][0] == {"node": "a", "resource": "cpu", "allocatable": "4", "plugin": "3", "default": "2"}
    assert document["moved"][0]["default"]["tied"] is True
    assert PodPlacement("x", None, "", deleted=True).where == DELETED


def test_objects_keep_only_what_replays_read() -> None:
    pv = entries.object_entry(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv-1", "uid": "u", "finalizers": ["kubernetes.io/pv-protection"]},
            "spec": {"capacity": {"storage": "10Gi"}, "claimRef": {"namespace": "db", "name": "data", "uid": "x",
                     "resourceVersion": "9"}, "csi": {"driver": "d", "volumeHandle": "h"}},
            "status": {"phase": "Bound"},
        }
    )  # fmt: skip
    assert pv["spec"]["claimRef"] == {"namespace": "db", "name": "data"} and "status" not in pv
    assert pv["metadata"] == {"name": "pv-1"}
    claim = entries.object_entry(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "gpu", "namespace": "ml"},
            "spec": {"devices": {"requests": []}},
            "status": {"allocation": {"devices": {"results": []}}, "reservedFor": [{"uid": "u"}]},
        }
    )
    assert claim["status"] == {"allocation": {"devices": {"results": []}}}, "reservedFor names old uids"
    pod = entries.pod_entry(
        {
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}, {"name": "cm", "configMap": {}}],
                     "containers": [{"name": "c"}]},
        }
    )  # fmt: skip
    assert pod is not None and pod["volumes"] == [
        {"name": "scratch", "persistentVolumeClaim": {"claimName": "p-scratch"}}
    ]


def test_what_a_replay_creates_and_in_which_order(tmp_path: Path) -> None:
    """Namespaces and classes first (pods' admission reads them), objects and nodes, then
    pods, then the statuses objects keep; on an existing cluster in kplugin's namespaces,
    labelled with the run."""
    import json
    import threading

    from support.fakeapi import JsonHandler, serving

    from kplugin.kube import cluster
    from kplugin.kube.apiclient import Client, Endpoint
    from kplugin.kube.kubeconfig import Kubeconfig
    from kplugin.scenario.format import load_scenario

    seen: list[tuple[str, str, dict[str, object]]] = []
    lock = threading.Lock()

    class Handler(JsonHandler):
        def handle_any(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            with lock:
                seen.append((self.command, self.path, body))
            self.answer(201, {})

        do_POST = do_PATCH = handle_any

    path = tmp_path / "s.yaml"
    path.write_text(
        "namespaces: [{name: ml, labels: {team: ml}}]\n"
        "priorityClasses: [{name: high, value: 10}]\n"
        "nodes: [{name: n1}]\n"
        "pods:\n"
        "- {name: p, namespace: ml, priorityClassName: high, affinity: {podAffinity: {"
        "requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, namespaces: [ml]}]}}}\n"
        "- {name: q, nodeName: n1, overhead: {cpu: 100m}}\n"
        "objects:\n"
        "- {apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: b, namespace: ml},\n"
        "   spec: {minAvailable: 1}, status: {disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1,"
        " expectedPods: 2}}\n"
    )
    loaded = load_scenario(path)
    with serving(Handler) as url:
        client = Client(Endpoint(url))
        config = Kubeconfig(tmp_path, "ctx", {}, {}, {})
        target = cluster.Existing(config, client, tmp_path / "work", lambda _: None)
        target.run = "r1"
        profile = ReplayProfile(ProfileLabel.PLUGIN, target.scheduler_name("gpu"), {})
        try:
            created = create.create_state(loaded, profile, target, Quiet())
            pending = create.queue_order(loaded, [p for p in loaded.pods if not p.node_name])
            create.create_pending(profile, target, Quiet(), pending)
        finally:
            client.close()
    assert created.objects == len(seen) - 1 == 8, "the pending pod comes later, to a running scheduler"
    order = [(method, url.split("?")[0]) for method, url, _ in seen]
    first = order[:4]  # namespaces, the class, the overhead's RuntimeClass: in any order among them
    assert sorted(first) == sorted(
        [
            ("POST", "/api/v1/namespaces"),
            ("POST", "/api/v1/namespaces"),
            ("POST", "/apis/scheduling.k8s.io/v1/priorityclasses"),
            ("POST", "/apis/node.k8s.io/v1/runtimeclasses"),
        ]
    )
    assert order[4:6] == [
        ("POST", "/apis/policy/v1/namespaces/kp-r1-ml/poddisruptionbudgets"),
        ("POST", "/api/v1/nodes"),
    ]
    assert order[6:] == [
        ("POST", "/api/v1/namespaces/kp-r1-default/pods"),  # q, bound
        ("PATCH", "/apis/policy/v1/namespaces/kp-r1-ml/poddisruptionbudgets/b/status"),
        ("POST", "/api/v1/namespaces/kp-r1-ml/pods"),  # p, pending
    ]
    namespaces = {b["metadata"]["name"]: b["metadata"]["labels"] for m, u, b in seen if u == "/api/v1/namespaces"}
    assert namespaces == {
        "kp-r1-ml": {"team": "ml", "kplugin.dev/replay": "r1"},
        "kp-r1-default": {"kplugin.dev/replay": "r1"},
    }
    pods = {b["metadata"]["name"]: b for m, u, b in seen if u.endswith("/pods")}
    assert pods["p"]["spec"]["schedulerName"] == "gpu-r1" and pods["p"]["metadata"]["labels"] == {
        "kplugin.dev/replay": "r1"
    }
    term = pods["p"]["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["namespaces"] == ["kp-r1-ml"], "affinity terms name kplugin's namespaces"
    assert pods["q"]["spec"]["nodeName"] == "n1" and pods["q"]["spec"]["runtimeClassName"].startswith(
        "kplugin-overhead-"
    )
    (node,) = [b for m, u, b in seen if u == "/api/v1/nodes"]
    assert node["metadata"]["labels"] == {"kplugin.dev/replay": "r1"}
    assert node["metadata"]["annotations"] == {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}, (
        "kwok keeps the replay's nodes Ready on an existing cluster"
    )
    (status,) = [b for m, u, b in seen if m == "PATCH"]
    assert status == {"status": {"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2}}
    assert sorted(target.created_namespaces) == ["kp-r1-default", "kp-r1-ml"], "removed afterwards"


def test_pending_pods_arrive_in_queue_order() -> None:
    from kplugin.scenario.format import PriorityClass

    scenario = Scenario(
        nodes=(Node("n"),),
        pods=(
            Pod("b"),
            Pod("a", namespace="z"),
            Pod("a"),
            Pod("vip", priority_class="high"),
            Pod("dns", namespace="kube-system", priority_class="system-node-critical"),
            Pod("low", priority_class="low"),
        ),
        priority_classes=(PriorityClass("high", 1000), PriorityClass("low", -5), PriorityClass("std", 10, True)),
    )
    order = [p.key for p in create.queue_order(scenario, scenario.pods)]
    assert order == ["kube-system/dns", "vip", "a", "b", "z/a", "low"], "the global default's 10 for the others"


def test_klog_times_take_the_year_that_puts_them_in_the_past() -> None:
    from datetime import UTC, datetime

    new_year = datetime(2027, 1, 1, 0, 0, 5, tzinfo=UTC)
    december = logs.line_time("I1231 23:59:59.500000  1 schedule_one.go:93] x", new_year)
    january = logs.line_time("I0101 00:00:01.250000  1 schedule_one.go:93] x", new_year)
    assert december is not None and january is not None
    assert datetime.fromtimestamp(december, UTC).year == 2026 and round(january - december, 6) == 1.75
    # read as UTC, the zone kplugin runs the scheduler in: the same instant on any machine
    assert january == datetime(2027, 1, 1, 0, 0, 1, 250000, tzinfo=UTC).timestamp()
    assert logs.line_time('"Attempting to schedule pod" pod="default/p"') is None  # no header
    assert logs.line_time("I0230 10:00:00.000000  1 x.go:1] February 30", new_year) is None


def test_a_pods_times_are_seconds_after_the_pods_were_created() -> None:
    facts = logs.read_log(LOG_1_28.splitlines())
    origin = at("I1203 20:40:00.000000")
    scenario = Scenario(nodes=(Node("n"),), pods=(Pod("waits"),))
    (placement,) = replay._placements(scenario, {}, facts, set(), 30, origin)
    assert placement.attempts_at == (1.1, 3.0)  # rounded to the millisecond
    assert placement.requeues == (Requeue("NodeLabelChange", "Active", "QueueAfterBackoff", 3.0),)


# real lines of kube-scheduler 1.37.2 (schedule_one_podgroup.go, --vmodule
# schedule_one_podgroup=10): examples/rack-gang's gang on two racks that both take it
LOG_PLACEMENTS = """\
I1206 04:49:29.847087   10908 schedule_one_podgroup.go:126] "Attempting to schedule pod group" podGroupType="podgroup" podGroup="default/gang"
I1206 04:49:29.847128   10908 schedule_one_podgroup.go:1006] "Assuming placement in snapshot" podGroupType="podgroup" podGroup="default/gang" placement="rack-a"
I1206 04:49:29.847989   10908 schedule_one_podgroup.go:1006] "Assuming placement in snapshot" podGroupType="podgroup" podGroup="default/gang" placement="rack-b"
I1206 04:49:29.848622   10908 schedule_one_podgroup.go:1210] "Plugin scored placement for podGroup" podGroupType="podgroup" podGroup="default/gang" plugin="NodeResourcesFit" placement="rack-a" score=50
I1206 04:49:29.848627   10908 schedule_one_podgroup.go:1210] "Plugin scored placement for podGroup" podGroupType="podgroup" podGroup="default/gang" plugin="PodGroupPodsCount" placement="rack-a" score=100
I1206 04:49:29.848630   10908 schedule_one_podgroup.go:1210] "Plugin scored placement for podGroup" podGroupType="podgroup" podGroup="default/gang" plugin="RackGang" placement="rack-a" score=50
I1206 04:49:29.848633   10908 schedule_one_podgroup.go:1212] "Calculated placement's final score for podGroup" podGroupType="podgroup" podGroup="default/gang" placement="rack-a" score=200
I1206 04:49:29.848636   10908 schedule_one_podgroup.go:1210] "Plugin scored placement for podGroup" podGroupType="podgroup" podGroup="default/gang" plugin="NodeResourcesFit" placement="rack-b" score=51
I1206 04:49:29.848638   10908 schedule_one_podgroup.go:1210] "Plugin scored placement for podGroup" podGroupType="podgroup" podGroup="default/gang" plugin="PodGroupPodsCount" placement="rack-b" score=100
I1206 04:49:29.848640   10908 schedule_one_podgroup.go:1210] "Plugin scored placement for podGroup" podGroupType="podgroup" podGroup="default/gang" plugin="RackGang" placement="rack-b" score=100
I1206 04:49:29.848642   10908 schedule_one_podgroup.go:1212] "Calculated placement's final score for podGroup" podGroupType="podgroup" podGroup="default/gang" placement="rack-b" score=251
"""


def test_a_groups_placements_their_scores_and_the_one_taken() -> None:
    from kplugin.e2e.groups import group_json, group_line, groups
    from kplugin.e2e.logs import PlacementCycle, PlacementScore
    from kplugin.scenario.format import load_scenario

    facts = logs.read_log(LOG_PLACEMENTS.splitlines())
    (cycle,) = (group.placements for group in facts.groups.values())
    assert cycle.tried == ("rack-a", "rack-b")
    assert cycle.scores == (
        PlacementScore("rack-b", 251, {"NodeResourcesFit": 51, "PodGroupPodsCount": 100, "RackGang": 100}),
        PlacementScore("rack-a", 200, {"NodeResourcesFit": 50, "PodGroupPodsCount": 100, "RackGang": 50}),
    )
    assert cycle.chosen == "rack-b"
    # a tie is broken at random: not told; one placement tried is the one taken; none scored, several tried: not told
    tie = PlacementCycle(("a", "b"), (PlacementScore("a", 5, {}), PlacementScore("b", 5, {})))
    assert (tie.chosen, PlacementCycle(("only",)).chosen, PlacementCycle(("a", "b")).chosen) == (None, "only", None)
    # a later cycle of the group starts again
    again = LOG_PLACEMENTS + LOG_PLACEMENTS.splitlines()[0] + "\n" + LOG_PLACEMENTS.splitlines()[1] + "\n"
    assert logs.read_log(again.splitlines()).groups["gang"].placements == PlacementCycle(("rack-a",))

    scenario = load_scenario(Path(__file__).parents[3] / "examples" / "rack-gang-scenario.yaml")
    placed = [PodPlacement(pod=f"g-{i}", node="b-1", reason="") for i in range(1, 5)]
    (group,) = groups(scenario, placed, facts.groups)
    shown = group_json(group)
    assert (shown["placement"], shown["placementsTried"]) == ("rack-b", ["rack-a", "rack-b"])
    assert [s["placement"] for s in shown["placementScores"]] == ["rack-b", "rack-a"]
    assert shown["placementScores"][0]["plugins"]["RackGang"] == 100
    assert group_line(group).endswith("; 1 attempt(s); placement rack-b (251, rack-a 200)")
    # nothing bound: no placement taken, the scores still told
    (held,) = groups(scenario, [PodPlacement(pod="g-1", node=None, reason="")], facts.groups)
    assert group_json(held)["placement"] is None
    assert group_line(held).endswith("; placements scored: rack-b 251; rack-a 200")


# 1.38.0-beta.0 with framework=4: RackGang's PlacementFeasible refuses rack-a (one of the
# gang's 4 pods does not fit there); rack-b alone takes the group, so no placement is scored
LOG_REFUSED = """\
I1207 16:17:57.535331    8423 schedule_one_podgroup.go:87] "Attempting to schedule pod group" podGroupType="podgroup" podGroup="default/gang"
I1207 16:17:57.536227    8423 algorithm_podgroup.go:763] "Assuming placement in snapshot" podGroupType="podgroup" podGroup="default/gang" placement="rack-a"
I1207 16:17:57.537378    8423 framework.go:2298] "PodGroup placement rejected by plugin" logger="PlacementFeasible" podGroupType="podgroup" podGroup="default/gang" plugin="RackGang" status="RackGang: 1 pod(s) of pod group default/gang do not fit this placement; the group cannot be split"
I1207 16:17:57.537441    8423 algorithm_podgroup.go:763] "Assuming placement in snapshot" podGroupType="podgroup" podGroup="default/gang" placement="rack-b"
I1207 16:17:57.539519    8423 schedule_one_podgroup.go:657] "Successfully scheduled a pod group" podGroupType="podgroup" podGroup="default/gang" scheduledPods=4 unschedulablePods=0
"""


def test_a_placement_a_placement_feasible_plugin_refused_is_not_the_one_taken() -> None:
    from kplugin.e2e.groups import group_json, group_line, groups
    from kplugin.e2e.logs import PlacementCycle
    from kplugin.scenario.format import load_scenario

    facts = logs.read_log(LOG_REFUSED.splitlines())
    cycle = facts.groups["gang"].placements
    assert cycle == PlacementCycle(("rack-a", "rack-b"), (), (("rack-a", "RackGang"),))
    assert cycle.chosen == "rack-b"
    # without the refusal (the framework's V(4) off) two tried and none scored: not told
    assert PlacementCycle(("rack-a", "rack-b")).chosen is None
    # every placement refused: none taken
    assert PlacementCycle(("a", "b"), (), (("a", "X"), ("b", "GangScheduling"))).chosen is None
    # the refusal does not pass for a line that only says "cannot" (RBAC's reader)
    assert facts.denied == []

    scenario = load_scenario(Path(__file__).parents[3] / "examples" / "rack-gang-whole-scenario.yaml")
    placed = [PodPlacement(pod=f"g-{i}", node=f"b-{1 + i % 2}", reason="") for i in range(1, 5)]
    (group,) = groups(scenario, placed, facts.groups)
    shown = group_json(group)
    assert shown["placement"] == "rack-b"
    assert shown["placementsRefused"] == [{"placement": "rack-a", "plugin": "RackGang"}]
    assert group_line(group).endswith("; 1 attempt(s); placement rack-b; rack-a refused by RackGang")
    # the log of a group with pods only: the framework's V(4) is asked for
    vmodule, shown_detail = replay.detail_level(scenario)
    assert logs.GROUP_VMODULE in vmodule.split(",") and "placements refused" in shown_detail


def test_an_attempt_whose_header_cannot_be_read_keeps_its_place() -> None:
    garbled = LOG_1_28.replace("I1203 20:40:01.100000", "I1203 2x:40:01.100000")
    facts = logs.read_log(garbled.splitlines())
    assert facts.attempt_times["waits"] == [None, at("I1203 20:40:03.000100")]
    scenario = Scenario(nodes=(Node("n"),), pods=(Pod("waits"),))
    (placement,) = replay._placements(scenario, {}, facts, set(), 30, at("I1203 20:40:00.000000"))
    assert placement.attempts_at == (None, 3.0)


# the generated adapter's lines (--api layer): each node the project's Filter rejects, for
# the pod's current attempt. The first rejection is a real 1.37.2 run's at -v 5 (the pod
# renamed), where the framework names the logger and gives it the pod (its keys first); at
# -v 2 with e2e's --vmodule neither is there
# kplugin's reporting plugin's lines, as 1.37.2 writes them at --vmodule; one
# with a named logger's values first (the framework names it at -v 4 and above), one of a
# node PreFilter kept from Filter (no plugin), and lines without their keys
LOG_REJECTIONS = """\
I1206 08:50:01.000000       1 schedule_one.go:117] "Attempting to schedule pod" pod="default/waits"
I1206 10:03:20.446821    8310 zz_generated.rejections.go:68] "Filter rejected node" pod="default/waits" plugin="NodeResourcesFit" node="cpu-only" code="UnschedulableAndUnresolvable" reason="Insufficient example.com/gpu"
I1206 10:03:20.446835    8310 zz_generated.rejections.go:68] "Filter rejected node" pod="default/waits" plugin="Gpu" node="n1" code="Unschedulable" reason="node n1 has 0 of \\"example.com/gpu\\" free, pod requests 1"
I1206 10:03:20.446840    8310 zz_generated.rejections.go:68] "Filter rejected node" logger="PostFilter.KpluginNodeRejections" pod="default/waits" plugin="Gpu" pod="default/waits" node="n2" code="UnschedulableAndUnresolvable" reason="node n2 does not have label example.com/accelerator"
I1206 10:03:20.446850    8310 zz_generated.rejections.go:68] "Filter rejected node" pod="default/waits" plugin="" node="n3" code="UnschedulableAndUnresolvable" reason="node(s) didn't satisfy plugin(s) [Gpu]"
I1206 08:50:02.000000       1 schedule_one.go:117] "Attempting to schedule pod" pod="default/other"
I1206 08:50:02.000100       1 zz_generated.rejections.go:68] "Filter rejected node" plugin="Gpu" pod="default/other" node="n1" code="Unschedulable" reason="first attempt"
I1206 08:50:03.000000       1 schedule_one.go:117] "Attempting to schedule pod" pod="default/other"
I1206 08:50:03.000100       1 zz_generated.rejections.go:68] "Filter rejected node" plugin="Gpu" pod="default/other" node="n1"
"""


def test_the_filter_rejections_node_by_node() -> None:
    """In-tree plugins' and the project's alike, sorted by node, escapes read, a node
    without a plugin kept, and only the pod's last attempt's."""
    facts = logs.read_log(LOG_REJECTIONS.splitlines())
    assert facts.rejections == {
        "waits": (
            logs.NodeRejection("cpu-only", "NodeResourcesFit", "UnschedulableAndUnresolvable",
                               "Insufficient example.com/gpu"),
            logs.NodeRejection("n1", "Gpu", "Unschedulable", 'node n1 has 0 of "example.com/gpu" free, pod requests 1'),
            logs.NodeRejection(
                "n2", "Gpu", "UnschedulableAndUnresolvable", "node n2 does not have label example.com/accelerator"
            ),
            logs.NodeRejection("n3", "", "UnschedulableAndUnresolvable", "node(s) didn't satisfy plugin(s) [Gpu]"),
        ),
    }, "other's first attempt is forgotten at its second, whose line lacks its keys"  # fmt: skip
    from kplugin.e2e.report import rejection_lines

    shown = rejection_lines(facts.rejections["waits"])
    assert shown == [
        "    rejected by NodeResourcesFit on cpu-only: Insufficient example.com/gpu",
        '    rejected by Gpu on n1: node n1 has 0 of "example.com/gpu" free, pod requests 1',
        "    rejected by Gpu on n2: node n2 does not have label example.com/accelerator",
        "    rejected on n3: node(s) didn't satisfy plugin(s) [Gpu]",
    ]
    many = tuple(logs.NodeRejection(f"n{i}", "Gpu", "Unschedulable", "") for i in range(8))
    shown = rejection_lines(many)
    assert shown[0] == "    rejected by Gpu on n0: Unschedulable" and len(shown) == 6
    assert shown[-1] == "    (3 more node(s) rejected; the JSON document has them all)"


# the queue's line for a pod a PreEnqueue plugin holds: 1.37.2's (V(4), at the queue's
# --vmodule) and 1.28's (V(0)); an attempt afterwards lets the pod out of "held"
LOG_HELD = """\
I1206 10:40:03.245633   10787 scheduling_queue.go:787] "Status after running PreEnqueue plugin" pod="default/native-1" plugin="GangScheduling" status="waiting for minCount pods from a gang to appear in scheduling queue"
I1206 10:40:03.245700   10787 scheduling_queue.go:480] "Status after running PreEnqueue plugin" pod="default/held-1" plugin="Gpu" status="pod default/held-1 is held by \\"annotation\\" example.com/hold"
I1206 10:40:03.245800   10787 scheduling_queue.go:787] "Status after running PreEnqueue plugin" pod="default/native-2" plugin="GangScheduling" status="waiting"
I1206 10:40:09.000000   10787 schedule_one.go:117] "Attempting to schedule pod" pod="default/native-2"
I1206 10:40:09.100000   10787 scheduling_queue.go:787] "Status after running PreEnqueue plugin" pod="other/x" plugin="Gpu" status="held"
"""


def test_pods_a_preenqueue_plugin_holds_are_read_from_the_queues_line(tmp_path: Path) -> None:
    facts = logs.read_log(LOG_HELD.splitlines())
    assert facts.held == {
        "native-1": ("GangScheduling", "waiting for minCount pods from a gang to appear in scheduling queue"),
        "held-1": ("Gpu", 'pod default/held-1 is held by "annotation" example.com/hold'),
        "other/x": ("Gpu", "held"),
    }, "native-2 was attempted after it was held"
    # the run's wait reads them as the log grows: a pod held in one read, tried in the next, is not held
    from kplugin.e2e.watch import Refusals

    log = tmp_path / "kube-scheduler.log"
    lines = LOG_HELD.splitlines(keepends=True)
    log.write_text("".join(lines[:3]))
    refusals = Refusals(log, lambda ref: ref.split("/", 1)[1] if ref.startswith("default/") else None)
    assert not refusals.any() and refusals.held == {"native-1", "held-1", "native-2"}
    log.write_text("".join(lines))
    refusals.checked = 0.0  # the next read is due
    assert not refusals.any() and refusals.held == {"native-1", "held-1"}


class _Clock:
    """time.monotonic and time.sleep of a settle, without waiting."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class _Said:
    def __init__(self) -> None:
        self.steps: list[str] = []

    def step(self, text: str) -> None:
        self.steps.append(text)

    def count(self, what: str, done: int, total: int) -> None:
        pass


def test_a_pod_left_nominated_ends_the_wait_and_the_run_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 44, item 4: a gang's pod refused with a leftover nominatedNodeName, the rest
    bound, nothing changing: settle returns once nothing changed for NOMINATION_SETTLED
    seconds (before: the whole --timeout), and says what it waits for meanwhile."""
    from types import SimpleNamespace

    from kplugin.e2e import watch as watching

    clock = _Clock()
    monkeypatch.setattr(watching.time, "monotonic", clock.monotonic)
    monkeypatch.setattr(watching.time, "sleep", clock.sleep)
    pods = PodWatch(client=None, path="", key=lambda ns, name: name)  # type: ignore[arg-type]
    refused = {"conditions": [{"type": "PodScheduled", "status": "False", "message": "gang needs 2"}]}
    for kind, obj in (
        event("ADDED", "g-1", node="n1"),
        event("ADDED", "g-2", nominatedNodeName="n2", **refused),
    ):
        pods._update(kind, obj)
    pods.last_change = clock.now
    target = SimpleNamespace(check=lambda: None)
    said = _Said()
    started = clock.now
    watching.settle(pods, {"g-1", "g-2"}, target, 120.0, said, "plugin: pods decided", {})  # type: ignore[arg-type]
    assert NOMINATION_SETTLED <= clock.now - started < NOMINATION_SETTLED + 1, clock.now - started
    assert said.steps == [
        "plugin: pods decided: waiting up to 15s of quiet for nominated pods (g-2 on n2): their victims leave"
    ]


UNABLE = (
    'I1206 04:49:29.849000   10908 schedule_one_podgroup.go:600] "Unable to schedule a pod group" '
    'podGroup="default/gang" unschedulablePods=4\n'
)


def test_a_log_that_stops_in_a_cycles_middle_reports_the_last_cycle_that_ended() -> None:
    """Issue 44, item 11: 1.36 retries a gang that does not fit in a burst; e2e stops the
    scheduler whenever --timeout says, often in a cycle's middle (rack-a tried, rack-b
    not yet): the last cycle that ended ("Unable to schedule a pod group") is reported,
    both placements tried; a cycle that ends after it replaces it."""
    lines = LOG_PLACEMENTS.splitlines()
    ended = LOG_PLACEMENTS + UNABLE
    cut = ended + lines[0] + "\n" + lines[1] + "\n"
    assert logs.read_log(cut.splitlines()).groups["gang"].placements.tried == ("rack-a", "rack-b")
    assert logs.read_log(cut.splitlines()).groups["gang"].attempts == 2
    # the later cycle ends too (one placement only): it is the one told
    later = cut + UNABLE
    assert logs.read_log(later.splitlines()).groups["gang"].placements.tried == ("rack-a",)


SKIPPED_1_36 = """\
I1207 10:00:01.000000       1 scheduling_queue.go:1339] "Event is not making pod schedulable" pod="default/waits" event="NodeAdd"
I1207 10:00:02.000000       1 scheduling_queue.go:1339] "Event is not making pod schedulable" pod="default/waits" event="NodeAdd"
I1207 10:00:03.000000       1 scheduling_queue.go:1339] "Event is not making pod schedulable" pod="default/waits" event="UpdateNodeLabel"
I1207 10:00:03.500000       1 scheduling_queue.go:1339] "Event is not making pod schedulable" pod="other/elsewhere" event="NodeAdd"
"""


def test_a_pending_pod_names_the_events_that_left_it_pending() -> None:
    """Issue 44, item 5: the queue's V(5) line for an event that leaves a rejected pod where
    it is (no plugin that rejected it registered it, or their hints said QueueSkip), read
    per pod and event (1.28-1.36: 1.37 logs the queue's entry, which does not name the pod),
    shown in --json and under the pending pod in the text."""
    from kplugin.e2e.report import ScoreView, placements_text

    facts = logs.read_log(SKIPPED_1_36.splitlines())
    assert facts.skipped == {"waits": {"NodeAdd": 2, "UpdateNodeLabel": 1}, "other/elsewhere": {"NodeAdd": 1}}
    scenario = Scenario(nodes=(Node("n"),), pods=(Pod("waits"),))
    (placement,) = replay._placements(scenario, {}, facts, set(), 30, 0.0)
    assert placement.skipped == (("NodeAdd", 2), ("UpdateNodeLabel", 1))
    assert run.placement_json(placement)["skippedEvents"] == [
        {"event": "NodeAdd", "count": 2},
        {"event": "UpdateNodeLabel", "count": 1},
    ]
    text = placements_text([placement], ScoreView())
    assert "    events that left it pending: NodeAdd x2, UpdateNodeLabel (no plugin that rejected it" in text
