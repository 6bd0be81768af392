"""kplugin doctor's rules: each a stable id, the check it belongs to, a severity, why
what it finds breaks a scheduler in production, and how to fix it. Checks yield
Problems naming a rule; a rule's why and fix may name the problem's own values
({name} and the like)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from kplugin.core.errors import Setting
from kplugin.model.apifacts import PRE_QUEUEING_HINTS_GATE


class Severity(StrEnum):
    """How much a finding weighs: errors fail doctor (exit 1), warnings and notes do not."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


@dataclass(frozen=True)
class Rule:
    id: str
    check: str
    severity: Severity
    why: str
    fix: str


@dataclass(frozen=True)
class Problem:
    """What a check found: the rule it breaks, where, what exactly, and the values the
    rule's why and fix name."""

    rule: str
    path: Path
    line: int | None
    what: str
    params: dict[str, Any] = field(default_factory=dict)

    def __init__(self, rule: str, path: Path, line: int | None, what: str, **params: Any) -> None:
        object.__setattr__(self, "rule", rule)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "what", what)
        object.__setattr__(self, "params", params)


RULES: tuple[Rule, ...] = (
    # files kplugin reads
    Rule("unreadable-file", "files", ERROR, "kplugin, kubectl and the scheduler cannot read it",
         "replace it with a regular UTF-8 file inside the project"),
    Rule("invalid-yaml", "yaml", ERROR, "kubectl and kube-scheduler cannot read it", "fix the syntax"),
    Rule("wrong-type", "types", ERROR, "kube-scheduler and kubectl cannot decode the file", "make {field} {kind}"),
    # 1. plugin names
    Rule("plugin-name-invalid", "plugin-names", ERROR,
         "plugin names are Go identifiers and config keys; '_' and lower case break the convention the "
         "scheduler's own plugins follow", "rename the plugin in PascalCase"),
    Rule("plugin-name-missing", "plugin-names", ERROR, "the registered name comes from Name",
         'declare const Name = "{name}" in {source}'),
    Rule("plugin-name-mismatch", "plugin-names", ERROR,
         "the scheduler looks plugins up by the name they register; a mismatch means 'plugin does not "
         "exist' at start-up", "make them identical"),
    Rule("plugin-not-imported", "plugin-names", ERROR,
         "a plugin registers itself from init(); without the import it is never compiled in",
         'add _ "{module}/pkg/{package}" to {imports}'),
    Rule("plugin-unregistered", "plugin-names", ERROR,
         "kube-scheduler fails at start-up: the plugin does not exist in this scheduler",
         "use one of {ours} or an in-tree plugin"),
    Rule("pluginconfig-unregistered", "plugin-names", ERROR,
         "args for an unknown plugin are rejected when the profile is built", "name it {ours}"),
    Rule("disabled-all", "disabled-all", WARNING,
         "left in from debugging, it drops NodeResourcesFit, TaintToleration and the rest: pods land on "
         "nodes that cannot run them", "list only the plugins to disable"),
    # 2. apiVersion
    Rule("config-missing", "api-version", ERROR, "the Deployment starts kube-scheduler with --config",
         "run kplugin render-config -o FILE"),
    Rule("api-version", "api-version", ERROR,
         "it only reads {served}; v1beta2 is gone from 1.28 and v1beta3 from 1.29", "use {config_group}/v1"),
    # 3. schedulerName
    Rule("scheduler-name-mismatch", "scheduler-name", ERROR,
         "a pod whose schedulerName matches no profile is never scheduled by this scheduler; it stays "
         "Pending", "make them identical"),
    Rule("configmap-unreadable", "yaml", ERROR, "kube-scheduler cannot read the configuration it is given",
         "kplugin refresh (it writes deploy/configmap.yaml again from the project's configuration)"),
    Rule("configmap-stale", "scheduler-name", ERROR, "the cluster runs the ConfigMap, not the file you validated",
         "kplugin refresh (it writes deploy/ and the chart from the project's configuration; a file elsewhere: "
         f"kplugin render-config {Setting.FORMAT} configmap)"),
    # 4. lease
    Rule("leader-elect-type", "types", ERROR, "kube-scheduler cannot decode the configuration",
         "set leaderElect: true (or false for a single replica)"),
    Rule("default-lease", "lease", ERROR,
         "a second scheduler on that lease either never becomes leader or takes it from the default "
         "scheduler, which then stops scheduling", "set leaderElection.resourceName: {name}"),
    # 5. RBAC
    Rule("rbac-missing", "rbac", ERROR, "the scheduler cannot list nodes or bind pods",
         "kplugin refresh (it writes deploy/rbac.yaml again)"),
    Rule("rbac-rules", "rbac", ERROR,
         "kube-scheduler {version} reads these; without them its informers fail and pods that need them "
         "are never scheduled", "kplugin refresh (it writes the rules this version's scheduler reads into deploy/ "
         "and the chart)"),
    Rule("rbac-lease", "rbac", ERROR, "leader election fails and the scheduler never starts scheduling",
         "kplugin refresh (it grants get/update on leases named {name} in the lease namespace)"),
    Rule("rbac-rules-file", "rbac", ERROR,
         "kplugin cannot merge the project's own rules into deploy/rbac.yaml and the chart",
         "fix the rule the message names in config/rbac/rules.yaml (apiGroups, resources, verbs; no wildcards)"),
    Rule("rbac-project-rules", "rbac", ERROR,
         "the plugins' informers cannot list or watch what they read: the scheduler never becomes ready",
         "kplugin refresh (it merges config/rbac/rules.yaml into deploy/ and the chart)"),
    Rule("rbac-chart-differs", "rbac", WARNING,
         "a Helm install grants other rules than deploy/rbac.yaml, which kplugin e2e runs the scheduler with",
         "kplugin refresh; rules of your own go in config/rbac/rules.yaml"),
    Rule("rbac-crd-file", "rbac", ERROR,
         "kplugin cannot install the project's kinds with deploy/ and the chart, nor create them in kplugin e2e",
         "fix the file the message names in config/crd/ (only CustomResourceDefinitions, as regular files)"),
    Rule("rbac-crd-unread", "rbac", WARNING,
         "a plugin that reads the kind (and the scheduler, for the events a plugin registers on it) cannot list "
         "or watch it: the scheduler never becomes ready",
         "add {{apiGroups: [{api_group}], resources: [{resource}], verbs: [get, list, watch]}} to "
         "config/rbac/rules.yaml, then kplugin refresh"),
    Rule("rbac-informer-unread", "rbac", ERROR,
         "the plugin's informer (or the scheduler's, for the events it registers) cannot list or watch the "
         "resource: the scheduler never becomes ready",
         "add {{apiGroups: [{api_group}], resources: [{resource}], verbs: [get, list, watch]}} to "
         "config/rbac/rules.yaml, then kplugin refresh"),
    Rule("rbac-api-ungenerated", "rbac", ERROR,
         "a kind of the project's own API (kplugin.yaml apis) has no CRD in config/crd/ or no generated client: "
         "the plugin does not build, or the scheduler waits for a resource the API server does not serve",
         "make generate, then kplugin refresh"),
    Rule("rbac-crd-stale", "rbac", WARNING,
         "deploy/ and the chart install other CustomResourceDefinitions than the project's config/crd/ holds",
         "kplugin refresh (it writes config/crd/ into deploy/crds.yaml and the chart's crds/)"),
    # 6. the binary
    Rule("binary-unreadable", "binary", ERROR, "it cannot run in the image", "rebuild: kplugin build"),
    Rule("binary-dynamic", "binary", ERROR,
         "distroless/static and scratch images have no C library: it fails to start",
         "build with CGO_ENABLED=0 (kplugin build does)"),
    Rule("binary-arch", "binary", WARNING, "nodes of another architecture cannot run it",
         f"build with {Setting.PLATFORM} linux/ARCH for your nodes"),
    # 7. args
    Rule("args-not-mapping", "args", ERROR,
         "the plugin's factory cannot decode them and kube-scheduler exits at start-up",
         "give {name}'s args as a mapping of its Args fields"),
    Rule("args-file-invalid", "args", ERROR, "kplugin cannot render the configuration from it",
         "make it a YAML mapping of the plugin's args fields"),
    Rule("args-unexpected", "args", ERROR, "{name} registers no args decoder; its factory ignores or rejects them",
         "remove the args, or give the plugin Args (see kplugin's generated args.go)"),
    Rule("args-invalid", "args", ERROR, "the plugin's factory rejects the args and kube-scheduler exits at start-up",
         "use only the fields of {type} with valid values"),
    Rule("args-unchecked", "args", INFO, "only the plugins' own decoders can tell whether their args are right",
         "run kplugin doctor where Go is installed, after go mod tidy"),
    Rule("plugins-do-not-build", "args", ERROR, "the plugins do not build", "{fix}"),
    # 8. weights
    Rule("weight-invalid", "weights", ERROR,
         "the configuration fails to load, or a negative weight inverts the plugin's preference",
         "use a positive integer"),
    Rule("weight-zero", "weights", WARNING, "it reads as 'off' but the plugin still scores",
         "remove the plugin from score, or set 1"),
    # 9. go.mod
    Rule("go-mod-missing", "go-mod", ERROR, "the project does not build", "restore it from version control"),
    Rule("go-mod-require", "go-mod", ERROR,
         "the code compiles against another release than the one recorded and configured",
         "kplugin upgrade, or fix the require line"),
    Rule("go-mod-replace-missing", "go-mod", ERROR,
         "k8s.io/kubernetes requires it at v0.0.0: builds fail with 'unknown revision v0.0.0' once a package "
         "of it is compiled", "add {module} => {module} {tag}"),
    Rule("go-mod-replace-version", "go-mod", ERROR,
         "mixed staging versions do not compile together or behave subtly differently",
         "pin every staging module at {tag}"),
    # 10. generated files
    Rule("generated-clients-stale", "generated", ERROR,
         "client-gen, lister-gen and informer-gen write code for the client-go of their own release: another "
         "release's does not build, or builds against the wrong API (1.37's clientset at 1.36: undefined: "
         "discovery.DiscoveryInterfaces)",
         f"make generate (kplugin upgrade and refresh run it, and build, e2e and bench with {Setting.K8S} in their "
         "copy)"),
    Rule("generated-unreadable", "generated", WARNING, "kplugin upgrade and add plugin stop on it",
         "restore the file from version control"),
    Rule("generated-missing", "generated", WARNING, "kplugin upgrade and add plugin write it again",
         "restore it from version control, or let kplugin refresh recreate it"),
    Rule("generated-edited", "generated", WARNING,
         "kplugin upgrade and add plugin stop when a generated file they must rewrite was edited; zz_generated "
         "files are rewritten for every Kubernetes version",
         "move the change into your own files (RBAC rules: config/rbac/rules.yaml), then kplugin refresh; or keep "
         f"it with kplugin refresh {Setting.KEEP_EDITED}"),
    # 11. extension points
    Rule("code-unreadable", "extension-points", ERROR, "kplugin cannot read the plugin's code",
         "restore pkg/ as regular files"),
    Rule("point-not-listed", "extension-points", ERROR,
         "the generated adapter does not pass it to the scheduler and the configuration does not enable it: "
         "the method is never called", "kplugin add extension-point {plugin_name} {point}"),
    Rule("point-not-in-version", "extension-points", WARNING,
         "the scheduler of the project's Kubernetes version has no such extension point: it never calls the method",
         "kplugin upgrade to a version that has it ({since}), or remove the method"),
    Rule("point-not-implemented", "extension-points", ERROR,
         "the generated adapter calls it: the project does not compile",
         "write the method, or remove {point} from kplugin.yaml and run kplugin refresh"),
    Rule("point-not-enabled-in-code", "extension-points", ERROR,
         "kube-scheduler exits at start-up: the plugin does not implement the extension point",
         "kplugin add extension-point {plugin_name} {point}, or remove it from the configuration"),
    Rule("point-not-enabled", "extension-points", WARNING, "the scheduler never calls it",
         "kplugin render-config (or enable it by hand)"),
    # 12. the framework of the target minor
    Rule("hints-missing", "framework", WARNING,
         "the target version's scheduling queue consults QueueingHints: an event without one requeues every "
         "pod the plugin rejected on every such event, however unrelated", "give each event a QueueingHintFn "
         "that says Queue only when the event can make the pod schedulable (kplugin's sample shows how)"),
    Rule("signpod-missing", "framework", WARNING,
         "from 1.35 the scheduler batches pods that sign alike, but only in profiles whose every PreFilter, "
         "Filter, PreScore and Score plugin signs them: without SignPod this plugin turns batching off for "
         "the whole profile ('Disabling signatures for profile' in the scheduler's log)",
         "implement SignPod with what the plugin reads of the pod, or, when it cannot sign (its verdict "
         "depends on other pods), return nil and an Unschedulable status to opt out explicitly"),
    Rule("framework-imported", "framework", WARNING,
         "the project is written against internal/fw (api: layer) so that kplugin upgrade never touches "
         "the plugins' code; a direct import of the framework ties this file to one Kubernetes minor (its "
         "types move between k8s.io/kubernetes/pkg/scheduler/framework and k8s.io/kube-scheduler/framework, "
         "and change from interfaces to structs)",
         "use internal/fw's aliases and helpers instead ({aliases}), or move the project to "
         f"{Setting.API} native"),
    Rule("gate-off", "framework", ERROR,
         "the scheduler calls a pod group's extension points only with the feature gate on (off by default; "
         "the API server needs it too, and the scheduling.k8s.io version that serves PodGroups)",
         "run kube-scheduler with --feature-gates={gates} (kplugin refresh writes it into deploy/ and "
         "the chart)"),
    Rule("gate-unknown", "framework", ERROR,
         "kube-scheduler exits at start on a feature gate its version does not know (unrecognized feature gate)",
         "remove {gate} from the Deployment's --feature-gates (kplugin refresh writes the gates the version needs "
         "into deploy/ and the chart)"),
    Rule("prequeueinghint-no-pods", "framework", ERROR,
         "the scheduling queue asks a plugin's QueueingHint only about the pods its PreQueueingHint names: one that "
         "names none for every event leaves the pods the plugin rejected waiting for the periodic flush (minutes)",
         "return the pending pods the event concerns (fw.PendingPods of a lister's pods), or AllPods where the "
         "event does not tell"),
    Rule("prequeueinghint-unsupported", "framework", ERROR,
         "ClusterEventWithHint has PreQueueingHintFn from Kubernetes 1.37: native code that names one does not "
         "build before", "target 1.37 or later, or drop the PreQueueingHintFn (or move the plugin to "
         f"{Setting.API} layer, whose internal/fw leaves it out where the framework has none)"),
    Rule("prequeueinghint-ignored", "framework", INFO,
         "ClusterEventWithHint has PreQueueingHintFn from Kubernetes 1.37: before, internal/fw leaves it out, and "
         "the QueueingHint alone decides, pod by pod", "nothing to do: the same code uses it from 1.37"),
    Rule("prequeueinghint-gate-off", "framework", INFO,
         f"at 1.37 the scheduling queue calls PreQueueingHints only with the feature gate {PRE_QUEUEING_HINTS_GATE} "
         "on (alpha, off by default; beta and on from 1.38): the plugin's QueueingHint alone decides, pod by pod",
         "nothing to do: leave the gate off at 1.37 (see prequeueinghint-gate-on); from 1.38 the same code is used"),
    Rule("prequeueinghint-gate-on", "framework", WARNING,
         f"1.37's alpha {PRE_QUEUEING_HINTS_GATE}: where a PreQueueingHint names pods, the queue asks only those and "
         "skips the plugins that registered the same event without one (every in-tree plugin but "
         "DynamicResources): the pods they rejected are not requeued by that event and wait for the periodic "
         "flush (5 minutes); 1.38 asks all pods for such plugins",
         f"remove {PRE_QUEUEING_HINTS_GATE}=true from the scheduler's --feature-gates in the Deployment of deploy/ "
         "and of the chart at 1.37, or target 1.38"),
    Rule("queuesort-pods-only", "framework", WARNING,
         "from 1.37 the scheduling queue may hold pod groups (GenericWorkload gate on): Less is then called with "
         "entries that are no pod, for which QueuedPod returns nil and a type assertion to a pod's entry fails",
         "order every entry by what pods and pod groups share (QueuedPriority, QueuedSince), or check the "
         "entry's Type() before reading its pod"),
    Rule("api-removed", "framework", ERROR, "the target version's framework no longer has it: the plugin "
         "does not compile there", "{fix}"),
    Rule("api-deprecated", "framework", WARNING, "the target version's framework deprecates it: a later "
         "version removes it", "{fix}"),
)  # fmt: skip

BY_ID = {rule.id: rule for rule in RULES}


class _Placeholders(dict[str, str]):
    """A rule's values as a list of the rules shows them: a setting stays a placeholder
    (the CLI spells it as its flag), any other value is named, <like_this>."""

    def __missing__(self, key: str) -> str:
        return f"<{key}>"


def listed(rule: Rule) -> Rule:
    """The rule as ``doctor --list-rules`` shows it, its values named, not template fields."""
    names = _Placeholders({s.value[1:-1]: s.value for s in Setting})
    return Rule(rule.id, rule.check, rule.severity, rule.why.format_map(names), rule.fix.format_map(names))
