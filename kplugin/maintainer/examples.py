"""Regenerate examples/: ``python -m kplugin.maintainer.examples`` (or ``make examples``).

Each example is ``kplugin new`` with fixed arguments; a test fails when regenerating one
changes a byte, so a template change is always visible in examples/ in the same commit.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from kplugin import golang, scaffold
from kplugin.spec import ProjectSpec
from kplugin.versions import resolve

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"

EXAMPLES: dict[str, dict[str, str]] = {
    "gpu-aware": {
        "k8s": "1.28.3",
        "module": "example.com/gpu-scheduler",
        "plugin": "GpuAware",
        "extension_points": "prefilter,filter,score",
    },
}


def generate(name: str, parent: Path, tidy: bool = True) -> Path:
    options = EXAMPLES[name]
    spec = ProjectSpec.build(
        name,
        resolve(options["k8s"]),
        module=options["module"],
        plugin=options["plugin"],
        extension_points=options["extension_points"],
    )
    dest = parent / name
    scaffold.new_project(spec, dest, tidy=golang.mod_tidy if tidy else None)
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=EXAMPLES_DIR)
    args = parser.parse_args(argv)
    for name in EXAMPLES:
        shutil.rmtree(args.out / name, ignore_errors=True)
        print(generate(name, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
