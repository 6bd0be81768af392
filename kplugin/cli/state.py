"""Process-wide CLI settings (set from global flags)."""

debug = False
