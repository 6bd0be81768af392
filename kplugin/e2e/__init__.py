"""``kplugin e2e``: the project's scheduler against a real local control plane and a
scenario of nodes and pods (scenario), what its log says (logs), and the run (run)."""

from kplugin.e2e.logs import NodeScore, denied_requests, scores_from_log
from kplugin.e2e.run import (
    RBAC_FILE,
    Inputs,
    Options,
    Outcome,
    Placement,
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
    "run",
    "scores_from_log",
]
