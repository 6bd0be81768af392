"""What doctor's checks share: the project, target, configuration and binary they look
at, the files they read (each read once, unreadable ones reported), and walks of the
scheduler configuration that report values of the wrong type."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kplugin.core import safefs, yamlio
from kplugin.core.errors import Setting, UsageError
from kplugin.doctor.rules import BY_ID, Problem, Severity
from kplugin.model.project import Project
from kplugin.model.versions import Target


@dataclass(frozen=True)
class Finding:
    rule: str
    check: str
    severity: Severity
    file: str
    line: int | None
    what: str
    why: str
    fix: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass
class Context:
    project: Project
    target: Target
    config_path: Path
    binary: Path
    # --config was given: it may be anywhere (a default config is a project file like any other)
    config_given: bool = False
    # what the file helpers (text, load, mapping...) found, besides what the checks yield
    problems: list[Problem] = field(default_factory=list)
    _yaml_cache: dict[Path, Any] = field(default_factory=dict)

    def rel(self, path: Path) -> str:
        candidates = [path.absolute()]  # a symlink in the project by its own name
        with suppress(OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
            candidates.append(path.resolve())
        for candidate in candidates:
            if candidate.is_relative_to(self.project.root):
                return str(candidate.relative_to(self.project.root))
        return str(path)

    def report(self, rule: str, path: Path, line: int | None, what: str, **params: Any) -> None:
        self.problems.append(Problem(rule, path, line, what, **params))

    def finding(self, problem: Problem) -> Finding:
        rule = BY_ID[problem.rule]
        # a setting a rule names stays a placeholder (kplugin.core.errors.render spells it)
        params = {**{s.name.lower(): s.value for s in Setting}, **problem.params}
        why, fix = rule.why.format(**params), rule.fix.format(**params)
        return Finding(rule.id, rule.check, rule.severity, self.rel(problem.path), problem.line, problem.what, why, fix)

    def text(self, path: Path, limit: int = safefs.SMALL_FILE * 16) -> str | None:
        """A file's text, None when it is missing or unreadable (an unreadable file is a
        finding: a directory, symlink out of the project, FIFO, non-UTF-8 text, more than
        ``limit`` bytes...)."""
        if safefs.lstat_mode(path) is None:
            return None
        absolute = path.absolute()
        try:
            if absolute.is_relative_to(self.project.root) and not (self.config_given and path == self.config_path):
                relative = absolute.relative_to(self.project.root).as_posix()
                data = safefs.read_project_file(self.project.root, relative, limit)
                return None if data is None else safefs.decode(data, "file", path)
            return safefs.read_text(path, "file", limit)
        except UsageError as err:
            self.report("unreadable-file", path, None, err.message)
            return None

    def load(self, path: Path, many: bool = False) -> Any:
        """Round-trip YAML (keeps line numbers); None when the file is missing."""
        key = path.absolute()
        if key not in self._yaml_cache:
            from ruamel.yaml import YAML
            from ruamel.yaml.error import YAMLError

            text = self.text(path, safefs.SMALL_FILE)  # YAML: round-trip loading takes ~15 s per MB
            self._yaml_cache[key] = None
            if text is not None:
                try:
                    yamlio.parse(text, str(self.rel(path)), path=path, every_document=many)  # plain data, not deep
                    yaml = YAML()
                    self._yaml_cache[key] = list(yaml.load_all(text)) if many else yaml.load(text)
                except UsageError as err:
                    self.report("invalid-yaml", path, None, err.message)
                except YAMLError as err:
                    mark = getattr(err, "problem_mark", None)
                    self.report("invalid-yaml", path, mark.line + 1 if mark else None, "not valid YAML")
        return self._yaml_cache[key]

    def mapping(self, value: Any, path: Path, line: int | None, what: str) -> dict[Any, Any]:
        """``value`` when it is a mapping (or missing: empty); else a finding and {}."""
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        self.report(
            "wrong-type",
            path,
            line,
            f"{what} must be a mapping, not {yamlio.describe(value)}",
            field=what,
            kind="a mapping",
        )
        return {}

    def sequence(self, value: Any, path: Path, line: int | None, what: str) -> list[Any]:
        """``value`` when it is a list (or missing: empty); else a finding and []."""
        if value is None:
            return []
        if isinstance(value, list):
            return value
        self.report(
            "wrong-type", path, line, f"{what} must be a list, not {yamlio.describe(value)}", field=what, kind="a list"
        )
        return []

    def string(self, value: Any, path: Path, line: int | None, what: str, default: str) -> str | None:
        """``value`` when it is a string (``default`` when missing); else a finding and None."""
        if value is None:
            return default
        if isinstance(value, str):
            return value
        self.report(
            "wrong-type",
            path,
            line,
            f"{what} must be a string, not {yamlio.describe(value)}",
            field=what,
            kind="a string (quote it)",
        )
        return None

    @property
    def config(self) -> Any:
        return self.load(self.config_path)


def line_of(node: Any, key: str | int | None = None) -> int | None:
    """1-based line of a ruamel node, or of one of its keys / items."""
    lc = getattr(node, "lc", None)
    if lc is None:
        return None
    try:
        if key is None:
            return int(lc.line) + 1
        if isinstance(key, int):
            return int(lc.item(key)[0]) + 1
        return int(lc.key(key)[0]) + 1
    except (KeyError, IndexError, TypeError):
        return int(lc.line) + 1


def profiles(ctx: Context) -> list[dict[Any, Any]]:
    """The configuration's profiles that are mappings (the others are findings)."""
    config = ctx.config
    if not isinstance(config, dict):
        return []
    listed = ctx.sequence(config.get("profiles"), ctx.config_path, line_of(config, "profiles"), "profiles")
    return [
        ctx.mapping(profile, ctx.config_path, line_of(listed, i), f"profiles[{i}]") for i, profile in enumerate(listed)
    ]


def plugin_entries(ctx: Context, profile: dict[Any, Any]) -> Iterator[tuple[str, str, dict[Any, Any], Any, int]]:
    """(extension point, enabled|disabled, entry, list node, index) of a profile."""
    path = ctx.config_path
    plugins = ctx.mapping(profile.get("plugins"), path, line_of(profile, "plugins"), "plugins")
    for point, section in plugins.items():
        section = ctx.mapping(section, path, line_of(plugins, point), f"plugins.{point}")
        for kind in ("enabled", "disabled"):
            entries = ctx.sequence(section.get(kind), path, line_of(section, kind), f"plugins.{point}.{kind}")
            for i, entry in enumerate(entries):
                entry = ctx.mapping(entry, path, line_of(entries, i), f"plugins.{point}.{kind}[{i}]")
                yield str(point), kind, entry, entries, i


def plugin_configs(ctx: Context, profile: dict[Any, Any]) -> Iterator[tuple[int, dict[Any, Any], Any]]:
    """(index, entry, list node) of a profile's pluginConfig."""
    path = ctx.config_path
    configs = ctx.sequence(profile.get("pluginConfig"), path, line_of(profile, "pluginConfig"), "pluginConfig")
    for j, entry in enumerate(configs):
        yield j, ctx.mapping(entry, path, line_of(configs, j), f"pluginConfig[{j}]"), configs


def plain(node: Any) -> Any:
    """A round-trip YAML node as plain data (what the scheduler would decode)."""
    import io

    from ruamel.yaml import YAML

    out = io.StringIO()
    YAML().dump(node, out)
    return YAML(typ="safe").load(out.getvalue())
