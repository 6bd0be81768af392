"""``kplugin e2e``: the project's scheduler against a real local control plane (or a
cluster of the user's) and a scenario (kplugin.scenario), replayed once per profile
(replay: the step runner; create: the state, through bulk creation; watch: the pods
followed; session: what a replay takes and gives) and compared (compare); what the
scheduler's log says (logs); the inputs and checks of a run (run); the job the command
runs (job)."""

from kplugin.e2e.logs import NodeScore, denied_requests, read_log, scores_from_log
from kplugin.e2e.rbac import RBAC_FILE, rbac_documents
from kplugin.e2e.run import (
    Inputs,
    Options,
    Outcome,
    as_json,
    check,
    check_config,
    prepare,
)
from kplugin.e2e.session import PodPlacement
from kplugin.scenario.format import (
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
    "Pod",
    "PodPlacement",
    "Scenario",
    "as_json",
    "check",
    "check_config",
    "denied_requests",
    "load_scenario",
    "prepare",
    "rbac_documents",
    "read_log",
    "scores_from_log",
]
