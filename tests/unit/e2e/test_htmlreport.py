"""e2e --report's page, as data and as bytes: the scheduler's rejections read, each pod's
scores cut to the best nodes (the chosen one kept), what a page cannot be broken by, the
same bytes for the same run. The page drawn in a real browser, from real replays:
tests/integration/test_integration_reports.py."""

from __future__ import annotations

import json
import re
from typing import Any

from kplugin.e2e import htmlreport
from kplugin.e2e.htmlreport import REPORT_NODES, page_data, rejections, render


def placement(pod: str, node: str | None, nodes: int = 3, reason: str = "") -> dict[str, Any]:
    scores = [
        {"node": f"n{i}", "total": 100 - i, "plugins": {"Gpu": 50 - i, "NodeResourcesFit": 50}} for i in range(nodes)
    ]
    return {
        "pod": pod, "node": node, "where": node or "pending", "reason": reason, "expected": None, "ok": True,
        "boundBefore": False, "attempts": 2, "requeues": [{"event": "Node/Update", "queue": "backoffQ"}],
        "preemptedBy": None, "preemptedOn": None, "tied": False, "scores": scores if node else [],
    }  # fmt: skip


def replay(*pods: dict[str, Any]) -> dict[str, Any]:
    return {"kubernetes": "1.37.2", "schedulerName": "gpu", "pods": list(pods), "groups": []}


def test_the_schedulers_reasons_are_read_as_counts() -> None:
    message = (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert rejections(message) == [[1, "Insufficient cpu"], [2, "node(s) didn't match Pod's node affinity/selector"]]
    assert rejections("pod group gang is not complete") == []
    assert rejections("") == []


def test_each_pods_scores_keep_the_best_nodes_and_the_chosen_one() -> None:
    far = placement("default/far", "n40", nodes=50)
    data = page_data(replay(far, placement("default/near", "n0"), placement("default/waits", None)), compare=False)
    first, second, third = data["pods"]
    assert [row[0] for row in first["scores"]["rows"]] == [f"n{i}" for i in range(REPORT_NODES)] + ["n40"]
    assert first["scores"]["more"] == 50 - REPORT_NODES - 1
    assert first["scores"]["plugins"] == ["Gpu", "NodeResourcesFit"]
    assert first["scores"]["rows"][0] == ["n0", 100, 50, 50]
    assert second["scores"]["more"] == 0 and third["scores"]["rows"] == []
    assert dict(data["summary"]) == {"pods": 3, "bound": 2, "pending": 1, "preempted": 0, "not as expected": 0}


def test_the_page_is_self_contained_deterministic_and_not_broken_by_its_data() -> None:
    hostile = placement("default/p", None, reason="</script><script>alert(1)</script> & <b>")
    page = render(replay(hostile), compare=False, title="e2e <gpu> & co")
    assert page == render(replay(hostile), compare=False, title="e2e <gpu> & co")
    assert "<title>e2e &lt;gpu&gt; &amp; co</title>" in page
    assert page.count("</script>") == 2  # the data's and the script's own ends: nothing from the data
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page), "nothing loaded from the network"
    data = page.split('<script type="application/json" id="data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["pods"][0]["reason"] == "</script><script>alert(1)</script> & <b>"


def test_a_comparison_carries_both_profiles_of_each_change() -> None:
    moved = {"pod": "default/p", "plugin": placement("default/p", "n1"), "default": placement("default/p", "n0")}
    document = {
        "kubernetes": "1.37.2",
        "summary": {"compared": 4, "same": 3, "moved": 1, "becameSchedulable": 0, "becameUnschedulable": 0,
                    "preempted": {"plugin": 0, "default": 1}},
        "profiles": {"plugin": {"schedulerName": "gpu", "preempted": []},
                     "default": {"schedulerName": "gpu-default", "preempted": [{"pod": "v", "by": "p", "node": "n0"}]}},
        "moved": [moved], "becameSchedulable": [], "becameUnschedulable": [],
        "nodeUse": [{"node": "n0", "resource": "cpu", "allocatable": "4", "plugin": "1", "default": "2"}],
        "groups": [],
    }  # fmt: skip
    data = page_data(document, compare=True)
    assert data["profiles"] == ["gpu", "gpu-default"]
    (change,) = data["changes"]
    assert (change["change"], change["plugin"]["node"], change["default"]["node"]) == ("moved", "n1", "n0")
    assert dict(data["summary"])["preempted (default)"] == 1
    assert data["nodeUse"] == document["nodeUse"] and data["preempted"]["default"][0]["pod"] == "v"
    assert "<!DOCTYPE html>" in render(document, compare=True, title="what-if")
    assert data["pageRows"] == htmlreport.PAGE_ROWS
