"""Start-up and generation speed of the kplugin CLI, side by side with its baselines.

    python benchmarks/cli_startup.py [--runs 15]

Targets (issue 12): ``kplugin --version`` at most 1.2x ``python -c "import typer"``;
``kplugin render-config``, a first render (kplugin keeps no result cache), at most 1.6x
``import typer``; ``kplugin new NAME --no-tidy`` at most 1.3x plain ``cookiecutter
--no-input`` rendering the same template with the same context (so kplugin's validation,
staging and the files it renders in Python around the template cost at most 30% over
the engine alone). Every command runs through the same interpreter's scripts,
interleaved, in one run; the median of each is reported. Not a test: it measures.

kplugin is measured as installed: byte-compiled, as pip leaves it (an editable checkout
in a shell with PYTHONDONTWRITEBYTECODE=1 would otherwise recompile it on every run, which
the installed typer never does). render-config runs on a project made with --no-tidy
(no go.sum), so it renders from what kplugin knows of the code it generated; on a tidied
project it runs the plugins' own Go decoder (a cached binary) as well, also reported.
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
TARGETS = {"kplugin --version": 1.2, "kplugin render-config": 1.6}
NEW_TARGET = 1.3


def timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tidied", action="store_true", help="also render-config on a tidied project (needs Go)")
    args = parser.parse_args()
    import kplugin

    compileall.compile_dir(Path(kplugin.__file__).parent, quiet=1)
    work = Path(tempfile.mkdtemp(prefix="kplugin-bench-"))
    try:
        measure(work, args.runs, args.tidied)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def cookiecutter_config(work: Path) -> Path:
    """The context kplugin new renders its template with, as a cookiecutter config file."""
    from kplugin.core import yamlio
    from kplugin.generate import scaffold
    from kplugin.model.spec import ProjectSpec
    from kplugin.model.versions import resolve

    spec = ProjectSpec.create("cc", resolve("1.28.3"))
    config = work / "cookiecutter.yaml"
    config.write_text(yamlio.dump({"default_context": scaffold.template_context(spec)}))
    return config


def measure(work: Path, runs: int, tidied: bool) -> None:
    from kplugin.generate.templating import templates_root

    counter, runs_of_cc = iter(range(1_000_000)), iter(range(1_000_000))
    config = cookiecutter_config(work)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}

    def new_project() -> list[str]:
        return [str(BIN / "kplugin"), "new", f"p{next(counter)}", "-o", str(work), "--no-tidy", "--k8s", "1.28.3"]

    def plain_cookiecutter() -> list[str]:
        out = work / f"cc{next(runs_of_cc)}"
        return [str(BIN / "cookiecutter"), "--no-input", "--config-file", str(config),
                str(templates_root() / "project"), "-o", str(out)]  # fmt: skip

    commands: dict[str, Callable[[], list[str]]] = {
        'python -c "import typer"': lambda: [sys.executable, "-c", "import typer"],
        "kplugin --version": lambda: [str(BIN / "kplugin"), "--version"],
        "cookiecutter --no-input": plain_cookiecutter,
        "kplugin new --no-tidy": new_project,  # before render-config: its first run makes p0
        "kplugin render-config": lambda: [str(BIN / "kplugin"), "render-config", str(work / "p0")],
    }
    if tidied:
        subprocess.run([str(BIN / "kplugin"), "new", "tidied", "-o", str(work), "--k8s", "1.28.3"], check=True)
        commands["render-config (tidied, Go)"] = lambda: [str(BIN / "kplugin"), "render-config", str(work / "tidied")]
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for make in commands.values():  # warm-up: page cache, the project p0 render-config reads
        timed(make(), env)
    for _ in range(runs):
        for name, make in commands.items():
            samples[name].append(timed(make(), env))
    median = {name: statistics.median(values) for name, values in samples.items()}
    typer_time = median['python -c "import typer"']
    cc_time = median["cookiecutter --no-input"]
    print(f"{'command':30} {'median s':>9}  ratio")
    for name, value in median.items():
        ratio = ""
        if name in TARGETS:
            ratio = f"{value / typer_time:.2f}x import typer (target <= {TARGETS[name]})"
        elif name.startswith("render-config"):
            ratio = f"{value / typer_time:.2f}x import typer"
        elif name == "kplugin new --no-tidy":
            ratio = f"{value / cc_time:.2f}x cookiecutter --no-input (target <= {NEW_TARGET})"
        print(f"{name:30} {value:9.3f}  {ratio}")


if __name__ == "__main__":
    raise SystemExit(main())
