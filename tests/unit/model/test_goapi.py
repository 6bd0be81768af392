"""Go spellings per minor, the import pruner and the API fact timeline (no Go needed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kplugin.generate import gosource
from kplugin.maintainer import catalog
from kplugin.model import goapi, points
from kplugin.model.apifacts import ApiFacts, PodGroups
from kplugin.model.versions import catalog as releases


def shape(minor: str) -> ApiFacts:
    return releases()[minor].facts


@pytest.mark.parametrize(
    ("minor", "node_info", "status", "handle", "queued", "max_score", "statuses"),
    [
        ("1.28", "*framework.NodeInfo", "framework.Status", "framework.Handle", "*framework.QueuedPodInfo",
         "framework.MaxNodeScore", "framework.NodeToStatusMap"),
        ("1.32", "*framework.NodeInfo", "framework.Status", "framework.Handle", "*framework.QueuedPodInfo",
         "framework.MaxNodeScore", "framework.NodeToStatusReader"),
        ("1.34", "fwk.NodeInfo", "fwk.Status", "framework.Handle", "fwk.QueuedPodInfo",
         "framework.MaxNodeScore", "framework.NodeToStatusReader"),
        ("1.35", "fwk.NodeInfo", "fwk.Status", "fwk.Handle", "fwk.QueuedPodInfo",
         "fwk.MaxNodeScore", "fwk.NodeToStatusReader"),
        ("1.36", "fwk.NodeInfo", "fwk.Status", "fwk.Handle", "fwk.QueuedPodInfo",
         "fwk.MaxScore", "fwk.NodeToStatusReader"),
        ("1.37", "fwk.NodeInfo", "fwk.Status", "fwk.Handle", "fwk.QueuedEntityInfo",
         "fwk.MaxScore", "fwk.NodeToStatusReader"),
    ],
)  # fmt: skip
def test_native_spellings_follow_the_split(
    minor: str, node_info: str, status: str, handle: str, queued: str, max_score: str, statuses: str
) -> None:
    names = goapi.native_names(shape(minor))
    assert names["NodeInfo"] == node_info
    assert names["Status"] == status
    assert names["Handle"] == handle
    assert names["QueuedInfo"] == queued
    assert names["MaxNodeScore"] == max_score
    assert names["NodeToStatusReader"] == statuses
    assert names["Allocatable"] == "allocatable"  # native code calls package-local helpers
    assert ("PreBindPreFlightResult" in names) == (minor in {"1.36", "1.37"})


def test_layer_spells_everything_through_fw() -> None:
    names = goapi.layer_names()
    assert all(value == f"fw.{key}" for key, value in names.items())
    # every name native code can use exists in the layer too (the surface is complete)
    assert set(goapi.native_names(shape("1.37"))) - {"SharedLister", "NodeInfoLister", "StorageInfoLister"} <= set(
        names
    )


def test_prune_drops_unused_imports_only() -> None:
    source = """package p

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	_ "k8s.io/component-base/logs/json/register"

	"example.com/x/internal/fw"
)

// fmt.Sprintf in a comment is no use of fmt, nor is "time.Now" in a string.
var s = "time.Now"

func f(ctx context.Context, p *v1.Pod) fw.Code {
	klog.FromContext(ctx).Info("x")
	return fw.Success
}
"""
    pruned = gosource.prune_imports(source)
    assert '"fmt"' not in pruned and '"time"' not in pruned and "fwk " not in pruned
    for kept in ['"context"', 'v1 "k8s.io/api/core/v1"', '"k8s.io/klog/v2"', '_ "k8s.io/component-base', '/fw"']:
        assert kept in pruned, kept
    assert 'import (\n\t"context"\n\n\tv1' in pruned  # no blank line left where fmt and time were


def test_prune_removes_an_emptied_block_and_groups() -> None:
    source = 'package p\n\nimport (\n\t"fmt"\n\n\t"os"\n)\n\nfunc f() { _ = os.Args }\n'
    assert gosource.prune_imports(source) == 'package p\n\nimport (\n\t"os"\n)\n\nfunc f() { _ = os.Args }\n'
    none = 'package p\n\nimport (\n\t"fmt"\n)\n\nfunc f() {}\n'
    assert gosource.tidy(none) == "package p\n\nfunc f() {}\n"


@pytest.mark.parametrize(
    ("path", "name"),
    [("k8s.io/klog/v2", "klog"), ("sigs.k8s.io/yaml", "yaml"), ("k8s.io/api/core/v1", "v1"), ("fmt", "fmt")],
)
def test_package_names(path: str, name: str) -> None:
    assert gosource.package_name(path) == name


def test_fact_timeline_gives_each_minor_its_shape() -> None:
    assert catalog.shape("1.28")["factory_ctx"] is False
    assert catalog.shape("1.29")["factory_ctx"] is True
    assert catalog.shape("1.33")["score_node_arg"] == "nodeInfo"
    assert catalog.shape("1.32")["score_node_arg"] == "nodeName"
    assert catalog.shape("1.34")["fwk_split"] == "types"
    assert catalog.shape("1.35")["fwk_split"] == "plugins"
    assert catalog.shape("1.36")["permit_results"] == 2
    assert catalog.shape("1.35")["permit_results"] == 1
    assert catalog.shape("1.37")["queued_info"] == "entity"
    assert "Score gets the NodeInfo, not the name" in catalog.shape("1.33")["api_changes"]
    assert catalog.shape("1.28")["api_changes"] == []
    assert catalog.shape("1.38")["templates"] is True  # its pre-release checked against its sources
    assert catalog.shape("1.39")["templates"] is False  # not checked yet


def test_committed_catalog_carries_the_timeline(capsys: pytest.CaptureFixture[str]) -> None:
    """The committed catalog.json is what --shapes-only derives from FACTS (no drift)."""
    assert catalog.main(["--shapes-only"]) == 0
    derived = json.loads(capsys.readouterr().out)
    assert derived == json.loads(catalog.CATALOG.read_text())
    assert all(entry["templates"] for entry in derived["minors"].values())


# What a Permit or gang plugin needs, per minor, as read in each minor's sources (newest
# patch; k8s.io/kube-scheduler for fwk): WaitingPod in pkg/scheduler/framework/interface.go
# up to 1.34, fwk's framework/interface.go from 1.35; ClusterEvent.Resource's type is
# `type GVK string` in framework/types.go up to 1.31, `type EventResource string` there in
# 1.32-1.33 and in fwk's framework/types.go from 1.34; All is framework's, then fwk's.
PERMIT_AND_GANG = {
    "1.28": ("framework.WaitingPod", "framework.GVK", "framework.All"),
    "1.29": ("framework.WaitingPod", "framework.GVK", "framework.All"),
    "1.30": ("framework.WaitingPod", "framework.GVK", "framework.All"),
    "1.31": ("framework.WaitingPod", "framework.GVK", "framework.All"),
    "1.32": ("framework.WaitingPod", "framework.EventResource", "framework.All"),
    "1.33": ("framework.WaitingPod", "framework.EventResource", "framework.All"),
    "1.34": ("framework.WaitingPod", "fwk.EventResource", "fwk.All"),
    "1.35": ("fwk.WaitingPod", "fwk.EventResource", "fwk.All"),
    "1.36": ("fwk.WaitingPod", "fwk.EventResource", "fwk.All"),
    "1.37": ("fwk.WaitingPod", "fwk.EventResource", "fwk.All"),
    "1.38": ("fwk.WaitingPod", "fwk.EventResource", "fwk.All"),
}


def test_every_supported_minor_has_its_permit_and_gang_spellings() -> None:
    """A minor added to the catalog without a row here fails: its spellings are facts to read."""
    from kplugin.model.versions import supported_releases

    assert [r.key for r in supported_releases()] == list(PERMIT_AND_GANG)


@pytest.mark.parametrize("minor", list(PERMIT_AND_GANG))
def test_permit_and_gang_spellings_per_minor(minor: str) -> None:
    names = goapi.native_names(shape(minor))
    assert (names["WaitingPod"], names["EventResource"], names["All"]) == PERMIT_AND_GANG[minor]
    layer = goapi.layer_names()
    for name in ("WaitingPod", "EventResource", "All", "CustomResource", "InitialAttempt"):
        assert layer[name] == f"fw.{name}"


FW_TEMPLATE = (
    Path(__file__).parents[3] / "templates/project/[[cookiecutter.project_name]]/internal/fw/zz_generated.fw.go"
)


# what internal/fw spells only for a minor with a pod-group cycle (1.36 on)
POD_GROUP_NAMES = {*goapi._POD_GROUP_TYPES, "PlacementState"}
# ... and only from the minor that added their point: PodGroupPostFilter 1.37, PlacementFeasible 1.38
LATER_NAMES = {
    "1.37": {"PodGroupPostFilterPlugin", "PodGroupPostFilterResult", "PodGroupSchedulingFunc", "NominatingInfo"},
    "1.38": {"PlacementFeasiblePlugin", "PlacementProgress"},
}


PRE_HINT_NAMES = {"PreQueueingHintResult", "PreQueueingHintFn"}


@pytest.mark.parametrize("minor", list(PERMIT_AND_GANG))
def test_every_native_name_the_layer_template_uses_is_a_fact_of_every_minor(minor: str) -> None:
    """internal/fw spells the framework through N.<name> (goapi.native_names): each one must
    exist for every minor, or that minor's layer would not render."""
    used = set(re.findall(r"\bN\.(\w+)", FW_TEMPLATE.read_text()))
    assert {"WaitingPod", "EventResource", "All", "Status", "QueuedInfo"} <= used
    # names the template only reaches where the minor has them
    later = set().union(*LATER_NAMES.values())
    guarded = {"PreBindPreFlightResult", *POD_GROUP_NAMES, *later, *PRE_HINT_NAMES}
    assert used - guarded <= set(goapi.native_names(shape(minor)))
    facts = shape(minor)
    names = set(goapi.native_names(facts))
    # PreQueueingHints' types from 1.37 (internal/fw has its own struct before)
    assert (names >= PRE_HINT_NAMES) == (points.parse_minor(minor) >= (1, 37))
    assert used >= PRE_HINT_NAMES
    assert (names >= POD_GROUP_NAMES) == (facts.pod_groups is not PodGroups.NONE)
    for since, spelled in LATER_NAMES.items():
        assert (names >= spelled) == (points.parse_minor(minor) >= points.parse_minor(since)), since


@pytest.mark.parametrize("minor", list(PERMIT_AND_GANG))
def test_every_points_interface_is_spelled_where_the_minor_has_it(minor: str) -> None:
    """Issue 43, item 5: the interface names come from model/points.py (those of every
    minor by derivation; the pod-group ones, spelled with their minor's facts, are held
    against the table here): the layer names each point's interface, and a minor's native
    spelling exists exactly where the point does."""
    layer = goapi.layer_names()
    native = goapi.native_names(shape(minor))
    for point, row in points.POINTS.items():
        assert layer[row.interface] == f"fw.{row.interface}", point
        has = points.available(point, points.parse_minor(minor))
        assert (row.interface in native) == has, (point, minor)
