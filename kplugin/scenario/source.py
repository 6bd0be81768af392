"""A scenario's ``source``, the header a snapshot writes: what it could not read of the
cluster (``unread``), so that a replay says what it lacks."""

from __future__ import annotations

from typing import Any

UNREAD = "unread"  # the header's key: the kinds the snapshot could not read, and why


def unread_text(unread: dict[str, str]) -> str:
    """ "csinodes (forbidden), deviceclasses (not served)": sorted, one string (a
    scenario's source holds strings, numbers and booleans)."""
    return ", ".join(f"{plural} ({why})" for plural, why in sorted(unread.items()))


def unread_note(source: dict[str, Any]) -> str | None:
    """What a replay of a snapshot lacks, from its header, or None."""
    unread = source.get(UNREAD)
    if not isinstance(unread, str) or not unread:
        return None
    return f"the snapshot could not read {unread[:500]}: the replay has none of those objects"
