"""The feature gates of an e2e run: what its components need (the plugins' points, the
scenario's pod groups) with --feature-gates last, and what the run says about them."""

from __future__ import annotations

from typing import Protocol

from kplugin.core.errors import Setting
from kplugin.model.manifests import GateFlags
from kplugin.model.project import Project
from kplugin.scenario.format import Scenario, pod_group_gates


class Inputs(Protocol):
    """What the gates of a run depend on (kplugin.e2e.run.Inputs has it)."""

    @property
    def project(self) -> Project: ...
    @property
    def scenario(self) -> Scenario: ...
    @property
    def feature_gates(self) -> tuple[tuple[str, bool], ...]: ...


def gate_flags(inputs: Inputs) -> GateFlags:
    """The flags for the feature gates the run needs: the plugins' points' and the
    scenario's pod groups', the scheduler's with those --feature-gates sets."""
    gates = tuple(sorted({*inputs.project.gates, *pod_group_gates(inputs.scenario)}))
    return GateFlags.of(gates, inputs.project.target.facts, dict(inputs.feature_gates))


def alpha_pre_hints_line(inputs: Inputs) -> str | None:
    """What a run says when --feature-gates turns on 1.37's alpha PreQueueingHints, which
    e2e leaves off (runPreQueueingHintPlugins of 1.37 skips plugins that have none)."""
    gate = inputs.project.target.facts.pre_hints_gate
    if gate is None or not dict(inputs.feature_gates).get(gate):
        return None
    return (
        f"{gate} is alpha in {inputs.project.target.version.minor_key}: where a PreQueueingHint names pods, its "
        "queue asks only those and skips the plugins that registered the same event without one (every in-tree "
        "plugin but DynamicResources), whose pods that event then leaves waiting; 1.38 asks all pods for them"
    )


def gates_line(inputs: Inputs, existing: bool = False) -> str | None:
    """What a run with gates says about them, in one line (None: no gates)."""
    flags = gate_flags(inputs)
    if not flags.scheduler:
        return None
    reasons = (
        ("the plugins' points", inputs.project.gates),
        ("the scenario's pod groups", pod_group_gates(inputs.scenario)),
    )
    needs = " and ".join(reason for reason, gates in reasons if gates)
    why = (f": {needs} need them" if needs else "") + (
        f"; {Setting.FEATURE_GATES} as given" if inputs.feature_gates else ""
    )
    scheduler = f"kube-scheduler runs with {' '.join(flags.scheduler)}"
    if existing:
        served = ", ".join(f"{resource} of {version}" for version, resource in flags.served)
        return scheduler + why + (f" (and the cluster to serve {served})" if served else "")
    if not flags.apiserver:
        return scheduler + why
    return f"kube-apiserver runs with {' '.join(flags.apiserver)} and {scheduler.replace(' runs', '')}{why}"
