"""The hostile suites' fixtures: kplugin in-process under a deadline, and a world of
hostile files to point it at (a suite that needs more defines its own ``run``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import hostile
from support.hostile import World


@pytest.fixture
def run(kplugin: hostile.KplugIn) -> hostile.KplugIn:
    return hostile.timed(kplugin)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return hostile.make_world(tmp_path)
