"""Kubernetes versions and the version catalog (data, not code branches).

The records here are NamedTuples: immutable, compared and hashed field by field like a
frozen dataclass, and cheap to define, which every kplugin start-up does (a frozen
dataclass costs about 0.6 ms to define; render-config's start-up is a benchmark target).
KubeVersion orders as (major, minor, patch)."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import NamedTuple

from kplugin.core.errors import Setting, UsageError
from kplugin.model.apifacts import ApiFacts

# ASCII digits only (\d would take '٨'), and short: no version has a 10-digit part; a
# pre-release (1.38.0-beta.0) only with its patch
_VERSION_RE = re.compile(
    r"v?(?P<major>0|[1-9][0-9]{0,2})\.(?P<minor>0|[1-9][0-9]{0,3})"
    r"(?:\.(?P<patch>0|[1-9][0-9]{0,5})(?:-(?P<pre>(?:alpha|beta|rc)\.(?:0|[1-9][0-9]{0,2})))?)?",
    re.ASCII,
)


class KubeVersion(NamedTuple):
    """An exact Kubernetes release, e.g. 1.28.3, or a pre-release of one, 1.38.0-beta.0
    (``pre``: "beta.0"; a pre-release is never compared with its release by order)."""

    major: int
    minor: int
    patch: int
    pre: str = ""

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}" + (f"-{self.pre}" if self.pre else "")

    @property
    def tag(self) -> str:
        """The k8s.io/kubernetes module version: v1.28.3."""
        return f"v{self}"

    @property
    def staging_tag(self) -> str:
        """The version every staging module (k8s.io/api, ...) is tagged with: v0.28.3."""
        return f"v0.{self.minor}.{self.patch}" + (f"-{self.pre}" if self.pre else "")

    @property
    def minor_key(self) -> str:
        return f"{self.major}.{self.minor}"


class MinorRelease(NamedTuple):
    """What generation needs to know about one Kubernetes minor."""

    key: str
    newest_patch: int
    go_directive: str
    go_version: str
    config_api_versions: tuple[str, ...]
    staging_modules: tuple[str, ...]
    facts: ApiFacts
    api_changes: tuple[str, ...] = ()
    # the minor's newest pre-release ("beta.0") while it has no release; "" once it has
    prerelease: str = ""
    # the toolchain go.mod names (`toolchain go1.27.3`, the Go Kubernetes builds the minor
    # with) where the minor needs a Go newer than the one every released minor builds with
    toolchain: str = ""
    # its go.mod's godebug directive ("default=go1.27"), "" when it has none
    godebug: str = ""

    @property
    def supported(self) -> bool:
        return self.facts.templates

    @property
    def released(self) -> bool:
        """Whether the minor has a release (not only a pre-release)."""
        return not self.prerelease

    @property
    def newest(self) -> KubeVersion:
        major, minor = (int(x) for x in self.key.split("."))
        return KubeVersion(major, minor, self.newest_patch, self.prerelease)

    @property
    def go_image_tag(self) -> str:
        """Tag of the official Go builder image: the Go minor Kubernetes built this with."""
        return ".".join(self.go_version.split(".")[:2])


class Target(NamedTuple):
    """A resolved ``--k8s`` value: the exact version and its minor's catalog entry."""

    version: KubeVersion
    release: MinorRelease
    requested: str
    patch_was_implied: bool
    beyond_catalog: bool

    @property
    def facts(self) -> ApiFacts:
        """The framework API of this exact version (the minor's, at this patch)."""
        return self.release.facts.at_patch(self.version.patch)


@cache
def catalog() -> dict[str, MinorRelease]:
    raw = json.loads(resources.files("kplugin").joinpath("data/catalog.json").read_text())
    releases = {}
    for key, entry in raw["minors"].items():
        releases[key] = MinorRelease(
            key=key,
            newest_patch=entry["newest_patch"],
            go_directive=entry["go_directive"],
            go_version=entry["go_version"],
            config_api_versions=tuple(entry["config_api_versions"]),
            staging_modules=tuple(entry["staging_modules"]),
            facts=ApiFacts.from_catalog(entry),
            api_changes=tuple(entry.get("api_changes", ())),
            prerelease=entry.get("prerelease", ""),
            toolchain=entry.get("toolchain", ""),
            godebug=entry.get("godebug", ""),
        )
    return releases


def supported_releases() -> list[MinorRelease]:
    return sorted((r for r in catalog().values() if r.supported), key=lambda r: r.newest.minor)


def supported_range() -> str:
    """The supported minors, and the pre-release of one without a release yet."""
    released = [r for r in supported_releases() if r.released]
    text = released[0].key if len(released) == 1 else f"{released[0].key} to {released[-1].key}"
    early = [str(r.newest) for r in supported_releases() if not r.released]
    return text + "".join(f", and the pre-release {v}" for v in early)


def newest_release() -> MinorRelease:
    """The newest supported minor that has a release (a pre-release's minor is not one)."""
    return [r for r in supported_releases() if r.released][-1]


def default_target() -> Target:
    """The newest release kplugin supports: never a pre-release."""
    return resolve(newest_release().key)


def newest_target(key: str) -> Target:
    """The newest version of the catalogued minor ``key``, a pre-release included (for
    tools that walk the minors; ``--k8s X.Y`` refuses a minor's pre-release)."""
    return resolve(str(catalog()[key].newest))


def catalogued_range() -> str:
    keys = sorted(catalog(), key=lambda k: tuple(int(x) for x in k.split(".")))
    return f"{keys[0]} to {keys[-1]}"


def resolve(value: str, need_templates: bool = True, where: str = Setting.K8S) -> Target:
    """Resolve ``X.Y.Z``, ``vX.Y.Z`` or ``X.Y`` against the catalog, or raise UsageError.

    Generation needs a minor with templates; rendering a configuration needs only the
    catalog's data (``need_templates=False``)."""
    if not isinstance(value, str):
        raise UsageError(f"{where} {value!r} must be a string such as '1.30.4'; quote it (YAML reads 1.30 as 1.3)")
    text = value.strip()
    match = _VERSION_RE.fullmatch(text) if len(text) <= 32 else None
    if not match:
        shown = value if len(value) <= 40 else value[:37] + "..."
        raise UsageError(
            f"{where} {shown!r} is not a Kubernetes version; use X.Y.Z, vX.Y.Z or X.Y (supported: {supported_range()})"
        )
    major, minor = int(match["major"]), int(match["minor"])
    release = catalog().get(f"{major}.{minor}")
    if release is None or (need_templates and not release.supported):
        known = supported_range() if need_templates else catalogued_range()
        raise UsageError(f"{where} {value}: Kubernetes {major}.{minor} is not supported; supported: {known}")
    implied = match["patch"] is None
    patch = release.newest_patch if implied else int(match["patch"])
    pre = match["pre"] or ""
    if pre and (release.released or (patch, pre) != (release.newest_patch, release.prerelease)):
        offered = f"the pre-release {release.newest}" if not release.released else f"its release {release.newest}"
        raise UsageError(f"{where} {value}: kplugin knows no pre-release {major}.{minor}.{patch}-{pre}; use {offered}")
    if not pre and not release.released:
        raise UsageError(
            f"{where} {value}: Kubernetes {major}.{minor} has no release yet, only the pre-release "
            f"{release.newest}; pin it explicitly: {where} {release.newest}"
        )
    return Target(
        version=KubeVersion(major, minor, patch, pre),
        release=release,
        requested=value,
        patch_was_implied=implied,
        beyond_catalog=patch > release.newest_patch,
    )
