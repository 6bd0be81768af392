"""The wheel carries every template and the catalog (the README's `pip install .`)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support import REPO

pytestmark = pytest.mark.integration


def test_wheel_ships_templates_and_catalog(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("kplugin-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = [p.relative_to(REPO).as_posix() for p in (REPO / "templates").rglob("*") if p.is_file()]
    assert templates
    for path in templates:
        assert f"kplugin/{path}" in names, path
    assert "kplugin/data/catalog.json" in names
    assert {"kplugin/data/e2e/report.js", "kplugin/data/e2e/report.css"} <= names  # e2e --report's page
