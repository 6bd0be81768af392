"""go.mod as adopt needs it: the module path, the go directive, the requirements and the
replacements (read here rather than with ``go mod edit -json``, which refuses a go.mod
that needs a newer Go than the machine's)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from kplugin.core import safefs
from kplugin.core.errors import UsageError

KUBERNETES = "k8s.io/kubernetes"
_COMMENT = re.compile(r"//.*$")
_BLOCK = re.compile(r"^(require|replace|exclude|retract|tool|godebug)\s*\($")
_DIRECTIVE = re.compile(r"^(module|go|toolchain|require|replace)\s+(.*)$")


class Replacement(NamedTuple):
    path: str  # the module or directory it is replaced with
    version: str  # empty for a directory

    @property
    def directory(self) -> bool:
        """A replacement by a directory (``=> ./gpuinfo``), not by a module version."""
        return self.path in (".", "..") or self.path.startswith(("./", "../", "/"))

    @property
    def outside(self) -> bool:
        """A replacement by a directory outside the module's own (``=> ../x``, ``=> /x``)."""
        return self.path == ".." or self.path.startswith(("../", "/"))


class GoMod(NamedTuple):
    module: str
    go: str
    requires: dict[str, str]  # path -> version
    replaces: dict[str, Replacement]  # old path -> new

    @property
    def kubernetes(self) -> str | None:
        """The k8s.io/kubernetes version the module builds with: its replacement's, or
        its requirement's (vX.Y.Z)."""
        replaced = self.replaces.get(KUBERNETES)
        if replaced is not None and replaced.path == KUBERNETES and replaced.version:
            return replaced.version
        return self.requires.get(KUBERNETES)

    def missing_replaces(self, staging: tuple[str, ...]) -> tuple[str, ...]:
        """The staging modules go.mod does not replace (k8s.io/kubernetes requires them at
        v0.0.0: without a replace for each, the module does not build)."""
        return tuple(m for m in staging if m not in self.replaces)


def _unquote(token: str) -> str:
    return token[1:-1] if len(token) > 1 and token[0] == token[-1] and token[0] in '"`' else token


def _entry(kind: str, text: str, mod: GoMod) -> None:
    words = [_unquote(w) for w in text.split()]
    if kind == "require" and len(words) >= 2:
        mod.requires[words[0]] = words[1]
    elif kind == "replace" and "=>" in words:
        arrow = words.index("=>")
        new = words[arrow + 1 :]
        if arrow >= 1 and new:
            mod.replaces[words[0]] = Replacement(new[0], new[1] if len(new) > 1 else "")


def parse(text: str, where: str = "go.mod") -> GoMod:
    """The directives of a go.mod's text that adopt reads."""
    mod = GoMod(module="", go="", requires={}, replaces={})
    block: str | None = None
    for raw in text.splitlines():
        line = _COMMENT.sub("", raw).strip()
        if not line:
            continue
        if block is not None:
            if line == ")":
                block = None
            else:
                _entry(block, line, mod)
            continue
        if (opened := _BLOCK.match(line)) is not None:
            block = opened[1]
            continue
        if (directive := _DIRECTIVE.match(line)) is None:
            continue
        kind, rest = directive[1], directive[2].strip()
        if kind == "module":
            mod = mod._replace(module=_unquote(rest))
        elif kind == "go":
            mod = mod._replace(go=rest)
        else:
            _entry(kind, rest, mod)
    if not mod.module:
        raise UsageError(f"{where} names no module (no module line); adopt reads a Go module's go.mod")
    return mod


_STAGING_VERSION = re.compile(r"v0\.(?P<minor>\d+)\.")
_KUBERNETES_VERSION = re.compile(r"v1\.(?P<minor>\d+)\.")


def foreign_pins(graph: str, main: str, staging: tuple[str, ...], minor: int) -> list[str]:
    """The dependencies whose go.mod requires Kubernetes (k8s.io/kubernetes or a staging
    module) at another minor than ``minor``, read in ``go mod graph``'s output: what the
    replace set overrides for them, each as 'dependency requires module version'. The
    main module and Kubernetes' own modules are left out."""
    own = {*staging, KUBERNETES}
    found = []
    for line in graph.splitlines():
        parts = line.split()
        if len(parts) != 2 or "@" not in parts[1]:
            continue
        source, (module, version) = parts[0], parts[1].split("@", 1)
        if source == main or source.split("@")[0] in own or module not in own:
            continue
        pattern = _KUBERNETES_VERSION if module == KUBERNETES else _STAGING_VERSION
        match = pattern.match(version)
        if match is not None and int(match["minor"]) != minor:
            found.append(f"{source} requires {module} {version}")
    return sorted(set(found))


def read(root: Path) -> GoMod:
    """ROOT/go.mod, read; a repository without one is not a Go module kplugin can adopt."""
    path = root / "go.mod"
    if not path.is_file():
        raise UsageError(
            f"{root} has no go.mod: kplugin adopts the Go module that builds a kube-scheduler; "
            "give the directory that holds its go.mod"
        )
    return parse(safefs.read_text(path, "go.mod"), str(path))
