"""The catalog script against recorded module-proxy answers (no network).

tests/data/proxy/answers.json.gz holds every answer the proxy gave
``python -m kplugin.maintainer.catalog --only 1.31,1.37,1.38 --record ...``: a minor
whose newest patches cannot be tidied (1.31: zips the proxy refuses), a released minor
on this machine's Go (1.37) and a minor with only a pre-release that needs a newer Go
(1.38.0-beta.0). Record again after a catalog change with the same command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kplugin.maintainer import catalog

ANSWERS = Path(__file__).resolve().parents[2] / "data" / "proxy" / "answers.json.gz"
COMMITTED = json.loads(catalog.CATALOG.read_text())["minors"]


@pytest.fixture()
def answers() -> dict[str, Any]:
    return catalog.load_answers(ANSWERS)


@pytest.mark.parametrize("minor", ["1.31", "1.37", "1.38"])
def test_the_script_derives_the_committed_entry_from_the_recorded_answers(answers: dict[str, Any], minor: str) -> None:
    assert catalog.read_minor(minor, catalog.Replay(answers)) == COMMITTED[minor]


def test_patches_the_proxy_serves_only_in_part_are_skipped(answers: dict[str, Any]) -> None:
    entry = catalog.read_minor("1.31", catalog.Replay(answers))
    assert entry is not None
    # 1.31.8 to 1.31.14 are served, but their tidy fails on a zip the proxy refuses
    assert answers["tidy k8s.io/kubernetes v1.31.14 go 1.22.0"] is not None
    assert entry["newest_patch"] == 7 and entry["prerelease"] == ""
    assert "k8s.io/kube-proxy" in entry["staging_untagged"]


def test_a_pre_release_records_the_go_it_needs(answers: dict[str, Any]) -> None:
    proxy = catalog.Replay(answers)
    entry = catalog.read_minor("1.38", proxy)
    assert entry is not None
    assert (entry["newest_patch"], entry["prerelease"]) == (0, "beta.0")
    assert (entry["go_directive"], entry["godebug"], entry["toolchain"]) == ("1.27.0", "default=go1.27", "go1.27.3")
    assert proxy.toolchain == "go1.27.0"  # what the script's own go commands ran with
    # a minor on this machine's Go runs them with no toolchain named
    catalog.read_minor("1.37", proxy)
    assert proxy.toolchain == ""


def _serve_ga(answers: dict[str, Any], broken: bool = False) -> dict[str, Any]:
    """The answers as they will be once 1.38.0 is served: the beta's files at the GA tag."""
    served = dict(answers)
    for key, value in answers.items():
        if "1.38.0-beta.0" in key or "0.38.0-beta.0" in key:
            served[key.replace("-beta.0", "")] = value
    served["tidy k8s.io/kubernetes v1.38.0 go 1.27.0"] = "k8s.io/x@v0.38.0: 403 Forbidden" if broken else None
    for patch in range(1, catalog.MAX_PATCH_PROBE):
        served[f"gomod k8s.io/kubernetes@v1.38.{patch}"] = None
    return served


def test_once_the_release_is_served_the_same_command_picks_it(answers: dict[str, Any]) -> None:
    entry = catalog.read_minor("1.38", catalog.Replay(_serve_ga(answers)))
    assert entry is not None
    assert (entry["newest_patch"], entry["prerelease"]) == (0, "")
    assert entry["toolchain"] == "go1.27.3"
    # the release needs Go 1.27, so its tidy probe ran with it and with its go directive
    assert {k: v for k, v in entry.items() if k not in {"newest_patch", "prerelease"}} == {
        k: v for k, v in COMMITTED["1.38"].items() if k not in {"newest_patch", "prerelease"}
    }


def test_a_release_that_cannot_be_tidied_falls_back_to_the_pre_release(answers: dict[str, Any]) -> None:
    entry = catalog.read_minor("1.38", catalog.Replay(_serve_ga(answers, broken=True)))
    assert entry is not None
    assert (entry["newest_patch"], entry["prerelease"]) == (0, "beta.0")


def test_a_question_not_recorded_is_an_error_not_a_guess(answers: dict[str, Any]) -> None:
    with pytest.raises(KeyError, match="record again"):
        catalog.read_minor("1.36", catalog.Replay(answers))


def test_recorded_answers_are_byte_for_byte_stable(answers: dict[str, Any], tmp_path: Path) -> None:
    catalog.save_answers(answers, tmp_path / "again.json.gz")
    assert (tmp_path / "again.json.gz").read_bytes() == ANSWERS.read_bytes()
