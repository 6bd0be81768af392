"""Objects of any kind in scenarios, kubectl Lists and steps, without a control plane:
a custom kind takes its plural and scope from the scenario's (or the project's) CRD, a
kind no CRD defines from the API's discovery; a replay creates namespaces and CRDs
first, waits until the CRDs are Established, then the objects, and sets a status
through /status only where the kind has that subresource. The same on a real API
server: tests/integration/test_integration_e2e.py."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from support import REPO, Kplugin
from support.fakeapi import JsonHandler, serving

from kplugin.core.errors import OperationError, UsageError
from kplugin.core.progress import Quiet
from kplugin.e2e import create, run
from kplugin.e2e.session import ProfileLabel, ReplayProfile
from kplugin.kube import cluster, discovery, kinds
from kplugin.kube.apiclient import Client, Endpoint
from kplugin.kube.kubeconfig import Kubeconfig
from kplugin.model.versions import resolve
from kplugin.scenario.format import StepAction, load_scenario


def crd(kind: str, plural: str, group: str, scope: str = "Namespaced", status: bool = True) -> dict[str, Any]:
    version: dict[str, Any] = {
        "name": "v1alpha1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    if status:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": scope, "names": {"kind": kind, "plural": plural}, "versions": [version]},
    }


QUOTA = crd("Quota", "quotas", "quota.example.com")
RACK = crd("Rack", "racks", "topology.example.com", scope="Cluster", status=False)


def scenario_file(tmp_path: Path, objects: list[dict[str, Any]], steps: list[dict[str, Any]] | None = None) -> Path:
    path = tmp_path / "s.json"
    document: dict[str, Any] = {"nodes": [{"name": "n1"}], "pods": [{"name": "p"}], "objects": objects}
    if steps:
        document["steps"] = steps
    path.write_text(json.dumps(document))
    return path


def quota(name: str, namespace: str | None = None, **rest: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "quota.example.com/v1alpha1", "kind": "Quota", "metadata": meta, **rest}


def test_custom_kinds_take_plural_and_scope_from_their_crd(tmp_path: Path) -> None:
    rack = {"apiVersion": "topology.example.com/v1alpha1", "kind": "Rack", "metadata": {"name": "r1"}, "nodes": ["n1"]}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ml"}}
    objects = [quota("q", spec={"cpu": "4"}, status={"used": {"cpu": "1"}}), rack, deployment, RACK, QUOTA]
    loaded = load_scenario(scenario_file(tmp_path, objects))
    by_name = {o.name: o for o in loaded.objects}
    assert [o.info.kind for o in loaded.objects][:2] == ["CustomResourceDefinition"] * 2, "CRDs first"
    assert loaded.objects[-1].info.kind != "CustomResourceDefinition"
    q = by_name["q"]
    shape = (q.info.plural, q.info.namespaced, q.info.status_subresource, q.namespace)
    assert shape == ("quotas", True, True, "default")
    assert q.body["spec"] == {"cpu": "4"} and q.status == {"used": {"cpu": "1"}}
    r = by_name["r1"]
    assert (r.info.plural, r.info.namespaced, r.info.status_subresource, r.namespace) == ("racks", False, False, None)
    assert r.body["nodes"] == ["n1"], "a custom kind keeps every top-level field"
    web = by_name["web"]
    assert web.info.custom and not web.info.resolved, "no CRD defines it: discovery says, at replay"
    assert loaded.namespace_names() == ["default", "ml"]


def test_a_kubectl_list_of_custom_objects(tmp_path: Path) -> None:
    podgroup = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "ml", "uid": "u-1", "resourceVersion": "7", "managedFields": [{}]},
        "spec": {"minMember": 3},
        "status": {"phase": "Pending"},
    }
    definition = crd("PodGroup", "podgroups", "scheduling.x-k8s.io")
    definition["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": {}}
    path = tmp_path / "list.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node, pod, podgroup, definition]}))
    loaded = load_scenario(path)
    crd_object, group = loaded.objects
    assert crd_object.info is kinds.CRD and "status" not in crd_object.body, "a CRD's status is the server's"
    assert group.body == {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "g"},
        "spec": {"minMember": 3},
    }
    assert (group.namespace, group.status, group.info.plural) == ("ml", {"phase": "Pending"}, "podgroups")


def test_steps_create_update_and_delete_any_object(tmp_path: Path) -> None:
    steps = [
        {"createObject": quota("later", "ml", spec={"cpu": "1"})},
        {"updateObject": quota("q", spec={"cpu": "8"})},
        {"deleteObject": quota("later", "ml")},
        {"createObject": {"apiVersion": "topology.example.com/v1alpha1", "kind": "Rack", "metadata": {"name": "r"}}},
    ]
    loaded = load_scenario(scenario_file(tmp_path, [QUOTA, quota("q")], [*steps[:3], {"createObject": RACK}, steps[3]]))
    actions = [(s.action, s.describe()) for s in loaded.steps]
    assert actions == [
        (StepAction.CREATE_OBJECT, "createObject Quota ml/later"),
        (StepAction.UPDATE_OBJECT, "updateObject Quota default/q"),
        (StepAction.DELETE_OBJECT, "deleteObject Quota ml/later"),
        (StepAction.CREATE_OBJECT, "createObject CustomResourceDefinition racks.topology.example.com"),
        (StepAction.CREATE_OBJECT, "createObject Rack r"),
    ]
    assert loaded.steps[4].obj is not None and loaded.steps[4].obj.info.plural == "racks", "a CRD a step creates"
    assert "ml" in loaded.namespace_names(), "a step's object's namespace is created with the others"


def test_the_projects_crds_come_first_unless_the_scenario_has_them(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "config" / "crd").mkdir(parents=True)
    other = crd("Team", "teams", "quota.example.com")
    (root / "config" / "crd" / "b-quota.yaml").write_text(json.dumps(QUOTA) + "\n---\n" + json.dumps(other) + "\n")
    (root / "config" / "crd" / "README.md").write_text("not read")
    path = scenario_file(tmp_path, [quota("q")])
    loaded = run.read_scenario(path, resolve("1.37"), root)
    assert [o.name for o in loaded.objects] == ["quotas.quota.example.com", "teams.quota.example.com", "q"]
    assert loaded.objects[2].info.plural == "quotas", "the project's CRD defines the scenario's kind"
    default = run.read_scenario(None, resolve("1.37"), root)
    assert [o.name for o in default.objects] == ["quotas.quota.example.com", "teams.quota.example.com"], (
        "the default scenario too: the plugin's informers need the kinds served"
    )
    mine = crd("Quota", "quotas", "quota.example.com", scope="Cluster")
    loaded = run.read_scenario(scenario_file(tmp_path, [mine, quota("q")]), resolve("1.37"), root)
    assert next(o for o in loaded.objects if o.name == "q").namespace is None, "the scenario's CRD wins"


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "document 1 is not an apiextensions.k8s.io/v1"),
        ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {}\n", "has no metadata.name"),
        ("a: [\n", "is not valid YAML"),
    ],
)
def test_a_bad_crd_file_is_named(tmp_path: Path, content: str, needle: str) -> None:
    root = tmp_path / "project"
    (root / "config" / "crd").mkdir(parents=True)
    (root / "config" / "crd" / "x.yaml").write_text(content)
    with pytest.raises(UsageError, match=needle) as caught:
        run.read_scenario(None, resolve("1.37"), root)
    assert "config/crd/x.yaml" in str(caught.value)


def test_a_symlinked_crd_file_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "config" / "crd").mkdir(parents=True)
    outside = tmp_path / "secret.yaml"
    outside.write_text(json.dumps(QUOTA))
    (root / "config" / "crd" / "x.yaml").symlink_to(outside)
    with pytest.raises(UsageError, match=r"x\.yaml is a symlink where kplugin keeps a file"):
        run.read_scenario(None, resolve("1.37"), root)


class Api(JsonHandler):
    """Discovery of apps/v1 (deployments) and the CRDs' status, Established on the second
    read; every request recorded."""

    seen: ClassVar[list[tuple[str, str, dict[str, Any]]]] = []
    reads: ClassVar[dict[str, int]] = {}
    lock = threading.Lock()

    def record(self) -> dict[str, Any]:
        body: dict[str, Any] = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        with self.lock:
            self.seen.append((self.command, self.path.split("?")[0], body))
        return body

    def do_GET(self) -> None:
        self.record()
        if self.path == "/apis/apps/v1":
            resources = [
                {"name": "deployments", "kind": "Deployment", "namespaced": True},
                {"name": "deployments/status", "kind": "Deployment", "namespaced": True},
            ]
            self.answer(200, {"kind": "APIResourceList", "resources": resources})
        elif "/customresourcedefinitions/" in self.path:
            with self.lock:
                self.reads[self.path] = self.reads.get(self.path, 0) + 1
                established = self.reads[self.path] > 1
            condition = {"type": "Established", "status": "True" if established else "False"}
            self.answer(200, {"status": {"conditions": [condition]}})
        else:
            self.answer(404, {"message": "the server could not find the requested resource", "reason": "NotFound"})

    def do_POST(self) -> None:
        self.record()
        self.answer(201, {})

    do_PATCH = do_POST


def test_a_replay_creates_crds_first_then_any_kind(tmp_path: Path) -> None:
    Api.seen, Api.reads = [], {}
    rack = {"apiVersion": "topology.example.com/v1alpha1", "kind": "Rack", "metadata": {"name": "r1"}}
    rack["status"] = {"free": 2}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 0}}
    objects = [QUOTA, RACK, quota("q", "ml", status={"used": 1}), rack, deployment]
    loaded = load_scenario(scenario_file(tmp_path, objects))
    with serving(Api) as url:
        client = Client(Endpoint(url))
        target = cluster.Existing(Kubeconfig(tmp_path, "ctx", {}, {}, {}), client, tmp_path / "work", lambda _: None)
        target.run = "r1"
        profile = ReplayProfile(ProfileLabel.PLUGIN, target.scheduler_name("s"), {})
        try:
            resolved = create.resolve_kinds(loaded, discovery.Resolver(client))
            create.create_state(resolved, profile, target, Quiet())
        finally:
            client.close()
    order = [(method, path) for method, path, _ in Api.seen]
    assert order[0] == ("GET", "/apis/apps/v1"), "discovery before anything is created"
    crds = [i for i, (m, p) in enumerate(order) if m == "POST" and p.endswith("/customresourcedefinitions")]
    waits = [i for i, (m, p) in enumerate(order) if m == "GET" and "/customresourcedefinitions/" in p]
    kinds_created = ("/quotas", "/racks", "/deployments")
    objects_at = [i for i, (m, p) in enumerate(order) if m == "POST" and p.endswith(kinds_created)]
    assert len(crds) == 2 and len(waits) == 4 and max(crds) < min(waits) and max(waits) < min(objects_at)
    assert sorted(p for m, p in order if m == "POST" and p in {order[i][1] for i in objects_at}) == [
        "/apis/apps/v1/namespaces/kp-r1-default/deployments",
        "/apis/quota.example.com/v1alpha1/namespaces/kp-r1-ml/quotas",
        "/apis/topology.example.com/v1alpha1/racks",
    ]
    bodies = {p: b for m, p, b in Api.seen if m == "POST"}
    assert bodies["/apis/topology.example.com/v1alpha1/racks"]["status"] == {"free": 2}, "no /status: in the body"
    assert bodies["/apis/topology.example.com/v1alpha1/racks"]["metadata"]["labels"] == {"kplugin.dev/replay": "r1"}
    patches = [(p, b) for m, p, b in Api.seen if m == "PATCH"]
    quota_status = "/apis/quota.example.com/v1alpha1/namespaces/kp-r1-ml/quotas/q/status"
    assert patches == [(quota_status, {"status": {"used": 1}})]
    assert {k.kind for k in target.custom_kinds} == {"Rack"}, "removed by label afterwards, before the CRDs"


def test_a_kind_the_server_does_not_serve_stops_before_anything_is_created(tmp_path: Path) -> None:
    Api.seen, Api.reads = [], {}
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    loaded = load_scenario(scenario_file(tmp_path, [widget]))
    with serving(Api) as url:
        client = Client(Endpoint(url))
        try:
            with pytest.raises(OperationError) as caught:
                create.resolve_kinds(loaded, discovery.Resolver(client))
        finally:
            client.close()
    assert str(caught.value) == (
        f"objects[0] (Widget w): example.com/v1 Widget is not served by the API server at {url}: "
        "add its CustomResourceDefinition to config/crd/ or to the scenario's objects"
    )
    assert [m for m, _, _ in Api.seen] == ["GET"], "nothing created"


def test_an_existing_clusters_cleanup_removes_custom_kinds_before_the_crds(tmp_path: Path) -> None:
    Api.seen, Api.reads = [], {}

    class Deleting(Api):
        def do_DELETE(self) -> None:
            self.record()
            self.answer(200, {})

        def do_GET(self) -> None:
            self.record()
            self.answer(200, {"items": []})

    with serving(Deleting) as url:
        client = Client(Endpoint(url))
        target = cluster.Existing(Kubeconfig(tmp_path, "ctx", {}, {}, {}), client, tmp_path / "work", lambda _: None)
        target.run = "r1"
        target.custom_kinds.add(kinds.from_crd(RACK)[0])
        target.cleanup()
        client.close()
    deleted = [p for m, p, _ in Deleting.seen if m == "DELETE"]
    assert deleted[-2:] == [
        "/apis/topology.example.com/v1alpha1/racks",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [("plural", "../../api/v1/secrets"), ("plural", "Quotas"), ("group", "quota"), ("version", "v1/../../x")],
)
def test_a_crd_whose_names_go_into_urls_must_be_names(tmp_path: Path, field: str, value: str) -> None:
    """A CRD's plural, group and version become the path a replay creates objects at:
    ones the API server would refuse define no kind here (the server says why when the
    CRD is created), so no request goes anywhere else."""
    definition = json.loads(json.dumps(QUOTA))
    if field == "plural":
        definition["spec"]["names"]["plural"] = value
    elif field == "group":
        definition["spec"]["group"] = value
    else:
        definition["spec"]["versions"][0]["name"] = value
    assert kinds.from_crd(definition) == []
    assert kinds.from_crd(QUOTA)[0].path("ml") == "/apis/quota.example.com/v1alpha1/namespaces/ml/quotas"


def test_e2e_refuses_before_building_when_the_rules_file_lacks_what_the_code_reads(
    kplugin: Kplugin, tmp_path: Path
) -> None:
    """Issue 44, item 3: the code (examples/team-quota's informer of quotas, named through a
    GroupVersionResource variable) or a CRD of config/crd/ needs a rule the rules file
    lacks: e2e refuses before building anything, in one line (exit 2), as doctor knows;
    --admin runs without RBAC, so it is not refused there."""
    import shutil

    from kplugin.e2e import run as runs
    from kplugin.model.project import load

    project = tmp_path / "team-quota"
    shutil.copytree(REPO / "examples" / "team-quota", project)
    runs.check_rules_cover(load(project))  # as the example has it: nothing missing
    (project / "config/rbac/rules.yaml").write_text("[]\n")
    result = kplugin("e2e", str(project))
    assert result.code == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    declared = next(
        i
        for i, text in enumerate((project / "pkg/teamquota/plugin.go").read_text().splitlines(), 1)
        if text.startswith("var Quotas = schema.GroupVersionResource{")
    )
    assert line == (
        f"kplugin: error: pkg/teamquota/plugin.go:{declared} reads quotas.quota.example.com, and "
        "config/rbac/rules.yaml grants no list and watch on it: add {apiGroups: [quota.example.com], resources: "
        "[quotas], verbs: "
        "[get, list, watch]} to it and run kplugin refresh (or run with --admin)"
    ), line
    # the CRD alone (code that names no resource) is refused the same way
    plugin = project / "pkg/teamquota/plugin.go"
    text = plugin.read_text()
    plugin.write_text(
        text.replace('Group: "quota.example.com", Version: "v1alpha1", Resource: "quotas"', "").replace(
            "fw.CustomResource(Quotas.Resource, Quotas.Version, Quotas.Group)", "fw.CustomResource(a, b, c)"
        )
    )
    result = kplugin("e2e", str(project))
    assert result.code == 2
    assert "config/crd/quotas.yaml (Quota) reads quotas.quota.example.com" in result.stderr, result.stderr


def test_a_deploy_that_grants_more_than_asked_is_said(tmp_path: Path) -> None:
    """deploy/rbac.yaml with a rule neither the scheduler nor config/rbac/rules.yaml asks
    for: the run says so (it uses the file as it is)."""
    import shutil

    from kplugin.e2e import run as runs
    from kplugin.model.project import load

    project = tmp_path / "team-quota"
    shutil.copytree(REPO / "examples" / "team-quota", project)
    loaded = load(project)
    documents = runs.rbac_documents(loaded)
    assert runs.rbac_beyond(loaded, documents) is None
    role = next(d for d in documents if d["kind"] == "ClusterRole")
    role["rules"].append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]})
    assert runs.rbac_beyond(loaded, documents) == (
        "deploy/rbac.yaml grants more than the scheduler and config/rbac/rules.yaml ask for (get core/secrets, "
        "list core/secrets): the run uses it as it is; kplugin refresh writes it from the file"
    )
