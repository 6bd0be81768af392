"""Rebuild speed of `kplugin build` through Docker vs. a local incremental `go build`.

    python benchmarks/build_rebuild.py [--runs 3]

Target (issue 4): after one full build, changing one line of plugin logic and
rebuilding through Docker takes at most 1.5x a local incremental `go build` of the same
change, measured side by side; the image is at most the binary plus 5 MB. Needs Go and
a running Docker engine; seeds the offline Go builder image like the tests do. With the
default --base-image scratch (no registry here) the image is the binary alone; a
distroless/static base adds about 2 MB.
"""

from __future__ import annotations

import argparse
import atexit
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support import dockerenv  # noqa: E402

KPLUGIN = [sys.executable, "-m", "kplugin"]


def run(cmd: list[str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kplugin-bench-build-"))
    atexit.register(shutil.rmtree, work, True)
    run([*KPLUGIN, "new", "bench", "--k8s", "1.28.3", "-o", str(work)])
    project = work / "bench"
    docker_args = [
        "--builder",
        "docker",
        "--go-image",
        dockerenv.seed_go_image(),
        "--base-image",
        "scratch",
        "--network",
        "host",
    ]
    go_build = ["go", "build", "-trimpath", "-o", "bin/kube-scheduler", "./cmd/scheduler"]
    print("full builds (not measured): docker and local", file=sys.stderr)
    run([*KPLUGIN, "build", str(project), *docker_args])
    run(go_build, cwd=project)
    plugin = project / "pkg/bench/plugin.go"
    original = plugin.read_text()
    docker_times, local_times = [], []
    for i in range(args.runs):
        # the same one-line change of plugin logic for both builders
        plugin.write_text(original.replace('"node not found"', f'"node not found ({i}d)"'))
        docker_times.append(run([*KPLUGIN, "build", str(project), *docker_args]))
        plugin.write_text(original.replace('"node not found"', f'"node not found ({i}l)"'))
        local_times.append(run(go_build, cwd=project))
    result = json.loads(
        subprocess.run(
            [*KPLUGIN, "build", str(project), *docker_args, "--json", "--output", str(work / "out")],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    size = json.loads(
        subprocess.run(
            ["docker", "image", "inspect", result["image"]], check=True, capture_output=True, text=True
        ).stdout
    )[0]["Size"]
    binary = result["binaries"][0]["size"]
    d, loc = statistics.median(docker_times), statistics.median(local_times)
    print(f"docker rebuild (kplugin build, incl. verify)  median {d:6.2f}s  runs {[round(t, 2) for t in docker_times]}")
    print(
        f"local incremental go build                    median {loc:6.2f}s  runs {[round(t, 2) for t in local_times]}"
    )
    print(f"ratio docker/local                            {d / loc:6.2f}x (target <= 1.5)")
    print(f"image {size / 1e6:.1f} MB, binary {binary / 1e6:.1f} MB, overhead {(size - binary) / 1e6:.2f} MB (<= 5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
