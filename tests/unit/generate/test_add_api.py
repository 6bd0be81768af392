"""kplugin add api (issue 21, item 1) without Go: what it writes for each project shape,
the make generate commands for each code-generator flag style, its refusals (nothing
written), and a dry run that lists what the real run changes. That the generated code
compiles and its tests pass against the real modules, with the real generators, is
tests/integration/test_integration_api.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from support import Kplugin, tree

from kplugin.model import apitypes, rbacrules, versions

ADD = ("add", "api", "Quota", "--group", "quota.example.com", "--version", "v1alpha1", "--no-generate", "--no-tidy")


def meta(project: Path) -> dict:
    return YAML(typ="safe").load((project / "kplugin.yaml").read_text())


def test_add_api_writes_the_kind_its_source_and_its_rule(kplugin: Kplugin, shaped: Path) -> None:
    run = kplugin(*ADD, "--project", str(shaped))
    assert run.code == 0, run.stderr
    package = meta(shaped)["plugins"][0]["package"]
    assert meta(shaped)["apis"] == [
        {
            "kind": "Quota",
            "group": "quota.example.com",
            "version": "v1alpha1",
            "plural": "quotas",
            "scope": "Namespaced",
        }
    ]
    types = (shaped / "apis/quota/v1alpha1/quota_types.go").read_text()
    for marker in ("+genclient\n", "+resourceName=quotas", "+kubebuilder:resource:scope=Namespaced,path=quotas"):
        assert marker in types
    assert "+groupName=quota.example.com\npackage v1alpha1\n" in (shaped / "apis/quota/v1alpha1/doc.go").read_text()
    assert "\t\t&Quota{},\n\t\t&QuotaList{},\n" in (shaped / "apis/quota/v1alpha1/register.go").read_text()
    source = (shaped / f"pkg/{package}/quota_source.go").read_text()
    assert "externalversions.NewSharedInformerFactory(client, 0)" in source
    assert "factory.Quota().V1alpha1().Quotas()" in source
    assert (shaped / f"pkg/{package}/quota_source_test.go").is_file()
    if meta(shaped)["api"] == "layer":
        assert 'fw.CustomResource("quotas", "v1alpha1", "quota.example.com")' in source
        assert "(fw.QueueingHint, error)" in source
    else:  # 1.37 native: the framework's own names
        assert 'fwk.EventResource("quotas.v1alpha1.quota.example.com")' in source
        assert "(fwk.QueueingHint, error)" in source
    rule = {"apiGroups": ["quota.example.com"], "resources": ["quotas"], "verbs": ["get", "list", "watch"]}
    assert rbacrules.load(shaped) == (rbacrules.PolicyRule(("quota.example.com",), ("quotas",), rbacrules.READ),)
    roles = [
        d for d in YAML(typ="safe").load_all((shaped / "deploy/rbac.yaml").read_text()) if d["kind"] == "ClusterRole"
    ]
    assert rule in roles[0]["rules"]
    values = YAML(typ="safe").load((shaped / f"charts/{shaped.name}/values.yaml").read_text())
    assert rule in values["rbac"]["rules"]
    makefile = (shaped / "Makefile").read_text()
    assert "CONTROLLER_TOOLS ?= v0.23.0" in makefile
    for tool in ("client-gen", "lister-gen", "informer-gen", "controller-gen"):
        assert f"/{tool}@$(" in makefile
    assert "\trm -rf pkg/generated\n" in makefile
    assert "make generate, then kplugin refresh" in run.stderr  # --no-generate says what is left
    # kplugin.yaml records doc.go and register.go as generated; a refresh has nothing to do
    assert "apis/quota/v1alpha1/register.go" in meta(shaped)["generated"]
    assert "apis/quota/v1alpha1/quota_types.go" not in meta(shaped)["generated"]
    again = kplugin("refresh", str(shaped), "--json")
    assert again.code == 0, again.stderr
    assert json.loads(again.stdout)["changed"] == []


def test_a_second_kind_of_the_group_joins_its_package(kplugin: Kplugin, shaped: Path) -> None:
    assert kplugin(*ADD, "--project", str(shaped)).code == 0
    run = kplugin("add", "api", "Policy", "--group", "quota.example.com", "--version", "v1alpha1", "--cluster-scoped",
                  "--no-generate", "--no-tidy", "--project", str(shaped))  # fmt: skip
    assert run.code == 0, run.stderr
    register = (shaped / "apis/quota/v1alpha1/register.go").read_text()
    assert register.index("&Policy{}") < register.index("&Quota{}")
    types = (shaped / "apis/quota/v1alpha1/policy_types.go").read_text()
    assert "+genclient:nonNamespaced" in types and "scope=Cluster,path=policies" in types
    package = meta(shaped)["plugins"][0]["package"]
    assert "s.lister.List(labels.Everything())" in (shaped / f"pkg/{package}/policy_source.go").read_text()
    assert [r.resources for r in rbacrules.load(shaped)] == [("quotas",), ("policies",)]
    assert [a["kind"] for a in meta(shaped)["apis"]] == ["Quota", "Policy"]


def test_the_rule_is_appended_to_the_users_file(kplugin: Kplugin, shaped: Path) -> None:
    rules = shaped / rbacrules.RULES_FILE
    mine = (
        "# mine: the PodGroups of a gang\n"
        "- apiGroups: [scheduling.x-k8s.io]\n  resources: [podgroups]\n  verbs: [list, watch]\n"
    )
    rules.write_text(mine)
    assert kplugin(*ADD, "--project", str(shaped)).code == 0
    text = rules.read_text()
    assert text.startswith(mine)
    assert [r.resources for r in rbacrules.load(shaped)] == [("podgroups",), ("quotas",)]
    # a rule that grants it already: the file is left as it is
    rules.write_text(mine.replace("podgroups]", "podgroups, quotas]").replace("[list, watch]", "[get, list, watch]")
                     .replace("scheduling.x-k8s.io", "quota.example.com"))  # fmt: skip
    before = rules.read_text()
    run = kplugin("add", "api", "Limit", "--group", "quota.example.com", "--version", "v1alpha1", "--plural", "quotas2",
                  "--no-generate", "--no-tidy", "--project", str(shaped))  # fmt: skip
    assert run.code == 0, run.stderr
    assert rules.read_text().startswith(before)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("quota", "--group", "q.example.com", "--version", "v1"), "'quota' is not a kind"),
        (("Quota", "--group", "example", "--version", "v1"), "--group 'example' is not an API group"),
        (("Quota", "--group", "quota.k8s.io", "--version", "v1"), "is Kubernetes' own"),
        (("Quota", "--group", "my-quota.example.com", "--version", "v1"), "its first label names the Go package"),
        (("Quota", "--group", "q.example.com", "--version", "1"), "--version '1' is not an API version"),
        (("Quota", "--group", "q.example.com", "--version", "v1", "--plural", "Quotas"), "--plural 'Quotas'"),
        (("Quota", "--group", "q.example.com", "--version", "v1", "--plugin", "Nope"), "--plugin 'Nope' is not"),
    ],
)
def test_bad_input_is_refused_before_anything_is_written(
    kplugin: Kplugin, shaped: Path, args: tuple[str, ...], message: str
) -> None:
    before = tree(shaped)
    run = kplugin("add", "api", *args, "--no-generate", "--no-tidy", "--project", str(shaped))
    assert run.code == 2, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert message in line, line
    assert tree(shaped) == before


def test_a_kind_twice_or_a_file_in_the_way_is_refused(kplugin: Kplugin, shaped: Path) -> None:
    assert kplugin(*ADD, "--project", str(shaped)).code == 0
    before = tree(shaped)
    run = kplugin(*ADD, "--project", str(shaped))
    assert run.code == 2 and "Quota (quotas.quota.example.com) is there already" in run.stderr, run.stderr
    run = kplugin("add", "api", "Quota", "--group", "quota.other.com", "--version", "v1", "--no-generate",
                  "--project", str(shaped))  # fmt: skip
    assert run.code == 2 and "would share apis/quota/" in run.stderr, run.stderr
    (shaped / "apis/team/v1").mkdir(parents=True)
    (shaped / "apis/team/v1/member_types.go").write_text("package v1\n")
    before = tree(shaped)
    run = kplugin("add", "api", "Member", "--group", "team.example.com", "--version", "v1", "--no-generate",
                  "--project", str(shaped))  # fmt: skip
    assert run.code == 2 and "apis/team/v1/member_types.go exists" in run.stderr, run.stderr
    assert tree(shaped) == before


def test_a_project_of_two_plugins_needs_the_plugin_named(kplugin: Kplugin, shaped: Path) -> None:
    assert kplugin("add", "plugin", "Second", "--project", str(shaped), "--no-tidy").code == 0
    before = tree(shaped)
    run = kplugin(*ADD, "--project", str(shaped))
    assert run.code == 2 and "name the one that reads the kind with --plugin" in run.stderr, run.stderr
    assert tree(shaped) == before
    run = kplugin(*ADD, "--plugin", "Second", "--project", str(shaped))
    assert run.code == 0, run.stderr
    assert (shaped / "pkg/second/quota_source.go").is_file()


def test_dry_run_lists_what_the_run_changes(kplugin: Kplugin, shaped: Path) -> None:
    before = tree(shaped)
    dry = kplugin(*ADD, "--dry-run", "--project", str(shaped))
    assert dry.code == 0, dry.stderr
    assert tree(shaped) == before
    real = kplugin(*ADD, "--project", str(shaped))
    assert real.code == 0, real.stderr
    listed = [line.strip() for line in dry.stderr.splitlines() if line.startswith("  ")]
    assert listed == [line.strip() for line in real.stderr.splitlines() if line.startswith("  ")]
    assert "apis/quota/v1alpha1/quota_types.go" in listed


def test_kplugin_yaml_apis_are_checked(kplugin: Kplugin, shaped: Path) -> None:
    assert kplugin(*ADD, "--project", str(shaped)).code == 0
    path = shaped / "kplugin.yaml"
    text = path.read_text()
    for old, new, named in [
        ("group: quota.example.com", "group: quota.k8s.io", "apis[0].group"),
        ("scope: Namespaced", "scope: Everywhere", "apis[0].scope"),
        ("plural: quotas", "plural: Quotas", "apis[0].plural"),
    ]:
        path.write_text(text.replace(old, new))
        run = kplugin("refresh", str(shaped))
        assert run.code == 2, run.stderr
        assert named in run.stderr and "kplugin.yaml" in run.stderr, run.stderr


@pytest.mark.parametrize("version", ["1.28.3", "1.37"])
def test_make_generate_commands_follow_the_code_generator_of_the_minor(version: str) -> None:
    target = versions.resolve(version)
    api = apitypes.create("Quota", "quota.example.com", "v1alpha1")
    generation = apitypes.generation("example.com/team", target.facts, ["team"], (api,))
    tools = [command[2].split("@")[0].rsplit("/", 1)[-1] for command in generation.commands]
    # the API's deepcopy before the clients, the plugin's (which imports them) after
    assert tools == ["deepcopy-gen", "client-gen", "lister-gen", "informer-gen", "deepcopy-gen", "controller-gen"]
    filled = generation.filled({apitypes.GO: "go", apitypes.CODE_GENERATOR: "vX", apitypes.CONTROLLER_TOOLS: "vY",
                                apitypes.HEADER: "/dev/null"})  # fmt: skip
    lister = filled[2]
    if version == "1.28.3":  # gengo v1: an output base, the module's path trimmed off
        assert lister[lister.index("--output-package") + 1] == "example.com/team/pkg/generated/listers"
        assert lister[lister.index("--trim-path-prefix") + 1] == "example.com/team"
        assert lister[-2:] == ["--input-dirs", "example.com/team/apis/quota/v1alpha1"]
    else:
        assert lister[lister.index("--output-dir") + 1] == "./pkg/generated/listers"
        assert lister[-1] == "example.com/team/apis/quota/v1alpha1"
    assert filled[-1][2] == "sigs.k8s.io/controller-tools/cmd/controller-gen@vY"
    assert generation.cleaned == (apitypes.GENERATED_DIR,)
    # without API types, the Args' deepcopy only (the Makefile of every other project)
    assert len(apitypes.generation("example.com/team", target.facts, ["team"], ()).commands) == 1


@pytest.mark.parametrize(
    ("kind", "plural"), [("Quota", "quotas"), ("Policy", "policies"), ("Class", "classes"), ("Key", "keys")]
)
def test_plurals(kind: str, plural: str) -> None:
    assert apitypes.default_plural(kind) == plural


def test_doctor_follows_the_kind_from_rules_to_generated_code(kplugin: Kplugin, shaped: Path) -> None:
    assert kplugin(*ADD, "--project", str(shaped)).code == 0

    def found() -> dict[str, list[str]]:
        run = kplugin("doctor", str(shaped), "--json")
        by_rule: dict[str, list[str]] = {}
        for finding in json.loads(run.stdout)["findings"]:
            by_rule.setdefault(finding["rule"], []).append(finding["what"])
        return by_rule

    # not generated yet (--no-generate): doctor says so and names the commands
    assert found()["rbac-api-ungenerated"] == ["Quota: no CRD named quotas.quota.example.com in config/crd/"]
    assert "rbac-informer-unread" not in found()  # add api added the rule
    (shaped / "config/crd").mkdir()
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "quotas.quota.example.com"},
           "spec": {"group": "quota.example.com", "scope": "Namespaced", "names": {"kind": "Quota", "plural": "quotas"},
                    "versions": [{"name": "v1alpha1", "served": True, "storage": True}]}}  # fmt: skip
    (shaped / "config/crd/quotas.yaml").write_text(json.dumps(crd))
    assert found()["rbac-api-ungenerated"] == ["Quota: no pkg/generated/listers/quota/v1alpha1/"]
    (shaped / "pkg/generated/listers/quota/v1alpha1").mkdir(parents=True)
    assert "rbac-api-ungenerated" not in found()
    # the rule taken out of the rules file: the plugin's source reads what the scheduler may not
    (shaped / rbacrules.RULES_FILE).write_text("[]\n")
    (unread,) = found()["rbac-informer-unread"]
    assert unread.endswith("reads quotas.quota.example.com, and config/rbac/rules.yaml grants no list and watch on it")


def test_make_generate_records_the_code_generator_and_doctor_reads_it(kplugin: Kplugin, shaped: Path) -> None:
    """Issue 44, item 1: make generate writes the client code's code-generator release to
    pkg/generated/code-generator.txt (kplugin's run writes the same bytes); a project
    whose client code another release made is an error in doctor, where a stamp of the
    target's Makefile, or no client code at all (add api --no-generate), is none; upgrade
    and refresh generate again where it is stale (codegen.stale), not where none was
    generated."""
    from kplugin.generate import codegen
    from kplugin.model.project import load

    assert kplugin(*ADD, "--project", str(shaped)).code == 0
    project = load(shaped)
    wanted = project.spec().tool_versions()[apitypes.CLIENTS_GENERATOR]
    makefile = (shaped / "Makefile").read_text()
    assert f"\tprintf '%s\\n' $(CLIENTS_GENERATOR) > {apitypes.GENERATOR_STAMP}\n" in makefile
    assert f"CLIENTS_GENERATOR ?= {wanted}\n" in makefile
    assert project.spec().generation().stamp(codegen.values(project.spec())) == f"{wanted}\n"

    def stale_rules() -> list[dict[str, object]]:
        run = kplugin("doctor", str(shaped), "--json")
        return [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "generated-clients-stale"]

    assert codegen.made_by(shaped) is None and not codegen.stale(shaped, project.spec())
    assert stale_rules() == []
    stamp = shaped / apitypes.GENERATOR_STAMP
    stamp.parent.mkdir(parents=True)
    stamp.write_text(f"{wanted}\n")
    assert codegen.made_by(shaped) == wanted and not codegen.stale(shaped, project.spec())
    assert stale_rules() == []
    stamp.write_text("v0.27.0\n")
    assert codegen.stale(shaped, project.spec())
    (found,) = stale_rules()
    assert (found["severity"], found["file"]) == ("error", "pkg/generated")
    assert found["what"] == (
        f"pkg/generated/ was made by code-generator v0.27.0; the Makefile of Kubernetes {project.version} runs {wanted}"
    )
    stamp.unlink()  # client code that does not say who made it: made before kplugin recorded it
    (found,) = stale_rules()
    assert "made by a code-generator it does not record" in str(found["what"])
