"""The HTML reports opened in a real browser: Debian's chromium, driven headless by
Playwright for Python pointed at it (no browser download). e2e's --report of a replay and
of a what-if, on the default scenario and on 500 nodes and 2,000 pods, and bench's
--report: no console error, the key elements there with the numbers of the same run's
--json (read from the page), the tables usable by keyboard, in light and dark colour
schemes, and a screenshot written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import REPO, Kplugin

from kplugin.e2e.htmlreport import PAGE_ROWS, REPORT_NODES

pytestmark = pytest.mark.integration

OLDEST = "1.28.3"


def new(tmp_path: Path, version: str = OLDEST) -> Path:
    cmd = [sys.executable, "-m", "kplugin", "new", "gpu", "--k8s", version, "-o", str(tmp_path / "p")]
    env = {**os.environ, "PYTHONPATH": str(REPO), "CI": "true"}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return tmp_path / "p" / "gpu"


def cards(page: Any) -> dict[str, int]:
    return {
        card.get_attribute("data-figure"): int(card.locator("b").inner_text())
        for card in page.locator("#summary .card").all()
    }


def cells(row: Any) -> list[str]:
    return [c.inner_text().strip() for c in row.locator("td").all()]


def test_a_replays_report_shows_the_runs_numbers(kplugin: Kplugin, tmp_path: Path, open_page: Any) -> None:
    project = new(tmp_path)
    html = tmp_path / "e2e.html"
    scenario = REPO / "examples" / "e2e-scenario.yaml"
    args = REPO / "examples" / "e2e-args.yaml"
    run = kplugin("e2e", str(project), "--scenario", str(scenario), "--args", str(args), "--json",
                  "--report", str(html))  # fmt: skip
    assert run.code == 0, run.stderr
    document = json.loads(run.stdout)
    assert f"e2e: report written to {html} (" in run.stderr
    pods = document["pods"]
    for scheme in ("light", "dark"):
        page = open_page(html, scheme)
        page.wait_for_selector("#pods tbody tr")
        assert page.errors == [], page.errors
        assert cards(page) == {
            "pods": len(pods),
            "bound": sum(p["node"] is not None for p in pods),
            "pending": sum(p["where"] == "pending" for p in pods),
            "preempted": 0,
            "not as expected": 0,
        }
        rows = page.locator("#pods tbody tr")
        assert [cells(r)[:2] for r in rows.all()] == [[p["pod"], p["where"]] for p in pods]
        page.screenshot(path=str(tmp_path / f"e2e-{scheme}.png"))
    # a pod picked by keyboard: its score table is the JSON's, best node first
    scored = next(p for p in pods if len(p["scores"]) > 1)
    index = pods.index(scored)
    rows.nth(index).focus()
    page.keyboard.press("Enter")
    assert rows.nth(index).get_attribute("aria-selected") == "true"
    table = page.locator("#details table.scores")
    plugins = sorted({name for s in scored["scores"] for name in s["plugins"]})
    # the total beside the node, as the text has it; a plugin's name may break between its words
    headers = [h.inner_text().replace("\u200b", "").replace("\n", "") for h in table.locator("th").all()]
    assert headers == ["node", "total", *plugins]
    for score, row in zip(scored["scores"], table.locator("tbody tr").all(), strict=True):
        shown = cells(row)
        assert shown[0].split(" ")[0] == score["node"]
        assert shown[1:] == [str(score["total"])] + [str(score["plugins"][p]) for p in plugins]
    chosen = [cells(r)[0] for r in table.locator("tbody tr").all() if "(chosen)" in cells(r)[0]]
    assert chosen == [f"{scored['node']} (chosen)"], chosen  # the best, or one of a tie
    # the pending pod's rejections, read from the scheduler's message
    waiting = next(p for p in pods if p["where"] == "pending" and "nodes are available" in p["reason"])
    rows.nth(pods.index(waiting)).click()
    rejected = page.locator("#details table.rejections tbody tr")
    assert rejected.count() >= 1 and sum(int(cells(r)[0]) for r in rejected.all()) == 3  # of the 3 nodes
    # and node by node (kplugin's reporting plugin): NodeResourcesFit, in-tree, rejected each
    assert [(r["node"], r["plugin"], r["reason"]) for r in waiting["nodeRejections"]] == [
        (node, "NodeResourcesFit", "Insufficient example.com/gpu") for node in ("cpu-only", "gpu-big", "gpu-small")
    ], waiting
    per_node = page.locator("#details table.node-rejections tbody tr")
    shown = [[r["node"], r["plugin"], r["reason"]] for r in waiting["nodeRejections"]]
    assert [cells(r) for r in per_node.all()] == shown
    # its attempts on the timeline, each at its time after the pods' creation began (the log's)
    attempts = [li.inner_text() for li in page.locator("#details ol.timeline li.attempt").all()]
    assert waiting["attemptsAt"] and len(attempts) == waiting["attempts"] == len(waiting["attemptsAt"]), waiting
    assert attempts == [f"attempt {i} · {at:.3f} s" for i, at in enumerate(waiting["attemptsAt"], 1)], attempts
    # web-1's selector rules out the GPU nodes (NodeAffinity), the project's Filter refuses
    # the one node left
    refused = next(p for p in pods if p["pod"] == "web-1")
    assert [(r["node"], r["plugin"]) for r in refused["nodeRejections"]] == [
        ("cpu-only", "Gpu"), ("gpu-big", "NodeAffinity"), ("gpu-small", "NodeAffinity")
    ], refused  # fmt: skip
    rows.nth(pods.index(refused)).click()
    per_node = page.locator("#details table.node-rejections tbody tr")
    assert [cells(r) for r in per_node.all()] == [
        [r["node"], r["plugin"], r["reason"]] for r in refused["nodeRejections"]
    ]
    # sorting by attempts (a header's button) puts the most tried last; search filters the rows
    page.locator("#pods th button", has_text="attempts").click()
    assert page.locator("#pods th").nth(3).get_attribute("aria-sort") == "ascending"
    assert int(cells(rows.last)[3]) == max(p["attempts"] for p in pods)
    page.fill("#pods input[type=search]", "train")
    assert rows.count() == sum("train" in p["pod"] for p in pods)
    page.screenshot(path=str(tmp_path / "e2e-picked.png"), full_page=True)
    assert (tmp_path / "e2e-light.png").stat().st_size > 10_000


def test_a_what_ifs_report_shows_the_differences(kplugin: Kplugin, tmp_path: Path, open_page: Any) -> None:
    project = new(tmp_path)
    html = tmp_path / "whatif.html"
    scenario = REPO / "examples" / "e2e-scenario.yaml"
    args = REPO / "examples" / "e2e-args.yaml"
    run = kplugin("e2e", str(project), "--scenario", str(scenario), "--args", str(args), "--compare", "default",
                  "--json", "--report", str(html))  # fmt: skip
    assert run.code == 0, run.stderr
    diff = json.loads(run.stdout)
    page = open_page(html)
    page.wait_for_selector("#summary .card")
    assert page.errors == [], page.errors
    summary = diff["summary"]
    shown = cards(page)
    for figure in ("compared", "same", "moved"):
        assert shown[figure] == summary[figure], (figure, shown, summary)
    changes = diff["moved"] + diff["becameSchedulable"] + diff["becameUnschedulable"]
    assert changes, "the sample moves pods against the default profile on this scenario"
    rows = page.locator("#changes tbody tr")
    assert rows.count() == len(changes)
    first = cells(rows.first)
    change = next(c for c in changes if c["pod"] == first[0])
    assert first[2:] == [change["plugin"]["where"], change["default"]["where"]]
    # web-1 binds under the default profile only; under the plugin's, each node's rejection
    web = next(c for c in changes if c["pod"] == "web-1")
    assert web["default"]["nodeRejections"] == [] and web["default"]["node"] == "cpu-only", web
    assert [r["plugin"] for r in web["plugin"]["nodeRejections"]] == ["Gpu", "NodeAffinity", "NodeAffinity"], web
    # both profiles' score tables, each as wide as it needs: no sideways scrolling in a
    # 1,200-pixel window (the default profile has some ten score plugins)
    assert page.locator("#details .side .pod-details").count() == 2
    for box in page.locator("#details .heatmap").all():
        assert box.evaluate("b => b.scrollWidth <= b.clientWidth + 1"), box.evaluate(
            "b => [b.scrollWidth, b.clientWidth]"
        )
    assert page.locator("#node-use tbody tr").count() == min(len(diff["nodeUse"]), PAGE_ROWS)
    page.screenshot(path=str(tmp_path / "whatif.png"), full_page=True)


def big_scenario(path: Path) -> None:
    """500 nodes, 2,000 pods: 1,500 bound already, 500 for the scheduler (the replay logs
    scores for up to 250,000 pod-node pairs: all of these)."""
    nodes = [{"name": f"node-{i:03d}", "labels": {"example.com/accelerator": "true"},
              "capacity": {"example.com/gpu": str(4 + i % 5)}} for i in range(500)]  # fmt: skip
    bound = [{"name": f"bound-{i:04d}", "nodeName": f"node-{i % 500:03d}"} for i in range(1500)]
    pending = [{"name": f"train-{i:03d}", "requests": {"example.com/gpu": "1"}} for i in range(500)]
    path.write_text(json.dumps({"nodes": nodes, "pods": bound + pending}))


def test_the_report_of_500_nodes_and_2000_pods_opens_quickly(kplugin: Kplugin, tmp_path: Path, open_page: Any) -> None:
    project = new(tmp_path)
    scenario = tmp_path / "big.yaml"
    big_scenario(scenario)
    html = tmp_path / "big.html"
    run = kplugin("e2e", str(project), "--scenario", str(scenario), "--args", str(REPO / "examples" / "e2e-args.yaml"),
                  "--json", "--report", str(html))  # fmt: skip
    assert run.code == 0, run.stderr
    pods = json.loads(run.stdout)["pods"]
    # scores logged for every pod the scheduler placed (percentageOfNodesToScore: some 230 nodes each)
    assert len(pods) == 2000 and sum(len(p["scores"]) > REPORT_NODES for p in pods) >= 400
    size = html.stat().st_size
    assert size < 8 * 2**20, size  # the README's bound
    page = open_page(html)
    page.wait_for_selector("#pods tbody tr")
    assert page.errors == [], page.errors
    assert cards(page)["pods"] == 2000
    rows = page.locator("#pods tbody tr")
    assert rows.count() == PAGE_ROWS  # the first page; a button shows the rest
    more = page.locator("#pods button", has_text="show all 2000")
    more.click()
    assert rows.count() == 2000
    scored = next(p for p in pods if p["pod"].endswith("train-499"))
    page.fill("#pods input[type=search]", "train-499")
    assert [cells(r)[0] for r in rows.all()] == [scored["pod"]]
    rows.first.click()
    table_rows = page.locator("#details table.scores tbody tr")
    assert table_rows.count() in (10, 11)  # the best ten, and the chosen node where it is not among them
    assert cells(table_rows.first)[1] == str(scored["scores"][0]["total"])
    page.screenshot(path=str(tmp_path / "big.png"))
