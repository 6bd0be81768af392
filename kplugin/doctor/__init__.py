"""``kplugin doctor``: the checks of what silently breaks scheduler plugins in production.

Each check yields Problems, each naming a rule of the catalog (doctor.rules: a stable id,
a severity, why it breaks and how to fix it) and where (file:line) and what exactly is
wrong. The core never prints; the CLI shows a table or JSON and exits 1 on any error.
"""

from kplugin.doctor.checks import as_json, list_rules, run
from kplugin.doctor.context import Finding
from kplugin.doctor.rules import ERROR, INFO, RULES, WARNING, Rule

__all__ = ["ERROR", "INFO", "RULES", "WARNING", "Finding", "Rule", "as_json", "list_rules", "run"]
