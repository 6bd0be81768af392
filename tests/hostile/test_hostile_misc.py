"""Issue 10, class 7: upgrade to the version a project already has changes nothing; a
mistyped command, subcommand or option gets its suggestion once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support import hostile
from support.hostile import K8S, World

pytestmark = pytest.mark.hostile


def hand_edit(relative: str, line: str) -> Callable[[World], None]:
    def edit(world: World) -> None:
        with (world.project / relative).open("a") as handle:
            handle.write(line)

    return edit


EDITS: dict[str, Callable[[World], None]] = {
    "as-generated": lambda _w: None,
    "edited-generated-file": hand_edit("Dockerfile", "# mine\n"),
    "edited-go-mod": hand_edit("go.mod", "\nrequire example.com/mine v1.0.0\n"),
    "edited-plugin-code": hand_edit("pkg/p/plugin.go", "\n// mine\n"),
    "extra-file": lambda w: (w.project / "NOTES.md").write_text("mine\n"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize("spelling", [K8S, f"v{K8S}", "1.28", f" {K8S} "])
def test_upgrade_to_the_current_version_changes_nothing(
    run: hostile.KplugIn, tmp_path: Path, spelling: str, edit: str
) -> None:
    world = hostile.make_world(tmp_path)
    EDITS[edit](world)
    before = world.snapshot()
    result = run("upgrade", str(world.project), "--k8s", spelling, "--no-tidy")
    hostile.succeeded(result)
    assert "0 file(s) changed" in result.stderr and "nothing to change" in result.stderr
    assert world.snapshot() == before
    assert hostile.staging_left(world.work) == []


def test_upgrade_to_the_current_version_json(run: hostile.KplugIn, tmp_path: Path) -> None:
    world = hostile.make_world(tmp_path)
    before = world.snapshot()
    result = run("upgrade", str(world.project), "--k8s", K8S, "--no-tidy", "--json")
    hostile.succeeded(result)
    assert '"changed": []' in result.stdout
    assert world.snapshot() == before


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (("updgrade",), "'upgrade'"),
        (("rendr-config",), "'render-config'"),
        (("doctr",), "'doctor'"),
        (("verions",), "'versions'"),
        (("add", "plugn", "X"), "'plugin'"),
        (("doctor", "--jsn"), "'--json'"),
        (("render-config", "--forse"), "'--force'"),
        (("new", "p", "--no-tid"), "'--no-tidy'"),
    ],
)
def test_did_you_mean_once(run: hostile.KplugIn, tmp_path: Path, args: tuple[str, ...], suggestion: str) -> None:
    line = hostile.refused(run(*args), 2, suggestion)
    assert line.count("Did you mean") == 1 and line.count(suggestion) == 1, line


def test_did_you_mean_once_in_a_real_process(tmp_path: Path) -> None:
    line = hostile.refused(hostile.cli("updgrade", cwd=tmp_path), 2, "Did you mean 'upgrade'?")
    assert line.count("Did you mean") == 1, line
