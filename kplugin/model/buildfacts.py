"""The facts of a build, in one place: the version stamp, where the binary lives in the
image, the user it runs as, the base images. build (local and Docker) uses them and the
project's Dockerfile and Makefile templates are rendered from them."""

from __future__ import annotations

from dataclasses import dataclass

from kplugin.model.project import Project
from kplugin.model.versions import KubeVersion

BINARY_IN_IMAGE = "/usr/local/bin/kube-scheduler"
DEFAULT_BASE_IMAGE = "gcr.io/distroless/static:nonroot"
NONROOT_UID = 65532
NONROOT_USER = f"{NONROOT_UID}:{NONROOT_UID}"
LABEL_K8S = "io.kplugin.kubernetes-version"
VERSION_PACKAGE = "k8s.io/component-base/version"
# the order the -X assignments are written in
VERSION_ORDER = tuple(f"{VERSION_PACKAGE}.{name}" for name in ("gitVersion", "gitMajor", "gitMinor", "gitTreeState"))


@dataclass(frozen=True)
class BuildFacts:
    """What a build of one Kubernetes version stamps and where it puts things."""

    version: KubeVersion
    go_image_tag: str

    @classmethod
    def of(cls, project: Project) -> BuildFacts:
        return cls(project.version, project.target.release.go_image_tag)

    @property
    def version_vars(self) -> dict[str, str]:
        """The -X assignments that make the binary report its Kubernetes version."""
        v = self.version
        return {
            f"{VERSION_PACKAGE}.gitVersion": v.tag,
            f"{VERSION_PACKAGE}.gitMajor": str(v.major),
            f"{VERSION_PACKAGE}.gitMinor": str(v.minor),
            f"{VERSION_PACKAGE}.gitTreeState": "clean",
        }

    @property
    def ldflags(self) -> str:
        return " ".join(["-s -w", *(f"-X {name}={value}" for name, value in self.version_vars.items())])

    @property
    def go_image(self) -> str:
        return f"golang:{self.go_image_tag}"
