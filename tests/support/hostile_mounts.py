"""Run one kplugin command in a world on private mounts; print the outcome as JSON.

Run by the hostile suites as ``unshare -m --propagation private python hostile_mounts.py
SPEC`` (root only), so every mount dies with the namespace and nothing on the machine
is left mounted, whatever happens. SPEC is JSON:

- ``root``: the world's directory (it must exist);
- ``tmpfs``: mount a tmpfs of this size (e.g. "2m") on ``root`` first;
- ``project``: false for a world without a project (``new`` cases);
- ``read_only``: paths under ``root`` bind-mounted read-only after the world is made;
- ``fill``: fill the file system of ``root`` before the command (a full disk);
- ``args``: the command's arguments; ``{root}``, ``{work}`` and ``{project}`` are replaced.

The output: the command's exit code, stdout and stderr, the world's entries that changed
and kplugin's temporary files left in ``work/``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support import hostile


def main(spec: dict[str, object]) -> dict[str, object]:
    root = Path(str(spec["root"]))
    if spec.get("tmpfs"):
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={spec['tmpfs']}", "tmpfs", str(root)], check=True)
    world = hostile.make_world(root, project=bool(spec.get("project", True)))
    for relative in spec.get("read_only") or []:  # type: ignore[attr-defined]
        path = str(root / relative)
        subprocess.run(["mount", "--bind", path, path], check=True)
        subprocess.run(["mount", "-o", "remount,ro,bind", path], check=True)
    if spec.get("fill"):
        fd = os.open(root / "fill", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
    before = world.snapshot()
    names = {"root": str(root), "work": str(world.work), "project": str(world.project)}
    args = [str(a).format(**names) for a in spec["args"]]  # type: ignore[attr-defined]
    run = hostile.cli(*args, cwd=world.work)
    return {
        "code": run.code,
        "stdout": run.stdout,
        "stderr": run.stderr,
        "changed": sorted(hostile.changed(before, world.snapshot())),
        "left": hostile.staging_left(world.work),
    }


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
