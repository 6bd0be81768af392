"""Regenerate examples/: ``python -m kplugin.maintainer.examples`` (or ``make examples``).

Each example is ``kplugin new`` with fixed arguments; a test fails when regenerating one
changes a byte, so a template change is always visible in examples/ in the same commit.
An example with code of its own (``own_code``: a real plugin, not the sample) keeps its
user files (the plugin's code, tests, args) and has its generated files rendered around
them, with the pluginConfig args its own Go code gives: the way ``kplugin upgrade`` to
the same version keeps a user's project current. That needs Go and the module proxy.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path, PurePosixPath

from kplugin.core import golang
from kplugin.generate import scaffold, upgrade
from kplugin.model import project
from kplugin.model.spec import ProjectSpec
from kplugin.model.versions import resolve

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"

EXAMPLES: dict[str, dict[str, str | bool]] = {
    "gpu-aware": {
        "k8s": "1.28.3",
        "module": "example.com/gpu-scheduler",
        "plugin": "GpuAware",
        "extension_points": "prefilter,filter,score",
        "own_code": False,
    },
    "weighted-fit": {
        "k8s": "1.28.3",
        "module": "example.com/weighted-fit",
        "plugin": "WeightedFit",
        "extension_points": "score",
        "own_code": True,
    },
    "rack-gang": {  # a pod group's points (1.36 on): one placement per rack, the fewest nodes
        "k8s": "1.37.2",
        "module": "example.com/rack-gang",
        "plugin": "RackGang",
        "extension_points": "placementgenerate,placementscore,podgrouppostfilter",
        "own_code": False,
    },
    "permit-gang": {  # a Coscheduling-style gang (a PodGroup CRD of its own, Permit), 1.37 beside the native one
        "k8s": "1.37.2",
        "module": "example.com/permit-gang",
        "plugin": "PermitGang",
        "extension_points": "prefilter,permit,reserve,enqueueextensions",
        "own_code": True,
    },
    "team-quota": {  # a plugin with an API of its own: config/crd/, config/rbac/rules.yaml
        "k8s": "1.28.3",
        "module": "example.com/team-quota",
        "plugin": "TeamQuota",
        "extension_points": "prefilter,enqueueextensions",
        "own_code": True,
    },
}


def user_files(example: Path) -> dict[PurePosixPath, bytes]:
    """The files of an example that are the user's (its own code), by relative path."""
    return {
        PurePosixPath(p.relative_to(example).as_posix()): p.read_bytes()
        for p in sorted(example.rglob("*"))
        if p.is_file() and scaffold.is_user_file(PurePosixPath(p.relative_to(example).as_posix()))
    }


def generate(name: str, parent: Path, tidy: bool = True, own: dict[PurePosixPath, bytes] | None = None) -> Path:
    """Generate example ``name`` into ``parent``; an own-code example takes ``own`` (its
    user files; default: those in examples/) and needs ``tidy``."""
    options = EXAMPLES[name]
    spec = ProjectSpec.create(
        name,
        resolve(str(options["k8s"])),
        module=str(options["module"]),
        plugin=str(options["plugin"]),
        extension_points=str(options["extension_points"]),
    )
    dest = parent / name
    scaffold.new_project(spec, dest, tidy=golang.mod_tidy if tidy else None)
    if options["own_code"]:
        if not tidy:
            raise ValueError(f"example {name} has code of its own: its args come from Go, which needs go mod tidy")
        for path, content in (own if own is not None else user_files(EXAMPLES_DIR / name)).items():
            (dest / path).parent.mkdir(parents=True, exist_ok=True)
            (dest / path).write_bytes(content)
        generated = project.load(dest)
        upgrade.upgrade(upgrade.prepare(generated, generated.target))
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=EXAMPLES_DIR)
    args = parser.parse_args(argv)
    for name in EXAMPLES:
        own = user_files(EXAMPLES_DIR / name) if EXAMPLES[name]["own_code"] else None
        shutil.rmtree(args.out / name, ignore_errors=True)
        print(generate(name, args.out, own=own))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
