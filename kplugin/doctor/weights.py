"""Check 8: score weights are whole numbers the scheduler takes, and not 0."""

from __future__ import annotations

from collections.abc import Iterator

from kplugin.doctor.context import Context, line_of, plugin_entries, profiles
from kplugin.doctor.rules import Problem
from kplugin.model.points import POINTS
from kplugin.model.schedconfig import MAX_WEIGHT

# where a plugin entry carries a weight: score, placementScore, and multiPoint
WEIGHTED = {"multiPoint", *(row.config for row in POINTS.values() if row.weighted)}


def check_weights(ctx: Context) -> Iterator[Problem]:
    """8. score weights valid."""
    for profile in profiles(ctx):
        for point, kind, entry, entries, index in plugin_entries(ctx, profile):
            if kind != "enabled" or point not in WEIGHTED or "weight" not in entry:
                continue
            weight = entry["weight"]
            name = entry.get("name")
            if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0 or weight > MAX_WEIGHT:
                yield Problem(
                    "weight-invalid",
                    ctx.config_path,
                    line_of(entries, index),
                    f"{name}: weight {weight!r} is not a whole number from 1 to {MAX_WEIGHT}",
                )
            elif weight == 0:
                yield Problem(
                    "weight-zero",
                    ctx.config_path,
                    line_of(entries, index),
                    f"{name}: weight 0 is silently treated as 1",
                )
