"""CPU profiles of the scheduler in the measured phase (bench's profiles option).

Recorded from the scheduler's own pprof endpoint (``/debug/pprof/profile``, served on
loopback and allowed without authorization for the run, as /metrics is) one second at a
time, so that recording ends with the phase; merged with ``go tool pprof -proto`` (Go is
on hand: bench builds with the local toolchain) into one profile per run and one per
profile kind, which ``go tool pprof`` opens as they are. Read here, from the profile.proto
format, into what bench prints (the project's own packages' share of the scheduler's CPU,
flat and cumulative, split by the extension point whose method the framework called) and
the flame graph its report draws: no Graphviz, no network, the same bytes for the same
profile.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Protocol

from kplugin.bench.plan import BASELINE, PROJECT
from kplugin.core import proc, safefs
from kplugin.core.errors import OperationError, ToolError
from kplugin.core.varint import uvarint
from kplugin.model.points import POINTS

ENDPOINT = "/debug/pprof/profile"
CHUNK_SECONDS = 1  # the endpoint takes whole seconds; recording overshoots the phase by less


class _Fetcher(Protocol):
    def fetch(self, path: str, timeout: float) -> bytes: ...


class Recorder:
    """Records the scheduler's CPU profile one chunk after another on a thread, from
    ``start`` to ``stop``; the chunks are written as ``<stem>-<n>.pb.gz`` in ``directory``."""

    def __init__(self, scheduler: _Fetcher, directory: Path, stem: str) -> None:
        self.scheduler, self.directory, self.stem = scheduler, directory, stem
        self.chunks: list[Path] = []
        self.error: BaseException | None = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"cpu-profile-{stem}", daemon=True)

    def start(self) -> Recorder:
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                data = self.scheduler.fetch(f"{ENDPOINT}?seconds={CHUNK_SECONDS}", timeout=CHUNK_SECONDS + 30)
                chunk = self.directory / f"{self.stem}-{len(self.chunks):04d}.pb.gz"
                chunk.write_bytes(data)
            except Exception as err:  # any failure ends the recording and is told by check()
                self.error = err
                return
            self.chunks.append(chunk)

    def stop(self) -> list[Path]:
        """The chunks recorded, once the one under way is in (``check`` says whether
        recording failed: after a failure of the run, its own error is the one to tell)."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()
        return list(self.chunks)

    def check(self) -> None:
        if self.error is not None:
            raise OperationError(f"kube-scheduler {ENDPOINT}: {self.error}")


def merge(sources: list[Path], output: Path) -> Path:
    """One profile of ``sources`` (go tool pprof adds their samples up)."""
    try:
        proc.run(
            ["go", "tool", "pprof", "-proto", f"-output={output}", *map(str, sources)],
            cwd=output.parent,  # no go.mod here: the machine's toolchain, never a download
            env={"GOTOOLCHAIN": "local"},
            what="go tool pprof",
        )
    except ToolError as err:
        raise OperationError(f"merging CPU profiles into {output}: {err}") from None
    return output


# --- reading profile.proto (gzipped), as much of it as the stacks need ---------------------


def _fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of one message."""
    i, end = 0, len(data)
    while i < end:
        key, i = uvarint(data, i)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, i = uvarint(data, i)
        elif wire == 2:
            length, i = uvarint(data, i)
            value, i = data[i : i + length], i + length
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, i = data[i : i + size], i + size
        else:
            raise ValueError(f"wire type {wire}")
        yield number, wire, value


def _ints(value: int | bytes) -> list[int]:
    """A repeated integer field's values, packed or not (int64 two's complement)."""
    if isinstance(value, int):
        values = [value]
    else:
        values, i = [], 0
        while i < len(value):
            v, i = uvarint(value, i)
            values.append(v)
    return [v - (1 << 64) if v >= 1 << 63 else v for v in values]


Stacks = dict[tuple[str, ...], int]  # frames, outermost first -> CPU nanoseconds


def read(path: Path) -> Stacks:
    """The profile's CPU time by stack (function names, outermost caller first; inlined
    calls as frames of their own, as pprof shows them)."""
    try:
        raw = path.read_bytes()
        data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        return _stacks(data)
    except (OSError, ValueError, IndexError, EOFError, zlib.error) as err:  # BadGzipFile is an OSError
        raise OperationError(f"{path}: not a CPU profile pprof wrote ({err})") from None


def _stacks(data: bytes) -> Stacks:
    strings: list[str] = []
    types: list[int] = []
    samples: list[tuple[list[int], list[int]]] = []
    locations: dict[int, list[int]] = {}  # location -> function ids, innermost first
    functions: dict[int, int] = {}  # function -> its name's string index
    for number, _, value in _fields(data):
        if number == 6 and isinstance(value, bytes):
            strings.append(value.decode("utf-8", "replace"))
        elif number == 1 and isinstance(value, bytes):
            types.append(next((int(v) for n, _, v in _fields(value) if n == 1 and isinstance(v, int)), 0))
        elif number == 2 and isinstance(value, bytes):
            ids: list[int] = []
            values: list[int] = []
            for n, _, v in _fields(value):
                if n == 1:
                    ids += _ints(v)
                elif n == 2:
                    values += _ints(v)
            samples.append((ids, values))
        elif number == 4 and isinstance(value, bytes):
            location, lines = 0, []
            for n, _, v in _fields(value):
                if n == 1 and isinstance(v, int):
                    location = v
                elif n == 4 and isinstance(v, bytes):
                    lines += [int(f) for m, _, f in _fields(v) if m == 1 and isinstance(f, int)]
            locations[location] = lines
        elif number == 5 and isinstance(value, bytes):
            function = name = 0
            for n, _, v in _fields(value):
                if n == 1 and isinstance(v, int):
                    function = v
                elif n == 2 and isinstance(v, int):
                    name = v
            functions[function] = name
    kinds = [strings[t] if t < len(strings) else "" for t in types]
    if "cpu" not in kinds:
        raise ValueError(f"no cpu samples (sample types {', '.join(kinds) or 'none'})")
    column = kinds.index("cpu")
    stacks: Stacks = defaultdict(int)
    for ids, values in samples:
        frames = [strings[functions.get(f, 0)] for loc in ids for f in locations.get(loc, [])]
        stacks[tuple(reversed(frames))] += values[column] if column < len(values) else 0
    return dict(stacks)


# --- what the stacks say -------------------------------------------------------------------


def _method_points() -> dict[str, str]:
    """Method name -> the extension point (as the framework names it) the framework calls
    it at, from kplugin.model.points (the interfaces' methods and what they hand out)."""
    found: dict[str, str] = {}
    for point, row in POINTS.items():
        for name in (*(m.name for m in row.methods), *row.calls):
            found.setdefault(name, point.go_name)
    return found


METHOD_POINTS = _method_points()
GC_WORKER = "runtime.gcBgMarkWorker"
OTHER = "elsewhere"  # the project's code called from no point's method (hints, informers)


def owns(module: str, function: str) -> bool:
    """The function is in one of the module's packages."""
    return function.startswith((module + "/", module + "."))


def method_name(function: str) -> str:
    """'example.com/gpu/pkg/gpu.(*Gpu).Filter.func1' -> 'Filter'; a value receiver's
    'pkg.Gpu.Score' and a method value's '(*Gpu).Filter-fm' alike; a plain function's own
    name."""
    local = function.rsplit("/", 1)[-1].split(".", 1)[-1]  # after the package
    if local.startswith("("):
        local = local.split(").", 1)[-1]
    parts = [part.removesuffix("-fm") for part in local.split(".")]
    if parts[0] not in METHOD_POINTS and len(parts) > 1 and parts[1] in METHOD_POINTS:
        return parts[1]  # T.Method: a method of a value receiver
    return parts[0]


@dataclass(frozen=True)
class Shares:
    """One profile's CPU and how much of it ran in the project's packages."""

    total: int  # nanoseconds sampled
    flat: int  # in the project's own functions
    cumulative: int  # with the project's functions anywhere on the stack
    points: dict[str, int] = field(default_factory=dict)  # cumulative, by the point that called in
    functions: dict[str, int] = field(default_factory=dict)  # flat, by project function
    # the garbage collector's background marking: where the cost of what plugins allocate
    # shows, on no plugin's stack (compare it with the baseline's)
    gc: int = 0


def shares(stacks: Stacks, module: str) -> Shares:
    total = flat = cumulative = gc = 0
    points: dict[str, int] = defaultdict(int)
    functions: dict[str, int] = defaultdict(int)
    for frames, value in stacks.items():
        total += value
        if GC_WORKER in frames:
            gc += value
        outermost = next((f for f in frames if owns(module, f)), None)
        if outermost is None:
            continue
        cumulative += value
        points[METHOD_POINTS.get(method_name(outermost), OTHER)] += value
        if frames and owns(module, frames[-1]):
            flat += value
            functions[frames[-1]] += value
    return Shares(total, flat, cumulative, dict(points), dict(functions), gc)


@dataclass(frozen=True)
class CpuProfile:
    """A profile kind's CPU profile over all its runs' measured phases."""

    kind: str  # BASELINE or PROJECT
    path: Path  # the merged profile
    runs: tuple[Path, ...]  # each run's
    stacks: Stacks
    shares: Shares


Recorded = tuple[str, int, tuple[Path, ...]]  # a run's: its profile kind, its number, its chunks


def collect(recorded: list[Recorded], target: Path, module: str) -> tuple[CpuProfile, ...]:
    """The runs' chunks (``(kind, run number, chunks)``, in run order) merged into one
    profile per run and one per profile kind, and read; all of them put in ``target`` (new
    or empty) at once, or none of them."""
    stage = safefs.make_stage(target.parent, target.name)
    made: list[CpuProfile] = []
    try:
        for kind in (BASELINE, PROJECT):
            runs_of_kind = [(n, chunks) for k, n, chunks in recorded if k == kind and chunks]
            own = [merge(list(chunks), stage / f"run-{n}-{kind}.pb.gz") for n, chunks in runs_of_kind]
            if not own:
                continue
            merged = merge(own, stage / f"{kind}.pb.gz")
            stacks = read(merged)
            runs = tuple(target / path.name for path in own)
            made.append(CpuProfile(kind, target / merged.name, runs, stacks, shares(stacks, module)))
        safefs.publish_directory(stage, target)
    except BaseException:
        safefs.remove_tree(stage)
        raise
    return tuple(made)


# --- the flame graph ---------------------------------------------------------------------

FLAME_WIDTH = 760
ROW = 17
MIN_SHARE = 0.002  # frames narrower than this part of the whole are left out
FLAME_COLORS = {
    "project": "#e45756",  # the project's packages
    "scheduler": "#4c78a8",  # k8s.io/kubernetes and the framework's staging modules
    "runtime": "#bab0ac",  # the Go runtime and standard library
    "other": "#72b7b2",  # every other module
}


def _family(module: str, function: str) -> str:
    if owns(module, function):
        return "project"
    if function.startswith(("k8s.io/kubernetes/", "k8s.io/kube-scheduler/")):
        return "scheduler"
    slash = function.rfind("/", 0, function.find("(") if "(" in function else len(function))
    package = function[: slash + 1] + function[slash + 1 :].split(".", 1)[0]
    return "runtime" if "." not in package.split("/", 1)[0] else "other"  # the standard library's paths have no dot


class _Node:
    __slots__ = ("children", "value")

    def __init__(self) -> None:
        self.value = 0
        self.children: dict[str, _Node] = {}


def flame_svg(profile: CpuProfile, module: str, title: str) -> str:
    """The profile as a flame graph: callers below their callees, each frame as wide as
    its CPU; the project's frames in their own colour, a legend, each frame's name and
    share in its tooltip."""
    root = _Node()
    for frames, value in sorted(profile.stacks.items()):
        node = root
        node.value += value
        for frame in frames:
            node = node.children.setdefault(frame, _Node())
            node.value += value
    total = root.value or 1
    bars: list[tuple[int, float, float, str, int]] = []  # depth, x, width, name, value

    def walk(node: _Node, depth: int, x: float) -> None:
        for name in sorted(node.children):
            child = node.children[name]
            if child.value / total >= MIN_SHARE:
                width = FLAME_WIDTH * child.value / total
                bars.append((depth, x, width, name, child.value))
                walk(child, depth + 1, x)
                x += width
            else:
                x += FLAME_WIDTH * child.value / total

    walk(root, 1, 0.0)
    depth = max((b[0] for b in bars), default=0)
    top = 40
    height = top + (depth + 1) * ROW + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{FLAME_WIDTH}" height="{height}" '
        f'viewBox="0 0 {FLAME_WIDTH} {height}" role="img" aria-label="{escape(title)}" '
        'font-family="DejaVu Sans, Helvetica, Arial, sans-serif">',
        f'<text x="0" y="16" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    legend_x = 0.0
    for family, color in FLAME_COLORS.items():
        parts.append(f'<rect x="{legend_x:.0f}" y="24" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{legend_x + 14:.0f}" y="33" font-size="11">{family}</text>')
        legend_x += 110

    def y_of(level: int) -> float:
        return top + (depth - level + 1) * ROW

    parts.append(
        f'<rect x="0" y="{y_of(0):.0f}" width="{FLAME_WIDTH}" height="{ROW - 1}" fill="#ddd">'
        f"<title>all: {total / 1e9:.2f}s of CPU</title></rect>"
    )
    parts.append(f'<text x="4" y="{y_of(0) + 12:.0f}" font-size="11">all ({total / 1e9:.2f}s)</text>')
    for level, x, width, name, value in bars:
        y = y_of(level)
        share = 100 * value / total
        color = FLAME_COLORS[_family(module, name)]
        label = f"{name} {value / 1e9:.3f}s {share:.1f}%"
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.0f}" width="{max(width - 0.5, 0.5):.1f}" height="{ROW - 1}" fill="{color}">'
            f"<title>{escape(label)}</title></rect>"
        )
        fits = int((width - 6) / 6.5)
        if fits >= 4:
            short = name.rsplit("/", 1)[-1]
            text = short if len(short) <= fits else short[: fits - 1] + "…"
            parts.append(f'<text x="{x + 3:.1f}" y="{y + 12:.0f}" font-size="11">{escape(text)}</text>')
    parts.append(
        f'<text x="0" y="{height - 8}" font-size="11">frames under {MIN_SHARE:.1%} of the CPU are left out; '
        "hover a frame for its name and share</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts)
