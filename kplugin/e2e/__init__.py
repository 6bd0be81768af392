"""``kplugin e2e``: the project's scheduler against a real local control plane (or a
cluster of the user's) and a scenario (scenario: the format; kube: Kubernetes objects as
scenario entries), replayed once per profile (replay, through bulk creation) and
compared (compare); what the scheduler's log says (logs); snapshots of real clusters
(snapshot); the run (run)."""

from kplugin.e2e.logs import NodeScore, denied_requests, read_log, scores_from_log
from kplugin.e2e.replay import Placement
from kplugin.e2e.run import (
    RBAC_FILE,
    Inputs,
    Options,
    Outcome,
    as_json,
    check,
    check_config,
    prepare,
    rbac_documents,
    run,
)
from kplugin.e2e.scenario import (
    DEFAULT_CAPACITY,
    DEFAULT_SCENARIO,
    NAMESPACE,
    PENDING,
    PREEMPTED,
    Node,
    Pod,
    Scenario,
    load_scenario,
)

__all__ = [
    "DEFAULT_CAPACITY",
    "DEFAULT_SCENARIO",
    "NAMESPACE",
    "PENDING",
    "PREEMPTED",
    "RBAC_FILE",
    "Inputs",
    "Node",
    "NodeScore",
    "Options",
    "Outcome",
    "Placement",
    "Pod",
    "Scenario",
    "as_json",
    "check",
    "check_config",
    "denied_requests",
    "load_scenario",
    "prepare",
    "rbac_documents",
    "read_log",
    "run",
    "scores_from_log",
]
