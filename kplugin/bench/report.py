"""--report: the benchmark as pictures. Throughput over time for both profiles (each
run's 1-second samples), and the latency of the project's plugins at each extension
point beside what every plugin at that point takes in each profile. An .html report
also carries the tables; an .svg is the pictures alone. Hand-written SVG, no
dependencies, the same bytes for the same results.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from kplugin.bench import cpuprofile, results
from kplugin.bench.outcome import BenchOutcome
from kplugin.bench.plan import BASELINE, PROJECT

WIDTH = 760
COLORS = {BASELINE: "#4c78a8", PROJECT: "#e45756"}
PERCENTILE_COLORS = ("#72b7b2", "#f58518", "#b279a2")  # p50, p90, p99
FONT = 'font-family="DejaVu Sans, Helvetica, Arial, sans-serif"'


def _nice_step(top: float, ticks: int = 5) -> float:
    if top <= 0 or math.isnan(top):
        return 1.0
    raw = top / ticks
    power = 10.0 ** math.floor(math.log10(raw))
    return next(float(m * power) for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def _num(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text if text not in ("-0", "") else "0"


def _axes(x0: float, y0: float, w: float, h: float, top: float, unit: str) -> tuple[list[str], float]:
    """Horizontal grid lines with labels; returns the SVG parts and the scale's top."""
    step = _nice_step(top)
    top = step * max(1, math.ceil(top / step))
    parts = [f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="#fafafa" stroke="#ccc"/>']
    ticks = round(top / step)
    for i in range(ticks + 1):
        y = y0 + h - h * i / ticks
        parts.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + w}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        parts.append(
            f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" {FONT}>{_num(step * i)}</text>'
        )
    parts.append(
        f'<text x="{x0 - 44}" y="{y0 + h / 2:.1f}" font-size="11" {FONT} text-anchor="middle" '
        f'transform="rotate(-90 {x0 - 44} {y0 + h / 2:.1f})">{escape(unit)}</text>'
    )
    return parts, top


def throughput_chart(outcome: BenchOutcome, y: float = 0) -> tuple[str, float]:
    """Each run's throughput samples over the seconds since its first bound pod."""
    height, x0, top_pad, w, h = 300.0, 70.0, 44.0, WIDTH - 70.0 - 150.0, 220.0
    y0 = y + top_pad
    runs = [r for r in outcome.runs if r.points]
    top = max((rate for r in runs for _, rate in r.points), default=1.0) * 1.1
    right = max((t for r in runs for t, _ in r.points), default=1.0) or 1.0
    parts = [
        f'<text x="20" y="{y + 22}" font-size="14" font-weight="bold" {FONT}>'
        f"Throughput over time: {escape(outcome.workload.title)}</text>"
    ]
    grid, top = _axes(x0, y0, w, h, top, "pods/s")
    parts += grid
    x_step = _nice_step(right, 6)
    right = x_step * max(1, math.ceil(right / x_step))
    for i in range(round(right / x_step) + 1):
        x = x0 + w * i * x_step / right
        parts.append(
            f'<text x="{x:.1f}" y="{y0 + h + 16}" text-anchor="middle" font-size="11" {FONT}>{_num(i * x_step)}</text>'
        )
    parts.append(
        f'<text x="{x0 + w / 2}" y="{y0 + h + 32}" text-anchor="middle" font-size="11" {FONT}>'
        "seconds since the first measured pod was bound</text>"
    )
    for run in runs:
        color = COLORS[run.profile]
        dash = "" if run.repeat == 1 else f' stroke-dasharray="{2 + 2 * run.repeat},3"'
        coords = [(x0 + w * t / right, y0 + h - h * rate / top) for t, rate in run.points]
        if len(coords) == 1:
            cx, cy = coords[0]
            parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="{color}"/>')
        else:
            path = " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy in coords)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
            for cx, cy in coords:
                parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="2.5" fill="{color}"/>')
    legend_x = x0 + w + 16
    for i, kind in enumerate((BASELINE, PROJECT)):
        figures = results.figures(outcome, kind)
        ly = y0 + 10 + i * 44
        parts.append(f'<rect x="{legend_x}" y="{ly - 9}" width="14" height="4" fill="{COLORS[kind]}"/>')
        parts.append(f'<text x="{legend_x + 20}" y="{ly - 3}" font-size="12" {FONT}>{kind}</text>')
        parts.append(
            f'<text x="{legend_x + 20}" y="{ly + 12}" font-size="11" {FONT} fill="#555">'
            f"avg {_num(figures.throughput.average)} pods/s</text>"
        )
    ratio = results.throughput_ratio(outcome)
    shown = "-" if math.isnan(ratio) else f"{ratio:.2f}"
    parts.append(f'<text x="{legend_x}" y="{y0 + 110}" font-size="12" {FONT}>ratio {shown}</text>')
    return "\n".join(parts), height


def _bars(
    title: str, subtitle: str, groups: Sequence[tuple[str, Sequence[tuple[str, str, float]]]], unit: str, y: float
) -> tuple[str, float]:
    """Horizontal bars: groups of (label, [(legend, color, value)])."""
    rows = sum(len(bars) for _, bars in groups)
    bar_h, gap, x0 = 12.0, 10.0, 230.0
    w = WIDTH - x0 - 80.0
    h = rows * bar_h + len(groups) * gap
    y0 = y + 52
    parts = [
        f'<text x="20" y="{y + 22}" font-size="14" font-weight="bold" {FONT}>{escape(title)}</text>',
        f'<text x="20" y="{y + 38}" font-size="11" fill="#555" {FONT}>{escape(subtitle)}</text>',
    ]
    values = [v for _, bars in groups for _, _, v in bars if not math.isnan(v)]
    top = max(values, default=1.0) * 1.05 or 1.0
    step = _nice_step(top)
    top = step * max(1, math.ceil(top / step))
    for i in range(round(top / step) + 1):
        x = x0 + w * i * step / top
        parts.append(f'<line x1="{x:.1f}" y1="{y0 - 4}" x2="{x:.1f}" y2="{y0 + h}" stroke="#e4e4e4"/>')
        parts.append(
            f'<text x="{x:.1f}" y="{y0 + h + 14}" text-anchor="middle" font-size="11" {FONT}>{_num(i * step)}</text>'
        )
    parts.append(
        f'<text x="{x0 + w / 2}" y="{y0 + h + 30}" text-anchor="middle" font-size="11" {FONT}>{escape(unit)}</text>'
    )
    cursor = y0
    for label, bars in groups:
        parts.append(
            f'<text x="{x0 - 8}" y="{cursor + bar_h * len(bars) / 2 + 4:.1f}" text-anchor="end" font-size="12" '
            f"{FONT}>{escape(label)}</text>"
        )
        for legend, color, value in bars:
            length = 0.0 if math.isnan(value) else w * value / top
            parts.append(
                f'<rect x="{x0}" y="{cursor:.1f}" width="{length:.1f}" height="{bar_h - 2}" fill="{color}">'
                f"<title>{escape(legend)}: {_num(value)} {escape(unit)}</title></rect>"
            )
            parts.append(
                f'<text x="{x0 + length + 4:.1f}" y="{cursor + bar_h - 3:.1f}" font-size="10" {FONT} fill="#444">'
                f"{escape(legend)} {'-' if math.isnan(value) else _num(value)}</text>"
            )
            cursor += bar_h
        cursor += gap
    return "\n".join(parts), h + 92


def plugin_chart(outcome: BenchOutcome, y: float) -> tuple[str, float]:
    """The project's plugins at each extension point: p50, p90 and p99 of the sampled
    calls, in microseconds."""
    proj = results.figures(outcome, PROJECT)
    groups = [
        (
            f"{plugin} {point}",
            [
                (name, color, getattr(summary, key) * 1000)
                for name, color, key in zip(
                    ("p50", "p90", "p99"), PERCENTILE_COLORS, ("perc50", "perc90", "perc99"), strict=True
                )
            ],
        )
        for (plugin, point), summary in proj.plugins.items()
    ]
    if not groups:
        note = "no sampled call of the project's plugins was recorded"
        return f'<text x="20" y="{y + 22}" font-size="13" {FONT}>{note}</text>', 40
    return _bars(
        "The project's plugins, per call",
        "scheduler_plugin_execution_duration_seconds, recorded in about 10% of scheduling cycles",
        groups,
        "µs per call",
        y,
    )


def extension_point_chart(outcome: BenchOutcome, y: float) -> tuple[str, float]:
    """Every plugin at an extension point together, per scheduling cycle (p99), in each
    profile: where the project's plugins add to the cycle."""
    base, proj = results.figures(outcome, BASELINE), results.figures(outcome, PROJECT)
    ours = {point for _, point in proj.plugins} | {"Filter", "Score"}
    points = [p for p in proj.extension_points if p in ours]
    groups = [
        (
            point,
            [
                (f"{kind} p99", COLORS[kind], figures.extension_points[point].perc99)
                for kind, figures in ((BASELINE, base), (PROJECT, proj))
                if point in figures.extension_points
            ],
        )
        for point in points
    ]
    if not groups:
        return "", 0
    return _bars(
        "Every plugin at the project's extension points, per scheduling cycle (p99)",
        "scheduler_framework_extension_point_duration_seconds, baseline and project profiles",
        groups,
        "ms per scheduling cycle",
        y,
    )


def svg(outcome: BenchOutcome) -> str:
    parts, y = [], 0.0
    for chart in (throughput_chart, plugin_chart, extension_point_chart):
        body, height = chart(outcome, y)
        if body:
            parts.append(body)
            y += height + 10
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{y:.0f}" viewBox="0 0 {WIDTH} {y:.0f}">\n'
        f'<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(parts) + "\n</svg>\n"
    )


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html(outcome: BenchOutcome) -> str:
    settings = outcome.settings
    w = outcome.workload
    context = [
        ("project", f"{outcome.project} ({', '.join(outcome.plugins)})"),
        ("Kubernetes", outcome.kubernetes),
        ("workload", f"{w.title} from {w.source}: {w.nodes} nodes, {w.measured_pods} of {w.pods} pods measured"),
        ("cluster", outcome.mode),
        ("profiles", f"baseline {outcome.scheduler_names[BASELINE]}, project {outcome.scheduler_names[PROJECT]}"),
        ("runs", ", ".join(f"{r.profile} #{r.repeat}" for r in outcome.runs) + f" ({settings.repeat} repeat(s))"),
        (
            "machine load",
            ", ".join(f"{r.load_average[0]:.1f}→{r.load_average[1]:.1f}" for r in outcome.runs)
            + " (1-minute load average at each measured phase's start and end)",
        ),
    ]
    plugin_rows = results.plugin_rows(outcome)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>kplugin bench: {escape(outcome.project)} on {escape(w.title)}</title>",
            "<style>body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:2em;max-width:60em;color:#222}"
            "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ddd;padding:4px 10px}"
            "td:not(:first-child){text-align:right}th{background:#f3f3f3}dt{font-weight:bold}"
            "li{margin:.2em 0}</style></head><body>",
            f"<h1>kplugin bench: {escape(outcome.project)}</h1>",
            "<dl>" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in context) + "</dl>",
            svg(outcome),
            "<h2>Figures</h2>",
            _table(("", "baseline", "project", "project/baseline"), results.rows(outcome)),
            "<h2>The project's plugins (sampled cycles, µs)</h2>" if plugin_rows else "",
            _table(("plugin", "extension point", "calls", "p50", "p90", "p99"), plugin_rows) if plugin_rows else "",
            *_profiles(outcome),
            "<h2>Harness</h2>",
            "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in results.harness_lines(outcome)) + "</ul>",
            "<ul>" + "".join(f"<li>{escape(n)}</li>" for n in outcome.notices) + "</ul>" if outcome.notices else "",
            "</body></html>",
            "",
        ]
    )


def _profiles(outcome: BenchOutcome) -> list[str]:
    """The CPU profiles' table and a flame graph per profile (the project's first)."""
    rows = results.profile_rows(outcome)
    if not rows:
        return []
    parts = [
        "<h2>Where the scheduler's CPU went (pprof, measured phases)</h2>",
        _table(("", "baseline", "project"), rows),
    ]
    by_kind = {p.kind: p for p in outcome.cpu_profiles}
    module = outcome.module
    for kind in (PROJECT, BASELINE):
        if kind in by_kind:
            title = f"{kind} profile ({outcome.scheduler_names[kind]}): {by_kind[kind].path.name}"
            parts.append(f'<figure class="flame">{cpuprofile.flame_svg(by_kind[kind], module, title)}</figure>')
    return parts


def render(outcome: BenchOutcome, suffix: str) -> str:
    """The report for a file ending in ``suffix`` (.html, .htm or .svg)."""
    return svg(outcome) if suffix == ".svg" else html(outcome)
