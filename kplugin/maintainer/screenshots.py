"""The README's pictures of the reports: ``python -m kplugin.maintainer.screenshots``.

Makes the sample (kplugin new gpu), replays examples/e2e-scenario.yaml with --report and
with --compare default --report, runs a small bench with --cpu-profile --report, and
photographs each page in headless chromium (Debian's, through Playwright, as the tests
open them) into examples/report-*.png. A maintainer's command, run by hand when a report's
look changes: CI opens the reports in the same browser but never rewrites these files.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "examples"  # beside the scenarios the pictures are made from
PAGES = {"report-e2e": "e2e", "report-e2e-whatif": "whatif", "report-bench": "bench"}  # PNG -> the page made
# the pod whose details a picture shows: the first row with this text (else the first row);
# the what-if's, a pod pending under one profile: its rejections node by node
PICK = {"report-e2e-whatif": "pending"}


def _kplugin(*args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "CI": "true"}
    subprocess.run([sys.executable, "-m", "kplugin", *args], env=env, check=True, stdout=subprocess.DEVNULL)


def _photograph(pages: dict[str, Path], out: Path) -> None:
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        raise SystemExit("chromium is missing (apt-get install chromium)")
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        for name, page_file in pages.items():
            page = browser.new_page(viewport={"width": 1280, "height": 1200})
            page.goto(page_file.as_uri())
            page.wait_for_load_state("load")
            rows = page.locator("tr.pod")
            picked = page.locator("tr.pod", has_text=PICK[name]) if name in PICK else rows
            if picked.count():
                picked.first.click()  # a pod's details open, as a reader would
            elif rows.count():
                rows.first.click()
            flames = page.locator("h2", has_text="Where the scheduler's CPU went")
            box = flames.bounding_box() if flames.count() else None
            if box is not None:  # bench's: its CPU profiles, the part a reader scrolls to
                page.evaluate("(y) => window.scrollTo(0, y)", box["y"] - 10)
            page.screenshot(path=str(out / f"{name}.png"))
            page.close()
        browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the PNGs go (default: {OUT})")
    options = parser.parse_args(argv)
    options.out.mkdir(parents=True, exist_ok=True)
    scenario, args = REPO / "examples" / "e2e-scenario.yaml", REPO / "examples" / "e2e-args.yaml"
    with tempfile.TemporaryDirectory(prefix="kplugin-screenshots-") as tmp:
        work = Path(tmp)
        _kplugin("new", "gpu", "-o", str(work))
        project = str(work / "gpu")
        replay = ["e2e", project, "--scenario", str(scenario), "--args", str(args)]
        _kplugin(*replay, "--report", str(work / "e2e.html"))
        _kplugin(*replay, "--compare", "default", "--report", str(work / "whatif.html"))
        _kplugin("bench", project, "--nodes", "500", "--pods", "500", "--cpu-profile", str(work / "profiles"),
                 "--report", str(work / "bench.html"))  # fmt: skip
        pages = {name: work / f"{stem}.html" for name, stem in PAGES.items()}
        _photograph(pages, options.out)
    for name in pages:
        print(options.out / f"{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
