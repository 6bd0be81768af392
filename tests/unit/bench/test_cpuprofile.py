"""bench's CPU profiles, read and told: profile.proto as pprof writes it (encoded here
from the format's definition, packed and unpacked fields, inlined frames), the
project's share split by the point the framework called it at, and the flame graph.
Recording them from a real scheduler: tests/integration/test_integration_bench.py."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from kplugin.bench import cpuprofile
from kplugin.bench.cpuprofile import CpuProfile, method_name, owns, shares
from kplugin.core.errors import OperationError

MODULE = "example.com/gpu"


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, value: int | bytes) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _packed(values: list[int]) -> bytes:
    return b"".join(_varint(v) for v in values)


def profile_bytes(stacks: list[tuple[list[list[str]], int]], packed: bool = True) -> bytes:
    """A CPU profile: each sample's locations leaf first, each location's functions
    innermost first (inlined calls), and its CPU in nanoseconds."""
    strings = ["", "samples", "count", "cpu", "nanoseconds"]
    functions: dict[str, int] = {}
    locations: list[list[int]] = []
    samples = []

    def string(text: str) -> int:
        if text not in strings:
            strings.append(text)
        return strings.index(text)

    for locs, nanos in stacks:
        ids = []
        for inlined in locs:
            fids = [functions.setdefault(name, len(functions) + 1) for name in inlined]
            locations.append(fids)
            ids.append(len(locations))
        samples.append((ids, [1, nanos]))
    out = _field(1, _field(1, 1) + _field(2, 2)) + _field(1, _field(1, 3) + _field(2, 4))
    for ids, values in samples:
        if packed:
            out += _field(2, _field(1, _packed(ids)) + _field(2, _packed(values)))
        else:
            out += _field(2, b"".join(_field(1, i) for i in ids) + b"".join(_field(2, v) for v in values))
    for number, fids in enumerate(locations, 1):
        out += _field(4, _field(1, number) + b"".join(_field(4, _field(1, f) + _field(2, 10)) for f in fids))
    for name, number in functions.items():
        out += _field(5, _field(1, number) + _field(2, string(name)))
    return out + b"".join(_field(6, s.encode()) for s in strings)


FILTER = f"{MODULE}/pkg/gpu.(*Gpu).Filter"
DEMAND = f"{MODULE}/pkg/gpu.(*Gpu).demand"
RUN_FILTER = "k8s.io/kubernetes/pkg/scheduler/framework/runtime.(*frameworkImpl).runFilterPlugin"
SCHEDULE = "k8s.io/kubernetes/pkg/scheduler.(*Scheduler).scheduleOne"


@pytest.mark.parametrize("packed", [True, False])
def test_stacks_are_read_outermost_first_with_inlined_calls_as_frames(tmp_path: Path, packed: bool) -> None:
    data = profile_bytes(
        [
            # leaf first: demand inlined into Filter, called by runFilterPlugin
            ([[DEMAND, FILTER], [RUN_FILTER], [SCHEDULE]], 30_000_000),
            ([["runtime.mallocgc"], [FILTER], [RUN_FILTER], [SCHEDULE]], 10_000_000),
            ([[DEMAND, FILTER], [RUN_FILTER], [SCHEDULE]], 20_000_000),
        ],
        packed,
    )
    path = tmp_path / "p.pb.gz"
    path.write_bytes(gzip.compress(data))
    assert cpuprofile.read(path) == {
        (SCHEDULE, RUN_FILTER, FILTER, DEMAND): 50_000_000,
        (SCHEDULE, RUN_FILTER, FILTER, "runtime.mallocgc"): 10_000_000,
    }


def test_a_file_that_is_no_cpu_profile_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "p.pb.gz"
    for broken in (b"\x1f\x8bnot gzip", gzip.compress(b"x" * 100)[:12] + b"\xff" * 30, b"\x0a\xff"):
        path.write_bytes(broken)  # no gzip, a gzip body cut and damaged (zlib's error), a cut message
        with pytest.raises(OperationError, match="not a CPU profile pprof wrote"):
            cpuprofile.read(path)
    heap = profile_bytes([([["main.main"]], 1)]).replace(b"cpu", b"mem")
    path.write_bytes(heap)
    with pytest.raises(OperationError, match="no cpu samples"):
        cpuprofile.read(path)


def test_method_names_and_the_modules_own_packages() -> None:
    assert method_name(FILTER) == "Filter"
    assert method_name(f"{MODULE}/pkg/gpu.(*Gpu).Score.func1") == "Score"
    assert method_name(f"{MODULE}/internal/fw.adapter.NormalizeScore") == "NormalizeScore"  # a value receiver
    assert method_name(f"{MODULE}/pkg/gpu.(*Gpu).Filter-fm") == "Filter"  # a method value
    assert method_name(f"{MODULE}/pkg/gpu.demand.func2") == "demand"
    assert method_name(f"{MODULE}/pkg/gpu.isSchedulableAfterNodeChange") == "isSchedulableAfterNodeChange"
    assert owns(MODULE, FILTER) and owns(MODULE, f"{MODULE}.init")
    assert not owns(MODULE, "example.com/gpu-extra/pkg.F") and not owns(MODULE, RUN_FILTER)


def test_the_projects_share_is_split_by_the_point_that_called_it() -> None:
    stacks = {
        (SCHEDULE, RUN_FILTER, FILTER, DEMAND): 40,  # flat in the project, at Filter
        (SCHEDULE, RUN_FILTER, FILTER, "runtime.mallocgc"): 10,  # cumulative only
        (SCHEDULE, "runtime.(*frameworkImpl).runScoreExtension", f"{MODULE}/pkg/gpu.(*Gpu).NormalizeScore"): 5,
        (SCHEDULE, "runtime.(*frameworkImpl).RunPreFilterExtensionAddPod", f"{MODULE}/pkg/gpu.(*Gpu).AddPod"): 3,
        ("k8s.io/kubernetes/pkg/scheduler/backend/queue.hint", f"{MODULE}/pkg/gpu.isSchedulableAfter"): 2,
        (SCHEDULE, "k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources.(*Fit).Filter"): 30,
        ("runtime.gcBgMarkWorker", "runtime.gcDrain"): 10,  # the collector: on no plugin's stack
    }
    got = shares(stacks, MODULE)
    assert (got.total, got.cumulative, got.flat, got.gc) == (100, 60, 50, 10)
    assert got.points == {"Filter": 50, "Score": 5, "PreFilter": 3, cpuprofile.OTHER: 2}
    own = f"{MODULE}/pkg/gpu"
    assert got.functions == {DEMAND: 40, f"{own}.(*Gpu).NormalizeScore": 5, f"{own}.(*Gpu).AddPod": 3,
                             f"{own}.isSchedulableAfter": 2}  # fmt: skip


def test_every_point_a_profile_names_is_a_point_of_the_table() -> None:
    from kplugin.model.points import POINTS

    names = {p.go_name for p in POINTS}
    assert set(cpuprofile.METHOD_POINTS.values()) <= names
    assert cpuprofile.METHOD_POINTS["NormalizeScore"] == "Score"
    assert cpuprofile.METHOD_POINTS["Less"] == "QueueSort"
    assert cpuprofile.METHOD_POINTS["NormalizePlacementScore"] == "PlacementScore"


def _profile(stacks: dict[tuple[str, ...], int]) -> CpuProfile:
    return CpuProfile("project", Path("/p/project.pb.gz"), (), stacks, shares(stacks, MODULE))


def test_the_flame_graph_draws_wide_frames_in_their_family_colour() -> None:
    stacks = {
        (SCHEDULE, RUN_FILTER, FILTER, DEMAND): 600,
        (SCHEDULE, "runtime.mallocgc"): 399,
        (SCHEDULE, "k8s.io/narrow.<b>"): 1,  # 0.1%: left out
        (SCHEDULE, "k8s.io/wide.F[go.shape.<a&b>]"): 200,  # wide, with markup in its name
    }
    svg = cpuprofile.flame_svg(_profile(stacks), MODULE, "project & co")
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert svg == cpuprofile.flame_svg(_profile(dict(reversed(stacks.items()))), MODULE, "project & co")
    assert "project &amp; co" in svg
    assert f"<title>{DEMAND} 0.000s 50.0%</title>" in svg
    assert "narrow" not in svg
    assert "F[go.shape.&lt;a&amp;b&gt;]" in svg and "<a&b>" not in svg
    project, scheduler, runtime = (cpuprofile.FLAME_COLORS[k] for k in ("project", "scheduler", "runtime"))
    assert svg.count(f'fill="{project}"') == 2 + 1  # Filter, demand and the legend
    assert svg.count(f'fill="{scheduler}"') == 2 + 1  # scheduleOne, runFilterPlugin and the legend
    assert svg.count(f'fill="{runtime}"') == 1 + 1
    assert svg.count(f'fill="{cpuprofile.FLAME_COLORS["other"]}"') == 1 + 1  # k8s.io/wide


@pytest.mark.integration  # go tool pprof (built on a cold Go cache's first use)
def test_profiles_that_cannot_be_merged_leave_nothing_behind(tmp_path: Path) -> None:
    """A chunk go tool pprof cannot read: one error (run.run makes it a notice and keeps
    the benchmark's figures), and neither the directory nor its stage is left."""
    chunk = tmp_path / "run-1-project-0000.pb.gz"
    chunk.write_bytes(b"not a profile")
    target = tmp_path / "profiles"
    with pytest.raises(OperationError, match="merging CPU profiles"):
        cpuprofile.collect([("project", 1, (chunk,))], target, MODULE)
    assert sorted(p.name for p in tmp_path.iterdir()) == [chunk.name]
