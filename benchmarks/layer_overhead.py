"""The compatibility layer's cost: the generated plugin's Filter and Score, called the
way the framework calls them (through internal/fw and zz_generated.adapter.go), side by
side with a hand-written native plugin doing the same logic (benchmarks/native/), in
one framework, one cluster and one ``go test -bench`` run per minor.

    python benchmarks/layer_overhead.py [--count 10] [--keep DIR]

Target (issue 3): 0 allocations per call, and under 2x the native plugin's time. Runs
every minor with a hand-written baseline (compare_1.XX_test.go: the oldest and the
newest). Needs Go and the Go module proxy (or warm module caches). Not a test: it
measures; the allocation part is also asserted by tests/integration/test_integration_compat.py.
"""

from __future__ import annotations

import argparse
import atexit
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

NATIVE = Path(__file__).resolve().parent / "native"
LINE = re.compile(
    r"^BenchmarkCompare/(?P<impl>layer|native)/(?P<point>Filter|Score)-\d+\s.*?\s(?P<ns>[\d.]+) ns/op"
    r"\s+(?P<bytes>\d+) B/op\s+(?P<allocs>\d+) allocs/op",
    re.M | re.S,
)


def measure(minor: str, work: Path, count: int) -> dict[tuple[str, str], tuple[float, int]]:
    """(impl, point) -> (median ns/op, allocs/op) for one minor."""
    project = work / f"bench-{minor.replace('.', '-')}"
    if not project.exists():
        new = [sys.executable, "-m", "kplugin", "new", project.name, "--k8s", minor, "--plugin", "Bench"]
        new += ["--module", "example.com/bench", "--extension-points", "prefilter,filter,score", "-o", str(work)]
        subprocess.run(new, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        package = project / "pkg" / "bench"
        shutil.copy(NATIVE / "bench_compare_test.go", package / "bench_compare_test.go")
        shutil.copy(NATIVE / f"compare_{minor}_test.go", package / "compare_test.go")
    cmd = ["go", "test", "-run", "^$", "-bench", "BenchmarkCompare", "-benchmem", "-count", str(count), "./pkg/bench/"]
    out = subprocess.run(cmd, cwd=project, capture_output=True, text=True, check=True).stdout
    samples: dict[tuple[str, str], list[tuple[float, int]]] = {}
    for match in LINE.finditer(out):
        samples.setdefault((match["impl"], match["point"]), []).append((float(match["ns"]), int(match["allocs"])))
    if len(samples) != 4:
        raise SystemExit(f"{minor}: could not read the benchmark output:\n{out[-3000:]}")
    return {
        key: (statistics.median(v[0] for v in values), max(v[1] for v in values)) for key, values in samples.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10, help="go test -count (samples per benchmark)")
    parser.add_argument("--keep", type=Path, help="generate the projects here and keep them (reruns reuse them)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="kplugin-layer-"))
    if not args.keep:
        atexit.register(shutil.rmtree, work, True)
    work.mkdir(parents=True, exist_ok=True)
    minors = sorted(
        (p.name.removeprefix("compare_").removesuffix("_test.go") for p in NATIVE.glob("compare_*_test.go")),
        key=lambda m: tuple(int(x) for x in m.split(".")),
    )
    print("| minor | point | layer ns/op | native ns/op | layer / native | layer allocs/op | native allocs/op |")
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    for minor in minors:
        result = measure(minor, work, args.count)
        for point in ("Filter", "Score"):
            (layer, layer_allocs), (native, native_allocs) = result[("layer", point)], result[("native", point)]
            worst = max(worst, layer / native)
            print(
                f"| {minor} | {point} | {layer:.1f} | {native:.1f} | {layer / native:.2f}x | "
                f"{layer_allocs} | {native_allocs} |"
            )
    print(f"\nworst ratio {worst:.2f}x (target < 2x); medians of {args.count} samples each")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
