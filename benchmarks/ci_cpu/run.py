"""Where the test suite's CPU goes (issue 20): runs ``.ci/run`` with every test's CPU time
(cpuprobe.py) and every go command's (bin/go) recorded, then prints the summary
(``report``). On this two-core machine the suite keeps both cores busy (measured: 2% idle
cold, 10% warm), so the run's time is about its CPU time over two: the figures say what
a change can save.

    python benchmarks/ci_cpu/run.py OUT             # .ci/run of this checkout, recorded into OUT
    python benchmarks/ci_cpu/run.py OUT --report    # the summary of a recorded run again

For a cold run, empty Go's caches and kplugin's first (GOPATH, GOCACHE, GOMODCACHE,
~/.cache/kplugin, ~/.cache/golangci-lint): what the suite compiles then is the most of it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def record(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob("*.jsonl"), out / "go.tsv"]:
        stale.unlink(missing_ok=True)
    env = {
        **os.environ,
        "KPLUGIN_CPU_DIR": str(out),
        "PATH": f"{HERE / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])),
        "PYTEST_ADDOPTS": " ".join(filter(None, [os.environ.get("PYTEST_ADDOPTS"), "-p cpuprobe"])),
    }
    started = time.monotonic()
    done = subprocess.run([str(REPO / ".ci" / "run")], cwd=REPO, env=env, stdin=subprocess.DEVNULL, check=False)
    print(f".ci/run: exit {done.returncode} after {time.monotonic() - started:.0f} s")
    return done.returncode


def report(out: Path, top: int) -> None:
    tests = [json.loads(line) for f in sorted(out.glob("*.jsonl")) for line in f.read_text().splitlines()]
    cpu = {t["id"]: t["self"] + t["children"] for t in tests}
    wall = sum(t["wall"] for t in tests)
    print(f"{len(tests)} tests: {sum(cpu.values()):.0f} CPU-seconds, {wall:.0f} s of the workers' time")
    by_file: Counter[str] = Counter()
    for test_id, seconds in cpu.items():
        by_file[test_id.split("::")[0]] += seconds
    print("\nCPU-seconds by test file")
    for name, seconds in by_file.most_common(top):
        print(f"{seconds:9.1f}  {name}")
    print("\nCPU-seconds by test")
    for test_id, seconds in Counter(cpu).most_common(top):
        print(f"{seconds:9.1f}  {test_id}")
    rows = [line.split("\t") for line in (out / "go.tsv").read_text().splitlines()] if (out / "go.tsv").exists() else []
    if not rows:
        return
    by_command: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for row in rows:
        command = " ".join(row[6].split()[:2])
        by_command[command] += float(row[1])
        counts[command] += 1
    print(f"\ngo commands: {len(rows)}, {sum(by_command.values()):.0f} CPU-seconds; by command")
    for command, seconds in by_command.most_common(top):
        print(f"{seconds:9.1f}  {counts[command]:4d}x  go {command}")
    print("\nthe costliest go commands")
    for row in sorted(rows, key=lambda r: -float(r[1]))[:top]:
        print(f"{float(row[1]):9.1f}  {row[4]}  go {row[6][:100]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="where the records go (a directory)")
    parser.add_argument("--report", action="store_true", help="only summarize a recorded run")
    parser.add_argument("--top", type=int, default=25, help="rows per table")
    args = parser.parse_args()
    code = 0 if args.report else record(args.out.resolve())
    report(args.out.resolve(), args.top)
    sys.exit(code)


if __name__ == "__main__":
    main()
