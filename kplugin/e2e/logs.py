"""What kplugin e2e reads from the real scheduler's log: each node's score per plugin,
and what the API server refused it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kplugin.e2e.scenario import NAMESPACE


@dataclass(frozen=True)
class NodeScore:
    """One node's score for a pod: each Score plugin's weighted score and their sum."""

    node: str
    total: int
    plugins: dict[str, int]


# kube-scheduler's schedule_one.go logs these at V(10), unchanged from 1.28 to 1.37
_SCORE_LINE = re.compile(
    r'"(?P<what>Plugin scored node for pod|Calculated node\'s final score for pod)" '
    r'pod="(?P<pod>[^"]+)"(?: plugin="(?P<plugin>[^"]+)")? node="(?P<node>[^"]+)" score=(?P<score>-?[0-9]+)'
)


# what the API server says when RBAC denies a request, as client-go logs it
_FORBIDDEN = re.compile(
    r'User \\?"(?P<user>[^"\\]+)\\?" cannot (?P<verb>[a-z]+) resource \\?"(?P<resource>[^"\\]+)\\?"'
    r'(?: in API group \\?"(?P<group>[^"\\]*)\\?")?'
)


def scores_from_log(text: str, namespace: str = NAMESPACE) -> dict[str, tuple[NodeScore, ...]]:
    """Per pod, each node's scores in the pod's last scheduling attempt, best first."""
    plugins: dict[str, dict[str, dict[str, int]]] = {}
    totals: dict[str, dict[str, int]] = {}
    for match in _SCORE_LINE.finditer(text):
        ns, _, pod = match["pod"].partition("/")
        if ns != namespace:
            continue
        score = int(match["score"])
        if match["plugin"] is not None:
            if pod in totals:  # a new attempt: forget the previous one
                del totals[pod]
                plugins.pop(pod, None)
            plugins.setdefault(pod, {}).setdefault(match["node"], {})[match["plugin"]] = score
        else:
            totals.setdefault(pod, {})[match["node"]] = score
    result = {}
    for pod, by_node in totals.items():
        by_plugin = plugins.get(pod, {})
        scored = [NodeScore(n, total, dict(sorted(by_plugin.get(n, {}).items()))) for n, total in by_node.items()]
        result[pod] = tuple(sorted(scored, key=lambda s: (-s.total, s.node)))
    return result


def denied_requests(log: str) -> list[str]:
    """What the API server refused the scheduler, from its log: sorted "verb resource.group"."""
    found = set()
    for match in _FORBIDDEN.finditer(log):
        group = match["group"] or ""
        found.add(f"{match['verb']} {match['resource']}" + (f".{group}" if group else ""))
    return sorted(found)
