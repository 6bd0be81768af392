"""e2e's --report: one self-contained HTML file of a replay or a what-if (no network:
styles, script and data inline), made from the same document ``--json`` prints, so the
page and the JSON of a run agree by construction.

What it shows: a summary; each pod (sortable, searchable, the first rows with a button for
all) with where it landed or why not, the filter rejections the scheduler counted, its
attempts and the events that requeued it in order, and a node-by-plugin score table
coloured as a heatmap with the numbers in the cells (the best nodes, the chosen one
always); pod groups; for a what-if, the pods that moved or became (un)schedulable under
both profiles side by side, each profile's preemptions and each node's use under both.
Light and dark (the reader's colour scheme), readable without colour, tables reachable by
keyboard. Deterministic: the same document gives the same bytes.
"""

from __future__ import annotations

import json
import re
from html import escape
from importlib import resources
from typing import Any

# the nodes a pod's score table keeps (best first, the chosen one always): bounds the file
# at scale (500 nodes, 2,000 pods: a few MB) where --json keeps every node
REPORT_NODES = 10
PAGE_ROWS = 100  # rows a table shows before its "show all" button
_COUNTED = re.compile(r"^(\d+) (.+)$")


def rejections(reason: str) -> list[list[Any]]:
    """The scheduler's FailedScheduling message as (nodes, why) pairs: '0/3 nodes are
    available: 1 Insufficient cpu, 2 node(s) didn't match ...' -> [[1, 'Insufficient cpu'],
    [2, "node(s) didn't match ..."]]; nothing for another message."""
    head, sep, rest = reason.partition(" nodes are available: ")
    if not sep or "/" not in head:
        return []
    listed = rest.split(". preemption:", 1)[0].rstrip(". ")
    found = []
    for part in listed.split(", "):
        matched = _COUNTED.match(part.strip())
        if matched:
            found.append([int(matched[1]), matched[2]])
    return found


def _scores(scores: list[dict[str, Any]], chosen: str | None) -> dict[str, Any]:
    kept = scores[:REPORT_NODES]
    if chosen and all(s["node"] != chosen for s in kept):
        kept += [s for s in scores if s["node"] == chosen]
    plugins = sorted({name for s in kept for name in s["plugins"]})
    return {
        "plugins": plugins,
        "rows": [[s["node"], s["total"], *(s["plugins"].get(p) for p in plugins)] for s in kept],
        "more": len(scores) - len(kept),
    }


def _pod(placement: dict[str, Any]) -> dict[str, Any]:
    return {
        "pod": placement["pod"],
        "where": placement["where"],
        "node": placement["node"],
        "ok": placement["ok"],
        "expected": placement["expected"],
        "attempts": placement["attempts"],
        "attemptsAt": placement.get("attemptsAt", []),
        "requeues": placement["requeues"],
        "reason": placement["reason"],
        "rejections": rejections(placement["reason"] or ""),
        "nodeRejections": placement.get("nodeRejections", [])[:REPORT_NODES],
        "moreNodeRejections": max(0, len(placement.get("nodeRejections", [])) - REPORT_NODES),
        "preemptedBy": placement["preemptedBy"],
        "boundBefore": placement["boundBefore"],
        "tied": placement["tied"],
        "scores": _scores(placement["scores"], placement["node"]),
    }


def _replay(document: dict[str, Any]) -> dict[str, Any]:
    pods = [_pod(p) for p in document["pods"]]
    return {
        "kind": "replay",
        "kubernetes": document["kubernetes"],
        "profiles": [document["schedulerName"]],
        "summary": [
            ["pods", len(pods)],
            ["bound", sum(p["node"] is not None for p in pods)],
            ["pending", sum(p["where"] == "pending" for p in pods)],
            ["preempted", sum(p["preemptedBy"] is not None for p in pods)],
            ["not as expected", sum(not p["ok"] for p in pods)],
        ],
        "pods": pods,
        "groups": document.get("groups", []),
    }


_CHANGES = (
    ("moved", "moved"),
    ("becameSchedulable", "became schedulable"),
    ("becameUnschedulable", "became unschedulable"),
)


def _compare(document: dict[str, Any]) -> dict[str, Any]:
    changes = [
        {"pod": c["pod"], "change": kind, "plugin": _pod(c["plugin"]), "default": _pod(c["default"])}
        for key, kind in _CHANGES
        for c in document[key]
    ]
    profiles = document["profiles"]
    summary = document["summary"]
    return {
        "kind": "compare",
        "kubernetes": document["kubernetes"],
        "profiles": [profiles["plugin"]["schedulerName"], profiles["default"]["schedulerName"]],
        "summary": [
            ["compared", summary["compared"]],
            ["same", summary["same"]],
            ["moved", summary["moved"]],
            ["became schedulable", summary["becameSchedulable"]],
            ["became unschedulable", summary["becameUnschedulable"]],
            ["preempted (plugin)", summary["preempted"].get("plugin", 0)],
            ["preempted (default)", summary["preempted"].get("default", 0)],
        ],
        "changes": changes,
        "preempted": {label: profiles[label]["preempted"] for label in ("plugin", "default")},
        "nodeUse": document["nodeUse"],
        "groups": document.get("groups", []),
    }


def page_data(document: dict[str, Any], compare: bool) -> dict[str, Any]:
    """What the page draws: the JSON document, each pod's scores cut to REPORT_NODES."""
    data = _compare(document) if compare else _replay(document)
    data["pageRows"] = PAGE_ROWS
    return data


def _asset(name: str) -> str:
    """The page's style or script (kplugin/data/e2e/)."""
    return resources.files("kplugin").joinpath("data/e2e", name).read_text()


def render(document: dict[str, Any], *, compare: bool, title: str) -> str:
    """The report of ``document`` (run.as_json's, or compare.as_json's with ``compare``)."""
    data = json.dumps(page_data(document, compare), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    safe = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="color-scheme" content="light dark">',
            f"<title>{escape(title)}</title>",
            f"<style>{_asset('report.css')}</style></head><body>",
            f'<header><h1>{escape(title)}</h1><p id="context"></p></header>',
            '<main><section id="summary" aria-label="summary"></section><div id="content"></div></main>',
            f'<script type="application/json" id="data">{safe}</script>',
            f"<script>{_asset('report.js')}</script>",
            "</body></html>",
            "",
        ]
    )
