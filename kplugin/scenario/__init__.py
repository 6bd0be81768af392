"""The scenario a replay starts from, as kplugin e2e reads it and kplugin snapshot writes
it (format: the document, its defaults and its reading; state: the nodes, pods and
objects; reader: their checks; steps: the changes after the first placements; schema: the
JSON Schema of the format; entries: Kubernetes objects as scenario entries; source: the
header a snapshot writes)."""
