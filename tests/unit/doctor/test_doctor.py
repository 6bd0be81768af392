"""kplugin doctor: a clean project is clean; each seeded mistake is found, with file:line."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from support import REPO, Run

K = Callable[..., Run]


@pytest.fixture
def project(kplugin: K, tmp_path: Path) -> Path:
    run = kplugin("new", "gpu-aware", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    return tmp_path / "gpu-aware"


def doctor(kplugin: K, project: Path, *args: str) -> tuple[int, list[dict[str, object]]]:
    run = kplugin("doctor", str(project), "--json", *args)
    assert run.code in {0, 1}, run.stderr
    report = json.loads(run.stdout)
    return run.code, report["findings"]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_clean_project(kplugin: K, project: Path) -> None:
    code, findings = doctor(kplugin, project)
    # without go.sum (--no-tidy) the args cannot be decoded by the plugin's Go code: a note
    assert code == 0
    assert [(f["severity"], f["check"]) for f in findings] == [("info", "args")]
    run = kplugin("doctor", str(project))
    assert run.code == 0 and "0 error(s)" in run.stderr


CONFIG = "deploy/scheduler-config.yaml"


def seed(project: Path, mistake: str, tmp_path: Path) -> list[str]:
    """Break ``project`` in one way; returns extra doctor arguments."""
    config = project / CONFIG
    if mistake == "underscore-name":
        edit(config, "- name: GpuAware\n", "- name: Gpu_Aware\n")
    elif mistake == "name-mismatch":
        edit(project / "pkg/gpuaware/plugin.go", 'const Name = "GpuAware"', 'const Name = "GPUAware"')
    elif mistake == "not-imported":
        edit(project / "cmd/scheduler/plugins.go", '\t_ "example.com/gpu-aware/pkg/gpuaware"\n', "")
    elif mistake == "unknown-pluginconfig":
        edit(config, "  - name: GpuAware\n    args:", "  - name: Nope\n    args:")
    elif mistake == "v1beta3-on-1.29":
        edit(config, "config.k8s.io/v1\n", "config.k8s.io/v1beta3\n")
        return ["--k8s", "1.29"]
    elif mistake == "v1beta2":
        edit(config, "config.k8s.io/v1\n", "config.k8s.io/v1beta2\n")
    elif mistake == "pod-scheduler-name":
        edit(project / "deploy/sample-pod.yaml", "schedulerName: gpu-aware", "schedulerName: gpu-awre")
    elif mistake == "stale-configmap":
        edit(config, "weight: 1", "weight: 2")
    elif mistake == "default-lease":
        edit(config, "resourceName: gpu-aware\n", "resourceName: kube-scheduler\n")
    elif mistake == "lease-unset":
        edit(config, "  resourceName: gpu-aware\n  resourceNamespace: kube-system\n", "")
    elif mistake == "rbac-missing-nodes":
        edit(project / "deploy/rbac.yaml", "  - nodes\n", "  - nodez\n")
    elif mistake == "rbac-dra-1.34":
        return ["--k8s", "1.34"]
    elif mistake == "rbac-lease":
        edit(project / "deploy/rbac.yaml", "  - gpu-aware\n", "  - kube-scheduler\n")
    elif mistake == "dynamic-binary":
        binary = tmp_path / "kube-scheduler"
        shutil.copy(shutil.which("ls") or "/bin/ls", binary)
        return ["--binary", str(binary)]
    elif mistake == "negative-weight":
        edit(config, "weight: 1", "weight: -1")
    elif mistake == "disabled-all":
        edit(
            config, "    filter:\n      enabled:\n", "    filter:\n      disabled:\n      - name: '*'\n      enabled:\n"
        )
    elif mistake == "go-mod-pin":
        edit(project / "go.mod", "k8s.io/api => k8s.io/api v0.28.3", "k8s.io/api => k8s.io/api v0.28.2")
    elif mistake == "go-mod-missing":
        edit(project / "go.mod", "\tk8s.io/kubelet => k8s.io/kubelet v0.28.3\n", "")
    elif mistake == "generated-edited":
        edit(project / "pkg/gpuaware/zz_generated.adapter.go", "DO NOT EDIT.", "DO NOT EDIT. (edited anyway)")
    elif mistake == "generated-missing":
        (project / "internal/fw/zz_generated.fw.go").unlink()
    elif mistake == "go-mod-require":
        edit(project / "go.mod", "require k8s.io/kubernetes v1.28.3", "require k8s.io/kubernetes v1.28.2")
    elif mistake == "method-not-listed":
        with (project / "pkg/gpuaware/plugin.go").open("a") as plugin:
            plugin.write(
                "\nfunc (pl *GpuAware) Reserve(_ context.Context, _ fw.CycleState, _ *v1.Pod, _ string) *fw.Status {\n"
                "\treturn nil\n}\n"
            )
    elif mistake == "listed-not-implemented":
        edit(project / "kplugin.yaml", "  - filter\n", "  - filter\n  - permit\n")
    elif mistake == "config-enables-unlisted":
        edit(config, "    filter:\n", "    reserve:\n      enabled:\n      - name: GpuAware\n    filter:\n")
    else:
        raise AssertionError(mistake)
    return []


CASES = [
    # mistake, check, severity, file, line (None: no line), text in "what"
    ("underscore-name", "plugin-names", "error", CONFIG, 12, "'Gpu_Aware'"),
    ("name-mismatch", "plugin-names", "error", "pkg/gpuaware/plugin.go", None, "'GPUAware'"),
    ("not-imported", "plugin-names", "error", "cmd/scheduler/plugins.go", None, "not imported"),
    ("unknown-pluginconfig", "plugin-names", "error", CONFIG, 24, "'Nope'"),
    ("v1beta3-on-1.29", "api-version", "error", CONFIG, 1, "v1beta3"),
    ("v1beta2", "api-version", "error", CONFIG, 1, "v1beta2"),
    ("pod-scheduler-name", "scheduler-name", "error", "deploy/sample-pod.yaml", None, "'gpu-awre'"),
    ("stale-configmap", "scheduler-name", "error", "deploy/configmap.yaml", None, "differs"),
    ("default-lease", "lease", "error", CONFIG, 5, "default scheduler's lease"),
    ("lease-unset", "lease", "error", CONFIG, None, "default scheduler's lease"),
    ("rbac-missing-nodes", "rbac", "error", "deploy/rbac.yaml", None, "core/nodes"),
    ("rbac-dra-1.34", "rbac", "error", "deploy/rbac.yaml", None, "resource.k8s.io/resourceclaims"),
    ("rbac-lease", "rbac", "error", "deploy/rbac.yaml", None, "lease 'gpu-aware'"),
    ("dynamic-binary", "binary", "error", None, None, "dynamically linked"),
    ("negative-weight", "weights", "error", CONFIG, 21, "weight -1"),
    ("disabled-all", "disabled-all", "warning", CONFIG, 15, "'*'"),
    ("go-mod-pin", "go-mod", "error", "go.mod", None, "k8s.io/api is pinned at v0.28.2"),
    ("go-mod-missing", "go-mod", "error", "go.mod", None, "no replace for k8s.io/kubelet"),
    ("go-mod-require", "go-mod", "error", "go.mod", 5, "k8s.io/kubernetes is not required at v1.28.3"),
    ("generated-edited", "generated", "warning", "pkg/gpuaware/zz_generated.adapter.go", None, "edited by hand"),
    ("generated-missing", "generated", "warning", "internal/fw/zz_generated.fw.go", None, "is missing"),
    ("method-not-listed", "extension-points", "error", "pkg/gpuaware/plugin.go", 198, "implements Reserve"),
    ("listed-not-implemented", "extension-points", "error", "kplugin.yaml", 14, "has no Permit method"),
    ("config-enables-unlisted", "extension-points", "error", CONFIG, 15, "enables GpuAware at reserve"),
]


@pytest.mark.parametrize(("mistake", "check", "severity", "file", "line", "what"), CASES, ids=[c[0] for c in CASES])
def test_finds_seeded_mistake(
    kplugin: K,
    project: Path,
    tmp_path: Path,
    mistake: str,
    check: str,
    severity: str,
    file: str | None,
    line: int | None,
    what: str,
) -> None:
    args = seed(project, mistake, tmp_path)
    code, findings = doctor(kplugin, project, *args)
    matching = [f for f in findings if f["check"] == check and what in str(f["what"])]
    assert matching, findings
    finding = matching[0]
    assert finding["severity"] == severity
    assert finding["why"] and finding["fix"]
    if file is not None:
        assert finding["file"] == file
    if line is not None:
        assert finding["line"] == line
    assert code == (1 if any(f["severity"] == "error" for f in findings) else 0)
    if severity == "error":
        assert code == 1


def test_listed_points_are_found_in_the_right_plugin(kplugin: K, project: Path) -> None:
    """A second plugin of another shape (QueueSort only): the finding for a point it lists
    and does not implement names its own list's line, not the first plugin's."""
    run = kplugin("add", "plugin", "FifoSort", "--extension-points", "queuesort", "-p", str(project), "--no-tidy")
    assert run.code == 0, run.stderr
    meta = project / "kplugin.yaml"
    edit(meta, "  - queuesort\n", "  - queuesort\n  - Filter\n")  # a spelling kplugin.yaml accepts
    code, findings = doctor(kplugin, project)
    missing = [f for f in findings if f["rule"] == "point-not-implemented"]
    assert [(f["file"], f["what"]) for f in missing] == [
        ("kplugin.yaml", "kplugin.yaml lists filter for FifoSort, but pkg/fifosort has no Filter method on FifoSort")
    ]
    lines = meta.read_text().splitlines()
    assert lines[int(str(missing[0]["line"])) - 1] == "  - Filter"
    assert lines.index("- name: FifoSort") < int(str(missing[0]["line"])) - 1
    assert code == 1


def test_the_reporting_plugin_enabled_by_hand_is_registered(kplugin: K, project: Path) -> None:
    """cmd/scheduler registers KpluginNodeRejections: a profile that enables it (as the
    README says, to see the rejections in a cluster) is no finding."""
    edit(project / CONFIG, "    filter:\n", "    multiPoint:\n      enabled:\n      - name: KpluginNodeRejections\n"
         "    postFilter:\n      enabled:\n      - name: KpluginNodeRejections\n    filter:\n")  # fmt: skip
    _, findings = doctor(kplugin, project)  # (the edit makes deploy/configmap.yaml stale: other checks)
    assert [f for f in findings if f["check"] == "plugin-names"] == [], findings
    edit(project / CONFIG, "- name: KpluginNodeRejections\n    filter:", "- name: KpluginNodeRejection\n    filter:")
    _, findings = doctor(kplugin, project)
    named = [f for f in findings if f["check"] == "plugin-names"]
    assert [f["rule"] for f in named] == ["plugin-unregistered"] and "'KpluginNodeRejection'" in str(named), named


def test_text_output_names_file_and_line(kplugin: K, project: Path) -> None:
    edit(project / CONFIG, "weight: 1", "weight: -1")
    run = kplugin("doctor", str(project))
    assert run.code == 1
    assert f"{CONFIG}:21: error: [weight-invalid]" in run.stdout
    assert "why:" in run.stdout and "fix:" in run.stdout


def test_doctor_on_non_project(kplugin: K, tmp_path: Path) -> None:
    run = kplugin("doctor", str(tmp_path))
    assert run.code == 2 and "not a kplugin project" in run.stderr


# --- the rule catalog, and the framework of the target minor (issue 15) -----------------


def test_list_rules(kplugin: K) -> None:
    from kplugin.doctor.rules import RULES

    run = kplugin("doctor", "--list-rules", "--json")
    assert run.code == 0, run.stderr
    rules = json.loads(run.stdout)
    assert [r["id"] for r in rules] == [r.id for r in RULES]
    assert len({r["id"] for r in rules}) == len(rules)  # stable and unique
    assert all(r["why"] and r["fix"] and r["severity"] in {"error", "warning", "info"} for r in rules)
    text = kplugin("doctor", "--list-rules")
    assert text.code == 0 and "signpod-missing" in text.stdout and "hints-missing" in text.stdout
    # a value of a finding is named, not a template field; a setting is its flag
    import re

    for listing in (text.stdout, run.stdout):
        assert re.findall(r"\{\w+\}", listing) == [], listing
    assert "fix: kplugin add extension-point <plugin_name> <point>\n" in text.stdout
    assert "[<api_group>], resources: [<resource>]" in text.stdout and "--api native" in text.stdout


def test_a_rules_values_never_take_a_settings_name() -> None:
    """A finding's value named like a setting (group, plugin...) would be spelled as that
    setting's flag in the list of rules: every value a rule names is no setting's name,
    unless the rule means that setting."""
    import string

    from kplugin.core.errors import Setting
    from kplugin.doctor.rules import RULES

    settings = {s.value[1:-1] for s in Setting}
    meant = {("configmap-stale", "format"), ("binary-arch", "platform"), ("generated-edited", "keep_edited"),
             ("framework-imported", "api"), ("prequeueinghint-unsupported", "api"),
             ("generated-clients-stale", "k8s")}  # fmt: skip
    for rule in RULES:
        for text in (rule.why, rule.fix):
            named = {field for _, field, _, _ in string.Formatter().parse(text) if field}
            assert {(rule.id, name) for name in named & settings} <= meant, rule.id


def test_findings_carry_their_rule(kplugin: K, project: Path) -> None:
    edit(project / CONFIG, "weight: 1", "weight: -1")
    code, findings = doctor(kplugin, project)
    (weights,) = [f for f in findings if f["check"] == "weights"]
    assert weights["rule"] == "weight-invalid" and code == 1


def hintless(project: Path) -> Path:
    """A plugin whose EventsToRegister registers its node event without a hint."""
    plugin = project / "pkg/gpuaware/plugin.go"
    edit(plugin, "\t\t\tQueueingHintFn:    pl.isSchedulableAfterNodeChange,\n", "")
    return plugin


@pytest.fixture
def enqueueing(kplugin: K, tmp_path: Path) -> Path:
    run = kplugin("new", "gpu-aware", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path),
                  "--extension-points", "filter,score,enqueueextensions")  # fmt: skip
    assert run.code == 0, run.stderr
    return tmp_path / "gpu-aware"


@pytest.mark.parametrize(
    ("version", "found"), [("1.32", True), ("1.37", True), ("1.31", False), ("1.28.3", True), ("1.28.15", False)]
)
def test_events_without_hints_where_hints_are_on(kplugin: K, enqueueing: Path, version: str, found: bool) -> None:
    """The generated events carry hints; one without is reported with its line, where the
    target's queue uses hints (on by default in 1.28.0-1.28.4 and from 1.32), and not where
    it ignores them."""
    _, clean = doctor(kplugin, enqueueing, "--k8s", version)
    assert not [f for f in clean if f["rule"] == "hints-missing"]
    plugin = hintless(enqueueing)
    _, findings = doctor(kplugin, enqueueing, "--k8s", version)
    hits = [f for f in findings if f["rule"] == "hints-missing"]
    if not found:
        assert hits == []
        return
    (hit,) = hits
    line = next(
        i
        for i, text in enumerate(plugin.read_text().splitlines(), 1)
        if "Event:             fw.ClusterEvent{Resource: fw.Node" in text
    )
    assert (hit["file"], hit["line"], hit["severity"]) == ("pkg/gpuaware/plugin.go", line, "warning")
    assert hit["why"] and hit["fix"]


def test_a_filter_plugin_without_signpod_where_batching_exists(kplugin: K, project: Path) -> None:
    _, findings = doctor(kplugin, project, "--k8s", "1.37")
    assert not [f for f in findings if f["rule"] == "signpod-missing"]
    plugin = project / "pkg/gpuaware/plugin.go"
    text = plugin.read_text()
    start = text.index("var _ fw.SignPlugin")
    end = text.index("\n}\n", text.index("func (pl *GpuAware) SignPod")) + 3
    plugin.write_text(text[:start] + text[end:])
    _, findings = doctor(kplugin, project, "--k8s", "1.37")
    (hit,) = [f for f in findings if f["rule"] == "signpod-missing"]
    declared = next(i for i, line in enumerate(plugin.read_text().splitlines(), 1) if line.startswith("type GpuAware "))
    assert (hit["file"], hit["line"], hit["severity"]) == ("pkg/gpuaware/plugin.go", declared, "warning")
    assert "prefilter/filter/prescore/score plugin without SignPod" in hit["what"]
    assert "Disabling signatures for profile" in hit["why"] and "SignPod" in hit["fix"]
    _, older = doctor(kplugin, project, "--k8s", "1.34")  # no batching before 1.35
    assert not [f for f in older if f["rule"] == "signpod-missing"]


def framework_findings_at(
    kplugin: K, tmp_path: Path, made_for: str, target: str
) -> tuple[Path, list[dict[str, object]]]:
    """A native project made for one version: no framework finding there; the findings
    doctor --k8s gives for another."""
    run = kplugin("new", "gpu-aware", "--k8s", made_for, "--no-tidy", "-o", str(tmp_path), "--api", "native")
    assert run.code == 0, run.stderr
    project = tmp_path / "gpu-aware"
    _, findings = doctor(kplugin, project)
    assert not [f for f in findings if f["check"] == "framework"]
    _, findings = doctor(kplugin, project, "--k8s", target)
    return project, findings


def test_native_code_using_api_the_target_deprecates(kplugin: K, tmp_path: Path) -> None:
    """1.35's native NormalizeScore uses fwk.MaxNodeScore/MinNodeScore; 1.36 deprecates them
    (MaxScore, MinScore): a warning at each use, with line and fix, at 1.36 and not at 1.35."""
    project, findings = framework_findings_at(kplugin, tmp_path, "1.35", "1.36")
    deprecated = [f for f in findings if f["rule"] == "api-deprecated"]
    source = (project / "pkg/gpuaware/plugin.go").read_text().splitlines()
    uses = [i for i, text in enumerate(source, 1) if "fwk.MaxNodeScore" in text or "fwk.MinNodeScore" in text]
    assert uses and sorted({f["line"] for f in deprecated}) == uses
    assert all(f["file"] == "pkg/gpuaware/plugin.go" and f["severity"] == "warning" for f in deprecated)
    assert all("deprecated from 1.36" in f["what"] and f["fix"] == "use MaxScore and MinScore" for f in deprecated)


def test_native_code_using_api_the_target_removed(kplugin: K, tmp_path: Path) -> None:
    _, findings = framework_findings_at(kplugin, tmp_path, "1.28.3", "1.34")
    removed = [f for f in findings if f["rule"] == "api-removed"]
    assert removed and all(f["file"] == "pkg/gpuaware/plugin.go" and f["line"] for f in removed)
    assert any("framework.CycleState is gone from 1.34" in f["what"] for f in removed)


def test_native_code_using_what_1_38_changed(kplugin: K, tmp_path: Path) -> None:
    """What the 1.38 pre-release removes or renames (read from its sources), in 1.37 native
    code: each use is an error at 1.38.0-beta.0, with the way forward."""
    project, _ = framework_findings_at(kplugin, tmp_path, "1.37", "1.37")
    (project / "pkg/gpuaware/gangs.go").write_text(
        "package gpuaware\n\n"
        "func nominated(h fwk.Handle, node string) int { return len(h.NominatedPodsForNode(node)) }\n"
        "func ok(h fwk.Handle, logger klog.Logger, n string) int { return len(h.NominatedPodsForNode(logger, n)) }\n"
        "func cycle(s fwk.CycleState) { _ = s.GetPodGroupSchedulingCycle() }\n"
        "var gate = features.PodGroupPreemptionPolicy\n"
    )
    _, findings = doctor(kplugin, project, "--k8s", "1.38.0-beta.0")
    removed = {
        (f["line"], f["what"]) for f in findings if f["rule"] == "api-removed" and f["file"].endswith("gangs.go")
    }
    assert {line for line, _ in removed} == {3, 5, 6}, removed
    fixes = {f["fix"] for f in findings if f["rule"] == "api-removed"}
    assert "NominatedPodsForNode takes the logger first from 1.38: NominatedPodsForNode(logger, nodeName)" in fixes


# --- the one Go method scanner (gosource.methods), shared by doctor and add extension-point


GO_SOURCE = """package gpuaware

// func (pl *GpuAware) Score(ctx context.Context) {} is commented out
func (pl *GpuAware) Filter(ctx context.Context, state fw.CycleState) *fw.Status {
\treturn nil
}

func (pl GpuAware) Name() string { return Name }

func (a *GpuAwareArgs) Reserve(ctx context.Context) *fw.Status { return nil }

func (o *Other) PreFilter(ctx context.Context) {}

func New(ctx context.Context) (fw.Plugin, error) { return &GpuAware{}, nil }

func (pl *GpuAware) EventsToRegister(_ context.Context) ([]fw.ClusterEventWithHint, error) {
\treturn []fw.ClusterEventWithHint{
\t\t{Event: fw.ClusterEvent{Resource: fw.Node, ActionType: fw.Add}},
\t\t{Event: fw.ClusterEvent{Resource: fw.Pod, ActionType: fw.Delete}, QueueingHintFn: pl.hint},
\t}, nil
}
"""


def test_the_scanner_reads_value_and_pointer_receivers_of_the_type() -> None:
    """Pointer and value receivers of the type, each with its line and the offset past its
    ``(``; not a comment, another type, a type whose name starts the same, or a function."""
    from kplugin.generate import gosource

    found = list(gosource.methods(GO_SOURCE, "GpuAware"))
    lines = GO_SOURCE.splitlines()
    assert [(m.name, m.line) for m in found] == [("Filter", 4), ("Name", 8), ("EventsToRegister", 16)]
    for method in found:
        assert lines[method.line - 1].startswith("func (pl ")
        assert GO_SOURCE[: method.end].endswith(f") {method.name}(")
    assert [m.name for m in gosource.methods(GO_SOURCE, "Other")] == ["PreFilter"]
    assert [m.name for m in gosource.methods(GO_SOURCE, "GpuAwareArgs")] == ["Reserve"]
    assert list(gosource.methods(GO_SOURCE, "Gpu")) == []
    assert list(gosource.methods("package gpuaware\n", "GpuAware")) == []


def test_events_without_hints_reads_the_scanned_method() -> None:
    from kplugin.generate.gosource import events_without_hints

    assert events_without_hints(GO_SOURCE, "GpuAware") == [18]
    value = GO_SOURCE.replace("func (pl *GpuAware) EventsToRegister", "func (pl GpuAware) EventsToRegister")
    assert events_without_hints(value, "GpuAware") == [18]
    assert events_without_hints(GO_SOURCE, "Other") == []


def test_methods_in_code_looks_in_every_own_file_of_the_plugin(project: Path) -> None:
    """A method in another file of the package counts (its file and line); one in a test
    or a zz_generated file does not; one on another type does not."""
    from kplugin.generate.addplugin import methods_in_code
    from kplugin.model import project as projects
    from kplugin.model.spec import ExtensionPoint

    package = project / "pkg/gpuaware"
    (package / "reserve.go").write_text(
        "package gpuaware\n\n"
        "func (o *Other) Permit() {}\n\n"
        "func (pl GpuAware) Reserve(_ context.Context, _ fw.CycleState, _ *v1.Pod, _ string) *fw.Status {\n"
        "\treturn nil\n}\n"
    )
    (package / "bind_test.go").write_text("package gpuaware\n\nfunc (pl *GpuAware) Bind() {}\n")
    (package / "zz_generated.permit.go").write_text("package gpuaware\n\nfunc (pl *GpuAware) Permit() {}\n")
    loaded = projects.load(project)
    (plugin,) = loaded.plugins
    found = methods_in_code(loaded, plugin)
    assert found[ExtensionPoint.RESERVE] == "pkg/gpuaware/reserve.go:5"
    assert ExtensionPoint.BIND not in found and ExtensionPoint.PERMIT not in found
    assert {ExtensionPoint.FILTER, ExtensionPoint.SCORE} <= set(found)
    assert found[ExtensionPoint.FILTER].startswith("pkg/gpuaware/plugin.go:")


# --- PreQueueingHints (issue 42) -----------------------------------------------------------


def pre_hint_findings(findings: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return sorted(
        (f["rule"], f["severity"], f["file"], f["line"]) for f in findings if str(f["rule"]).startswith("prequeue")
    )


def test_the_prequeueinghint_gate_is_named_at_1_37_only(kplugin: K, enqueueing: Path) -> None:
    """The sample's events name PreQueueingHints (layer code, the same on every minor). At
    1.37 the scheduler calls them only with SchedulerPreQueueingHints on, an alpha whose
    queue skips the plugins that registered the same event without one: a note on each
    Deployment that runs without it (nothing to do), a warning on one that turns it on;
    on by default at 1.38; before 1.37 internal/fw leaves them out (a note)."""
    plugin = enqueueing / "pkg/gpuaware/plugin.go"
    line = next(
        i for i, t in enumerate(plugin.read_text().splitlines(), 1) if "PreQueueingHintFn: pl.podsAfterNode" in t
    )
    deployments = ["charts/gpu-aware/templates/deployment.yaml", "deploy/deployment.yaml"]
    _, findings = doctor(kplugin, enqueueing, "--k8s", "1.37")
    assert pre_hint_findings(findings) == [("prequeueinghint-gate-off", "info", d, None) for d in deployments]
    (hit, _) = [f for f in findings if f["rule"] == "prequeueinghint-gate-off"]
    assert f"GpuAware's PreQueueingHints (plugin.go:{line})" in str(hit["what"])
    assert "leave the gate off at 1.37" in str(hit["fix"]) and "1.38" in str(hit["why"])
    deployment = enqueueing / "deploy/deployment.yaml"
    edit(deployment, "- --v=2", "- --feature-gates=SchedulerPreQueueingHints=true\n        - --v=2")
    _, findings = doctor(kplugin, enqueueing, "--k8s", "1.37")
    assert pre_hint_findings(findings) == [
        ("prequeueinghint-gate-off", "info", deployments[0], None),
        ("prequeueinghint-gate-on", "warning", deployments[1], None),
    ]
    (on,) = [f for f in findings if f["rule"] == "prequeueinghint-gate-on"]
    assert "skips the plugins that registered the same event without one" in str(on["why"])
    assert str(on["fix"]).startswith("remove SchedulerPreQueueingHints=true")
    for version in ("1.38.0-beta.0",):
        _, findings = doctor(kplugin, enqueueing, "--k8s", version)
        assert pre_hint_findings(findings) == []
    _, findings = doctor(kplugin, enqueueing, "--k8s", "1.36")
    assert pre_hint_findings(findings) == [("prequeueinghint-ignored", "info", "pkg/gpuaware/plugin.go", line)]


def test_native_code_with_a_prequeueinghint_before_1_37(kplugin: K, tmp_path: Path) -> None:
    """Native code names PreQueueingHints from 1.37 only (the field does not exist before):
    made for 1.37, it is an error at 1.36 (it does not build); made for 1.36, it has none."""
    for version in ("1.37", "1.36"):
        run = kplugin("new", f"n{version[-1]}", "--k8s", version, "--api", "native", "--no-tidy", "-o",
                      str(tmp_path), "--extension-points", "filter,enqueueextensions")  # fmt: skip
        assert run.code == 0, run.stderr
    made = (tmp_path / "n7/pkg/n7/plugin.go").read_text()
    assert "PreQueueingHintFn: pl.podsAfterNodeChange" in made and "fwk.PreQueueingHintResult{}" in made
    assert "PreQueueingHint" not in (tmp_path / "n6/pkg/n6/plugin.go").read_text()
    code, findings = doctor(kplugin, tmp_path / "n7", "--k8s", "1.36")
    assert code == 1
    assert [f[:3] for f in pre_hint_findings(findings)] == [
        ("prequeueinghint-unsupported", "error", "pkg/n7/plugin.go")
    ]


@pytest.mark.parametrize("example", ["sample", "team-quota"])
def test_a_prequeueinghint_that_names_no_pod(kplugin: K, enqueueing: Path, tmp_path: Path, example: str) -> None:
    """A PreQueueingHint whose every return is an empty result leaves the pods the plugin
    rejected to the periodic flush: an error at its line, on the sample and on
    examples/team-quota; one that returns pods or AllPods at some return is not."""
    if example == "sample":
        project, method, receiver = enqueueing, "podsAfterNodeChange", "GpuAware"
    else:
        project = tmp_path / "team-quota"
        shutil.copytree(REPO / "examples" / "team-quota", project)
        method, receiver = "podsAfterQuotaChange", "TeamQuota"
    plugin = next(p for p in sorted((project / "pkg").glob("*/plugin.go")))
    _, findings = doctor(kplugin, project, "--k8s", "1.38.0-beta.0")
    assert not [f for f in findings if f["rule"] == "prequeueinghint-no-pods"]
    text = plugin.read_text()
    start = text.index(f"func (pl *{receiver}) {method}(")
    body = text.index("{\n", start) + 2
    end = text.index("\n}\n", start)
    empty = "\tif newObj == nil {\n\t\treturn fw.PreQueueingHintResult{AllPods: false}, nil // AllPods\n\t}\n"
    plugin.write_text(text[:body] + empty + "\treturn fw.PreQueueingHintResult{}, nil" + text[end:])
    code, findings = doctor(kplugin, project, "--k8s", "1.38.0-beta.0")
    (hit,) = [f for f in findings if f["rule"] == "prequeueinghint-no-pods"]
    line = next(i for i, t in enumerate(plugin.read_text().splitlines(), 1) if f"PreQueueingHintFn: pl.{method}" in t)
    assert (code, hit["severity"], hit["file"], hit["line"]) == (
        1,
        "error",
        plugin.relative_to(project).as_posix(),
        line,
    )
    assert f"pl.{method} names no pod" in str(hit["what"])


def test_the_prequeueinghint_scanner() -> None:
    """Which PreQueueingHintFn each event literal names, on its own line; a literal or a
    function found nowhere is not judged."""
    from kplugin.generate.gosource import events_without_hints, pre_hints

    source = GO_SOURCE.replace(
        "QueueingHintFn: pl.hint},",
        "QueueingHintFn: pl.hint,\n\t\t\tPreQueueingHintFn: pl.pods},\n"
        "\t\t{Event: fw.ClusterEvent{Resource: fw.Pod}, PreQueueingHintFn: func(klog.Logger, any, any) {}},",
    )
    assert pre_hints(source, "GpuAware") == [(20, "pl.pods"), (21, "func")]
    assert events_without_hints(source, "GpuAware") == [18, 21]
    assert pre_hints(GO_SOURCE, "GpuAware") == []


def test_a_build_that_fails_in_code_generators_output_names_make_generate(tmp_path: Path) -> None:
    """plugins-do-not-build points at the first compile error's file and line; where that
    file is code-generator's (pkg/generated/, a deepcopy file: stale for the types or the
    Kubernetes version), the fix is make generate."""
    from types import SimpleNamespace

    from kplugin.doctor.args import _build_failure

    ctx = SimpleNamespace(project=SimpleNamespace(root=tmp_path))
    stale = ["# example.com/x/pkg/generated/clientset/versioned", "pkg/generated/clientset/versioned/clientset.go:"
             "33:27: undefined: discovery.DiscoveryInterfaces"]  # fmt: skip
    where, line, fix = _build_failure(ctx, stale)  # type: ignore[arg-type]
    assert (where, line) == (tmp_path / "pkg/generated/clientset/versioned/clientset.go", 33)
    assert fix.startswith("make generate: pkg/generated/clientset/versioned/clientset.go is written by code-generator")
    where, line, fix = _build_failure(ctx, ["./apis/q/v1/zz_generated.deepcopy.go:12:2: undefined: x"])  # type: ignore[arg-type]
    assert (where, line) == (tmp_path / "apis/q/v1/zz_generated.deepcopy.go", 12) and fix.startswith("make generate")
    where, line, fix = _build_failure(ctx, ["pkg/q/plugin.go:7:1: syntax error"])  # type: ignore[arg-type]
    assert (where, line, fix) == (tmp_path / "pkg/q/plugin.go", 7, "fix the compile error (go build ./...)")
    assert _build_failure(ctx, ["go: something else"]) == (
        tmp_path / "pkg",
        None,
        "fix the compile error (go build ./...)",
    )  # type: ignore[arg-type]


def test_the_moves_to_fwk_are_derived_from_the_names_of_each_minor() -> None:
    """Issue 43, item 5: what moved from framework to fwk is read off goapi's spellings of
    consecutive minors (the catalog's facts), not restated: 1.34 the data types, 1.35 the
    plugin interfaces (every point's that the framework has on every minor) and Handle."""
    import re

    from kplugin.model.apichanges import API_CHANGES, framework_moves
    from kplugin.model.points import POINTS

    moves = {since: re.compile(pattern) for pattern, since, _, _ in framework_moves()}
    assert sorted(moves) == ["1.34", "1.35"]
    for name in (
        "Status",
        "Code",
        "CycleState",
        "NodeInfo",
        "PodInfo",
        "QueuedPodInfo",
        "ClusterEvent",
        "ClusterEventWithHint",
        "NewStatus",
        "AsStatus",
        "QueueingHint",
        "QueueingHintFn",
        "EventResource",
    ):
        assert moves["1.34"].search(f"x := framework.{name}{{}}"), name
    interfaces = [row.interface for row in POINTS.values() if row.first is None]
    assert "FilterPlugin" in interfaces and "EnqueueExtensions" in interfaces
    for name in (*interfaces, "Handle", "Plugin", "NodeScoreList", "PreFilterResult", "WaitingPod"):
        assert moves["1.35"].search(f"var _ framework.{name}"), name
    assert not moves["1.35"].search("framework.NewCycleState"), "framework keeps the constructors"
    assert not any(since in ("1.34", "1.35") and "moved" in fix for _, since, _, fix in API_CHANGES)
