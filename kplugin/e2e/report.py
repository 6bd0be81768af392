"""An e2e run reported: for people, each pod's placement with its nodes' scores in
aligned columns (the best few nodes, sorted by total); for CI systems, a JUnit XML
report with one test case per expectation of the scenario. Both are built in memory and
returned; writing them is the caller's (kplugin.core.safefs)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from kplugin.e2e.logs import NodeRejection, NodeScore
from kplugin.e2e.session import PodPlacement

TOP_NODES = 5  # the nodes whose scores a pod shows unless told otherwise
GAP = "  "  # between two columns


@dataclass(frozen=True)
class ScoreView:
    """How a text report shows each pod's scores: the best ``top`` nodes (None: every
    node; 0: no scores), laid out within ``width`` columns where the values allow (a
    value is never cut: a row of columns too wide goes on in a block below); ``more``
    tells the reader how to see the nodes left out (the CLI's flag)."""

    top: int | None = TOP_NODES
    width: int = 80
    more: str = ""


DEFAULT_VIEW = ScoreView()


def ranked(scores: Sequence[NodeScore]) -> list[NodeScore]:
    """Best total first; ties by node name."""
    return sorted(scores, key=lambda s: (-s.total, s.node))


def rejection_lines(rejections: Sequence[NodeRejection], indent: str = "    ") -> list[str]:
    """The nodes the Filter plugins rejected, one line each, TOP_NODES of them (the JSON
    document has all)."""
    lines = [
        f"{indent}rejected{f' by {r.plugin}' if r.plugin else ''} on {r.node}: {r.reason or r.code}"
        for r in rejections[:TOP_NODES]
    ]
    if len(rejections) > TOP_NODES:
        lines.append(f"{indent}({len(rejections) - TOP_NODES} more node(s) rejected; the JSON document has them all)")
    return lines


def score_table(scores: Sequence[NodeScore], view: ScoreView, indent: str = "    ") -> list[str]:
    """One line per node shown (its name, total, and each plugin's score: '-' where the
    plugin scored none), under a header; the plugins in name order; then how many nodes
    are left out."""
    if not scores or view.top == 0:
        return []
    best = ranked(scores)
    shown = best if view.top is None else best[: view.top]
    plugins = sorted({name for score in shown for name in score.plugins})
    columns = [["node", *(s.node for s in shown)], ["total", *(str(s.total) for s in shown)]]
    columns += [[name, *(str(s.plugins[name]) if name in s.plugins else "-" for s in shown)] for name in plugins]
    widths = [max(map(len, column)) for column in columns]
    lines = []
    for group in _groups(widths, view.width - len(indent)):
        for row in range(len(shown) + 1):
            cells = [columns[i][row].ljust(widths[i]) if i == 0 else columns[i][row].rjust(widths[i]) for i in group]
            lines.append((indent + GAP.join(cells)).rstrip())
    hidden = len(best) - len(shown)
    if hidden:
        hint = f": {view.more}" if view.more else ""  # ASCII: stdout's encoding may be any
        lines.append(f"{indent}({hidden} more node{'s' if hidden > 1 else ''} not shown{hint})")
    return lines


def _groups(widths: list[int], room: int) -> list[list[int]]:
    """The columns (by index) of each block of lines: the node, the total and as many
    plugins as fit in ``room``; the plugins that do not, in further blocks that repeat
    the node column. Each block has one plugin at least, however wide."""
    groups = [[0, 1]]
    used = widths[0] + len(GAP) + widths[1]
    for i in range(2, len(widths)):
        wanted = len(GAP) + widths[i]
        if used + wanted > room and len(groups[-1]) > (2 if len(groups) == 1 else 1):
            groups.append([0])
            used = widths[0]
        groups[-1].append(i)
        used += wanted
    return groups


def _at(seconds: float | None, before: str = "") -> str:
    """A time after the pods' creation began, as the text shows it: '1.234 s' (or '?')."""
    return "" if seconds is None else f"{before}{seconds:.3f} s"


def placements_text(placements: Sequence[PodPlacement], view: ScoreView) -> str:
    """Each pod the scheduler placed (or not): where, whether as expected, why, its
    nodes' scores, its attempts; the pods bound already in the scenario are counted."""
    lines = []
    before = 0
    for p in placements:
        if p.bound_before and p.expected is None and p.preempted_by is None:
            before += 1
            continue
        mark = "" if p.expected is None else ("ok" if p.as_expected else f"EXPECTED {' or '.join(p.expected)}")
        lines.append(f"{p.pod:24} {p.where:24} {mark}".rstrip())
        if p.reason:
            lines.append(f"    why: {p.reason}")
        lines += rejection_lines(p.rejections)
        lines += score_table(p.scores, view)
        if p.attempts > 1 or p.requeues:
            moved = ", ".join(f"{r.event} ({r.queue}{_at(r.at, ', ')})" for r in p.requeues)
            when = f" (at {', '.join(_at(at) or '?' for at in p.attempts_at)})" if p.attempts_at else ""
            lines.append(f"    attempts: {p.attempts}{when}" + (f"; requeued by: {moved}" if moved else ""))
        if p.skipped:
            listed = ", ".join(f"{event} x{count}" if count > 1 else event for event, count in p.skipped)
            lines.append(
                f"    events that left it pending: {listed} (no plugin that rejected it registered the event, or "
                "their QueueingHints said QueueSkip)"
            )
    if before:
        lines.append(f"({before} pod(s) bound already in the scenario, not shown)")
    return "".join(line + "\n" for line in lines)


# --- JUnit XML --------------------------------------------------------------------


@dataclass(frozen=True)
class Suite:
    """One replay as a test suite: its expectations are its test cases. ``enforced``:
    a pod not where expected is a failure; otherwise (the default profile of --compare,
    which the expectations are not about) it is reported as skipped, with where it went."""

    name: str
    placements: Sequence[PodPlacement]
    seconds: float
    properties: dict[str, str] = field(default_factory=dict)
    enforced: bool = True


def expectation_failed(p: PodPlacement) -> str:
    """A pod not where the scenario expects, in one line (also the error kplugin e2e ends with)."""
    wanted = " or ".join(p.expected or ())
    return f"{p.pod} is {p.where}, expected {wanted}" + (f" ({p.reason})" if p.reason else "")


# characters XML 1.0 cannot hold, even escaped (a log line may carry them)
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _case(suite: Suite, p: PodPlacement, view: ScoreView) -> tuple[ET.Element, str]:
    """The test case of one expectation, and its result: "passed", "failure" or "skipped"."""
    wanted = " or ".join(p.expected or ())
    case = ET.Element("testcase", {"name": _clean(f"{p.pod}: {wanted}"), "classname": _clean(suite.name)})
    if p.as_expected:
        return case, "passed"
    if not suite.enforced:
        message = f"{expectation_failed(p)}; not checked with this profile (the project's profile is)"
        ET.SubElement(case, "skipped", {"message": _clean(message)})
        return case, "skipped"
    failure = ET.SubElement(case, "failure", {"message": _clean(expectation_failed(p)), "type": "placement"})
    details = [f"where: {p.where}", f"expected: {wanted}"]
    if p.reason:
        details.append(f"why: {p.reason}")
    details += rejection_lines(p.rejections, indent="")
    details += score_table(p.scores, view, indent="")
    failure.text = _clean("\n".join(details) + "\n")
    return case, "failure"


def _suite(suite: Suite, view: ScoreView) -> tuple[ET.Element, dict[str, int]]:
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    cases = []
    for p in suite.placements:
        if p.expected is None:
            continue
        case, result = _case(suite, p, view)
        cases.append(case)
        counts["tests"] += 1
        if result == "failure":
            counts["failures"] += 1
        elif result == "skipped":
            counts["skipped"] += 1
    element = ET.Element("testsuite", {"name": _clean(suite.name), **{k: str(v) for k, v in counts.items()}})
    element.set("time", f"{suite.seconds:.3f}")
    if suite.properties:
        properties = ET.SubElement(element, "properties")
        for name, value in suite.properties.items():
            ET.SubElement(properties, "property", {"name": name, "value": _clean(value)})
    element.extend(cases)
    return element, counts


def junit_xml(suites: Sequence[Suite], view: ScoreView = DEFAULT_VIEW) -> bytes:
    """The JUnit XML report of ``suites``: the same run gives the same bytes (no
    timestamps; the times are the replays' own)."""
    view = replace(view, width=DEFAULT_VIEW.width)  # the same report whatever the terminal
    root = ET.Element("testsuites", {"name": "kplugin e2e"})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        element, counts = _suite(suite, view)
        root.append(element)
        for key, value in counts.items():
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{sum(s.seconds for s in suites):.3f}")
    ET.indent(root)
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"
