"""Shared fixtures of the generation tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import Kplugin

# a project of each shape: the sample's Filter and Score in layer mode at the oldest pin,
# a QueueSort-only plugin in native mode at the newest minor
SHAPES = [("gpu-aware", "1.28.3", "filter,score", "layer"), ("order", "1.37", "queuesort", "native")]


@pytest.fixture(params=SHAPES, ids=[s[0] for s in SHAPES])
def shaped(kplugin: Kplugin, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """``kplugin new --no-tidy`` of each shape."""
    name, version, points, api = request.param
    run = kplugin("new", name, "--k8s", version, "--extension-points", points, "--api", api, "--no-tidy",
                  "-o", str(tmp_path))  # fmt: skip
    assert run.code == 0, run.stderr
    return tmp_path / name
