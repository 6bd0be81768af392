"""The project's own RBAC rules (config/rbac/rules.yaml, issue 21): written once by
`new`, checked value by value, merged into deploy/rbac.yaml and the chart by `kplugin
refresh`, compared by doctor, and required by e2e before anything is built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from support import Kplugin, tree

from kplugin.core.errors import UsageError
from kplugin.model import rbacrules

PODGROUPS = "- apiGroups: [scheduling.x-k8s.io]\n  resources: [podgroups]\n  verbs: [get, list, watch]\n"


def cluster_role_rules(shaped: Path) -> list[dict[str, object]]:
    docs = list(YAML(typ="safe").load_all((shaped / "deploy/rbac.yaml").read_text()))
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    return list(role["rules"])


def chart_rules(shaped: Path) -> list[dict[str, object]]:
    values = YAML(typ="safe").load((shaped / "charts" / shaped.name / "values.yaml").read_text())
    return list(values["rbac"]["rules"])


def findings(kplugin: Kplugin, shaped: Path) -> dict[str, str]:
    run = kplugin("doctor", str(shaped), "--json")
    return {f["rule"]: f["what"] for f in json.loads(run.stdout)["findings"]}


def test_new_writes_the_rules_file_once_and_empty(shaped: Path) -> None:
    text = (shaped / rbacrules.RULES_FILE).read_text()
    assert text.startswith("# The ClusterRole rules") and text.endswith("[]\n")
    assert rbacrules.load(shaped) == ()
    meta = YAML(typ="safe").load((shaped / "kplugin.yaml").read_text())
    assert str(rbacrules.RULES_FILE) not in meta["generated"], "the user's file: no digest, never rewritten"


def test_refresh_merges_the_rules_into_deploy_and_the_chart(kplugin: Kplugin, shaped: Path) -> None:
    rules = shaped / rbacrules.RULES_FILE
    rules.write_text(rules.read_text().replace("[]\n", PODGROUPS))
    wanted = {"apiGroups": ["scheduling.x-k8s.io"], "resources": ["podgroups"], "verbs": ["get", "list", "watch"]}
    assert wanted not in cluster_role_rules(shaped)
    assert "rbac-project-rules" in findings(kplugin, shaped)
    before = tree(shaped)
    dry = kplugin("refresh", str(shaped), "--dry-run", "--json")
    assert dry.code == 0, dry.stderr
    assert tree(shaped) == before
    run = kplugin("refresh", str(shaped), "--json")
    assert run.code == 0, run.stderr
    changed = json.loads(run.stdout)["changed"]
    assert changed == json.loads(dry.stdout)["changed"]
    assert changed == sorted(["deploy/rbac.yaml", f"charts/{shaped.name}/values.yaml", "kplugin.yaml"])
    assert cluster_role_rules(shaped)[-1] == wanted
    assert chart_rules(shaped) == cluster_role_rules(shaped)
    assert rules.read_text().endswith(PODGROUPS), "the user's file is as they wrote it"
    assert not {"rbac-project-rules", "rbac-chart-differs"} & set(findings(kplugin, shaped))
    again = kplugin("refresh", str(shaped))
    assert again.code == 0 and "0 file(s) changed" in again.stderr, again.stderr


def test_doctor_finds_a_chart_that_grants_other_rules(kplugin: Kplugin, shaped: Path) -> None:
    values = shaped / "charts" / shaped.name / "values.yaml"
    values.write_text(values.read_text().replace("    - nodes\n", "    - nodez\n", 1), encoding="utf-8")
    found = findings(kplugin, shaped)
    assert "rbac-chart-differs" in found and "core/nodes" in found["rbac-chart-differs"], found


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("- apiGroups: ['*']\n  resources: [pods]\n  verbs: [get]\n", "rule 1 apiGroups: '*' is not an API group"),
        ("- apiGroups: ['']\n  resources: [pods]\n  verbs: ['*']\n", "'*' is not a verb kplugin grants"),
        ("- apiGroups: ['']\n  resources: [Pods]\n  verbs: [get]\n", "'Pods' is not a plural"),
        ("- apiGroups: ['']\n  resources: [pods]\n  verbs: []\n", "verbs must list at least one value"),
        ("- apiGroups: ['']\n  resources: [pods]\n  verbs: [get]\n  nonResourceURLs: [/x]\n", "unknown key"),
        ("apiGroups: ['']\n", "must be a list of rules"),
        ("- [get]\n", "rule 1: must be a mapping"),
    ],
)
def test_a_bad_rule_is_one_line_and_nothing_is_written(kplugin: Kplugin, shaped: Path, text: str, needle: str) -> None:
    (shaped / rbacrules.RULES_FILE).write_text(text)
    before = tree(shaped)
    upgrade = ["upgrade", str(shaped), "--k8s", "1.36", "--no-tidy"]
    commands = (["refresh", str(shaped)], upgrade, ["e2e", str(shaped)])
    for command in commands:
        run = kplugin(*command)
        assert run.code == 2, (command, run.stderr)
        (line,) = run.stderr.strip().splitlines()
        assert line.startswith("kplugin: error: config/rbac/rules.yaml: ") and needle in line, line
    assert tree(shaped) == before
    assert "rbac-rules-file" in findings(kplugin, shaped)


def test_e2e_refuses_a_deploy_that_lacks_the_rules_before_building(kplugin: Kplugin, shaped: Path) -> None:
    rules = shaped / rbacrules.RULES_FILE
    rules.write_text(PODGROUPS)
    run = kplugin("e2e", str(shaped))
    assert run.code == 2, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert "ClusterRole misses get scheduling.x-k8s.io/podgroups" in line and "run kplugin refresh" in line, line
    assert not (shaped / "bin").exists(), "nothing was built"


def test_rules_by_name_and_duplicates() -> None:
    parsed = rbacrules.parse(
        [
            {"apiGroups": ["x.io"], "resources": ["things"], "verbs": ["get", "get"], "resourceNames": ["one"]},
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
        ],
        "rules",
    )
    assert parsed[0].verbs == ("get",)
    granted = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]
    assert rbacrules.missing(parsed, granted) == ["get things by name"]
    assert rbacrules.missing(parsed, [*granted, parsed[0].as_dict()]) == []
    merged = rbacrules.merged([parsed[1].as_dict()], parsed)
    assert merged == [parsed[1].as_dict(), parsed[0].as_dict()]
    with pytest.raises(UsageError, match="at most 200"):
        rbacrules.parse([{}] * 201, "rules")


@pytest.mark.parametrize("shape", ["symlink", "fifo"])
def test_a_rules_file_that_is_no_regular_file_is_refused_unread(
    kplugin: Kplugin, shaped: Path, tmp_path: Path, shape: str
) -> None:
    """A symlink out of the project (a tampered checkout) or a FIFO (a read would hang):
    refused by name, never read, nothing written."""
    import os

    rules = shaped / rbacrules.RULES_FILE
    rules.unlink()
    if shape == "symlink":
        outside = tmp_path / "outside.yaml"
        outside.write_text(PODGROUPS)
        rules.symlink_to(outside)
    else:
        os.mkfifo(rules)
    before = tree(shaped)
    run = kplugin("refresh", str(shaped))
    assert run.code == 2, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert f"rules.yaml is a {'symlink' if shape == 'symlink' else 'FIFO'}" in line, line
    assert tree(shaped) == before
    assert "rbac-rules-file" in findings(kplugin, shaped)


@pytest.mark.parametrize(
    ("granted", "lacking"),
    [
        ([{"apiGroups": ["x.io"], "resources": ["things"], "verbs": ["list", "watch"]}], []),
        ([{"apiGroups": ["*"], "resources": ["things"], "verbs": ["list", "watch"]}], []),
        ([{"apiGroups": ["x.io"], "resources": ["*"], "verbs": ["*"]}], []),
        ([{"apiGroups": ["x.io"], "resources": ["things"], "verbs": ["list"]}], ["watch x.io/things"]),
        ([{"apiGroups": ["y.io"], "resources": ["*"], "verbs": ["*"]}], ["list x.io/things", "watch x.io/things"]),
        ([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"], "resourceNames": ["a"]}],
         ["list x.io/things", "watch x.io/things"]),
    ],
)  # fmt: skip
def test_a_wildcard_grants_what_it_names_as_the_api_server_reads_it(
    granted: list[dict[str, object]], lacking: list[str]
) -> None:
    """An adopted repository's ClusterRoles may use `*` (kplugin's own rules file may not):
    a wildcard group, resource or verb grants them all; a rule by name grants no list."""
    assert rbacrules.missing((rbacrules.watches("x.io", "things"),), granted) == lacking
