"""Start-up and generation speed of the kplugin CLI, side by side with its baselines.

    python benchmarks/cli_startup.py [--runs 15]

Targets: ``kplugin --version``, ``kplugin --help`` (issue 2) and ``kplugin
render-config`` (issue 5) at most 1.2x ``python -c "import typer"``; ``kplugin new ...
--no-tidy`` faster than ``cookiecutter --version``. Every command runs through the same
interpreter's scripts, interleaved, in one run; the median of each is reported. Not a
test: it measures.

kplugin is measured as installed: byte-compiled, as pip leaves it (an editable checkout
in a shell with PYTHONDONTWRITEBYTECODE=1 would otherwise recompile it on every run, which
the installed typer never does). render-config is measured twice: as it runs again on the
same inputs (its result served from kplugin's cache) and with the cache off
(KPLUGIN_NO_CACHE=1: project loaded, configuration rendered and emitted with ruamel).
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

BIN = Path(sys.executable).parent


def timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    import kplugin

    compileall.compile_dir(Path(kplugin.__file__).parent, quiet=1)
    work = Path(tempfile.mkdtemp(prefix="kplugin-bench-"))
    try:
        measure(work, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def measure(work: Path, runs: int) -> None:
    no_cache = {**os.environ, "KPLUGIN_NO_CACHE": "1"}
    counter = iter(range(1_000_000))

    def new_project() -> list[str]:
        return [str(BIN / "kplugin"), "new", f"p{next(counter)}", "-o", str(work), "--no-tidy", "--k8s", "1.28.3"]

    commands: dict[str, Callable[[], list[str]]] = {
        'python -c "import typer"': lambda: [sys.executable, "-c", "import typer"],
        "kplugin --version": lambda: [str(BIN / "kplugin"), "--version"],
        "kplugin --help": lambda: [str(BIN / "kplugin"), "--help"],
        "cookiecutter --version": lambda: [str(BIN / "cookiecutter"), "--version"],
        "kplugin new --no-tidy": new_project,
        "kplugin render-config": lambda: [str(BIN / "kplugin"), "render-config", str(work / "p0")],
        "render-config, no cache": lambda: [str(BIN / "kplugin"), "render-config", str(work / "p0")],
    }
    envs = {"render-config, no cache": no_cache}
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for name, make in commands.items():  # warm-up: caches, page cache (and project p0 for render-config)
        timed(make(), envs.get(name))
    for _ in range(runs):
        for name, make in commands.items():
            samples[name].append(timed(make(), envs.get(name)))
    median = {name: statistics.median(values) for name, values in samples.items()}
    typer_time = median['python -c "import typer"']
    cc_time = median["cookiecutter --version"]
    print(f"{'command':28} {'median s':>9} {'ratio':>22}")
    for name, value in median.items():
        ratio = ""
        if name in {"kplugin --version", "kplugin --help", "kplugin render-config", "render-config, no cache"}:
            ratio = f"{value / typer_time:.2f}x import typer (<=1.2)"
        elif name == "kplugin new --no-tidy":
            ratio = f"{value / cc_time:.2f}x cookiecutter (<1)"
        print(f"{name:28} {value:9.3f} {ratio:>22}")


if __name__ == "__main__":
    raise SystemExit(main())
