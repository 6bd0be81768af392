"""e2e's text report without a control plane: each pod's scores as aligned columns, one
line per node, best total first (ties by name), the best 5 nodes unless --scores says
otherwise; compare's text lays them out alike. The non-TTY report at 80 columns is pinned
byte for byte (tests/unit/golden/e2e-*.txt; KPLUGIN_REGOLD=1 rewrites them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import REPO, Kplugin

from kplugin.cli import e2e as cli
from kplugin.core.errors import OperationError
from kplugin.e2e import compare
from kplugin.e2e.logs import NodeScore, Requeue
from kplugin.e2e.report import ScoreView, Suite, placements_text, score_table
from kplugin.e2e.run import Outcome
from kplugin.e2e.session import CreationTotals, PodPlacement, ProfileLabel, Session

GOLDEN = REPO / "tests" / "unit" / "golden"


def score(node: str, total: int, **plugins: int) -> NodeScore:
    return NodeScore(node, total, plugins)


SEVEN = (  # as the log gives them: in no useful order
    score("c", 50, Gpu=10, Fit=40),
    score("a", 90, Gpu=50, Fit=40),
    score("b", 90, Gpu=50, Fit=40),
    score("e", 10, Gpu=0, Fit=10),
    score("d", 70, Gpu=30, Fit=40),
    score("g", 5, Gpu=0, Fit=5),
    score("f", 20, Gpu=10, Fit=10),
)


def nodes_of(lines: list[str]) -> list[str]:
    return [line.split()[0] for line in lines[1:] if not line.lstrip().startswith("(")]


def test_best_total_first_ties_by_name_top_five_by_default() -> None:
    lines = score_table(SEVEN, ScoreView(more="--scores all"))
    assert nodes_of(lines) == ["a", "b", "d", "c", "f"]
    assert lines[-1] == "    (2 more nodes not shown: --scores all)"


def test_columns_are_aligned_and_plugins_in_name_order() -> None:
    lines = score_table(
        (score("gpu-small", 190, Gpu=0, NodeResourcesFit=90), score("gpu-big", 1290, Gpu=100)), ScoreView()
    )
    assert lines == [
        "    node       total  Gpu  NodeResourcesFit",
        "    gpu-big     1290  100                 -",
        "    gpu-small    190    0                90",
    ]


@pytest.mark.parametrize(
    ("top", "shown", "last"),
    [(None, 7, "    g"), (0, 0, None), (1, 1, "    (6 more nodes not shown)"), (6, 6, "    (1 more node not shown)")],
)
def test_how_many_nodes_show(top: int | None, shown: int, last: str | None) -> None:
    lines = score_table(SEVEN, ScoreView(top=top))
    assert len(nodes_of(lines)) == shown
    if last is None:
        assert lines == []
    else:
        assert lines[-1].startswith(last)


def test_columns_too_wide_go_on_below_and_no_value_is_cut() -> None:
    plugins = {f"Plugin{letter * 12}": i * 111 for i, letter in enumerate("ABCDEF")}
    scores = (score("node-with-a-long-name-1", 1665, **plugins), score("n2", 3, **{k: 0 for k in plugins}))
    lines = score_table(scores, ScoreView(width=80))
    assert all(len(line) <= 80 for line in lines), lines
    headers = [line for line in lines if line.lstrip().startswith("node ")]
    assert headers == [
        "    node                     total  PluginAAAAAAAAAAAA  PluginBBBBBBBBBBBB",
        "    node                     PluginCCCCCCCCCCCC  PluginDDDDDDDDDDDD",
        "    node                     PluginEEEEEEEEEEEE  PluginFFFFFFFFFFFF",
    ]
    assert lines[-2:] == [
        "    node-with-a-long-name-1                 444                 555",
        "    n2                                        0                   0",
    ]
    text = "\n".join(lines)
    for name, value in plugins.items():
        assert text.count(name) == 1 and str(value) in text
    # a single column wider than the room is shown whole, never cut
    lines = score_table((score("n", 1, **{"P" * 100: 7}),), ScoreView(width=40))
    assert lines[0].endswith("P" * 100) and lines[1].endswith(" 7")


@pytest.mark.parametrize("value", ["abc", "0", "-1", "5.0", "", "ALL", " 5"])
def test_bad_scores_values_are_usage_errors_before_anything_runs(kplugin: Kplugin, tmp_path: Path, value: str) -> None:
    run = kplugin("e2e", str(tmp_path / "no-project"), "--scores", value)
    assert run.code == 2, run.stderr
    assert run.stderr.splitlines() == [
        f"kplugin: error: --scores {value!r}: give all, none or a positive number of nodes (the default is 5)"
    ]


@pytest.mark.parametrize(("value", "top"), [("all", None), ("none", 0), ("3", 3), ("012", 12)])
def test_scores_values(value: str, top: int | None) -> None:
    assert cli.Scores.parse(value).top == top


# --- golden: the non-TTY report at 80 columns -------------------------------------------

DEFAULTS = {  # what a 1.28 scheduler's profile scores with a project's plugin (Gpu)
    "ImageLocality": 0,
    "InterPodAffinity": 0,
    "NodeAffinity": 0,
    "NodeResourcesBalancedAllocation": 97,
    "NodeResourcesFit": 81,
    "PodTopologySpread": 200,
    "TaintToleration": 300,
}


def placements() -> list[PodPlacement]:
    gpu = {"Gpu": 100, "NodeResourcesBalancedAllocation": 96, "NodeResourcesFit": 90}
    return [
        PodPlacement("bound", "gpu-small", "", bound_before=True),
        PodPlacement(
            "train-1",
            "gpu-big",
            "",
            ("gpu-big",),
            scores=(score("gpu-small", 186, **{**gpu, "Gpu": 0}), score("gpu-big", 286, **gpu)),
        ),
        PodPlacement(
            "train-4",
            "gpu-small",
            "",
            ("gpu-big",),
            scores=(score("gpu-small", 186, **gpu), score("gpu-big", 186, **gpu)),
        ),
        PodPlacement("train-5", None, "0/3 nodes are available: 3 Insufficient example.com/gpu.", ("pending",)),
        PodPlacement(
            "web-1",
            "node-03",
            "",
            scores=tuple(score(f"node-{i:02}", 678 + i % 3, Gpu=i % 3, **DEFAULTS) for i in range(1, 9)),
            attempts=2,
            requeues=(Requeue("NodeAdd", "Active"),),
        ),
    ]


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("KPLUGIN_REGOLD") == "1":
        path.write_bytes(text.encode())
    assert text.encode() == path.read_bytes(), f"{path} differs (KPLUGIN_REGOLD=1 rewrites it)"


def test_golden_report_at_80_columns(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    outcome = Outcome("1.28.3", "gpu", placements(), 12.5, created=CreationTotals(9, 0.5), scheduled=4)
    report = cli._Report(cli._view(None), None, "scenario.yaml")
    with pytest.raises(OperationError, match="1 pod"):  # train-4: the report is printed first
        cli._print_outcome(outcome, False, report, Suite("s", outcome.placements, 0.0), "gpu")
    text = capsys.readouterr().out
    check_golden("e2e-report.txt", text)
    assert text.isascii()  # stdout's encoding may be any
    assert all(len(line) <= 80 for line in text.splitlines() if not line.startswith("    why:"))


def test_golden_compare_at_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    mine, theirs = placements()[1], placements()[4]
    plugin = Session(ProfileLabel.PLUGIN, "gpu", [mine], CreationTotals(9, 0.5), 1, 0.25, "admin")
    default = Session(ProfileLabel.DEFAULT, "default-scheduler", [theirs], CreationTotals(9, 0.5), 1, 0.25, "admin")
    result = compare.Comparison("1.28.3", plugin, default, compared=1)
    result.moved.append(compare.Change("train-1", mine, theirs))
    text = compare.text(result, cli._view(None))
    check_golden("e2e-compare.txt", text)
    assert "      plugin:\n        node       total  Gpu" in text and "      default:\n        node     total" in text


def test_plain_text_without_scores() -> None:
    text = placements_text(placements(), ScoreView(top=0))
    assert "total" not in text and "Gpu" not in text
    assert text.splitlines()[0] == "train-1                  gpu-big                  ok"
    assert text.splitlines()[-1] == "(1 pod(s) bound already in the scenario, not shown)"
