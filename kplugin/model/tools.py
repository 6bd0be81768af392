"""The Go tools that check what kplugin generates, each pinned to one version.

golangci-lint runs in every generated project (its Makefile's ``lint`` target installs
this version); helm and actionlint check the generated chart and CI workflow in
kplugin's own CI, and kwok plays a user's cluster of fake nodes there. All are installed
with ``go install PACKAGE@VERSION`` from the Go module proxy (``python -m
kplugin.maintainer.tools``), so a machine needs only Go.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GoTool:
    """A command ``go install`` builds: ``package`` is its main package in ``module``."""

    name: str
    module: str
    package: str
    version: str

    @property
    def install_ref(self) -> str:
        return f"{self.package}@{self.version}"


GOLANGCI_LINT = GoTool(
    "golangci-lint",
    "github.com/golangci/golangci-lint/v2",
    "github.com/golangci/golangci-lint/v2/cmd/golangci-lint",
    "v2.15.0",
)
HELM = GoTool("helm", "helm.sh/helm/v4", "helm.sh/helm/v4/cmd/helm", "v4.3.2")
ACTIONLINT = GoTool(
    "actionlint", "github.com/rhysd/actionlint", "github.com/rhysd/actionlint/cmd/actionlint", "v1.7.12"
)

# controller-gen writes the CRDs of a project's own API types (make generate): one version
# for every Kubernetes minor, as it reads the types' source and markers only
CONTROLLER_GEN = GoTool(
    "controller-gen",
    "sigs.k8s.io/controller-tools",
    "sigs.k8s.io/controller-tools/cmd/controller-gen",
    "v0.23.0",
)

# kwok keeps fake nodes Ready and runs the pods bound to them: kplugin's own tests run bench
# and e2e against a local control plane with it, as a user's kwok cluster would be
KWOK = GoTool("kwok", "sigs.k8s.io/kwok", "sigs.k8s.io/kwok/cmd/kwok", "v0.8.0")

TOOLS = {tool.name: tool for tool in (GOLANGCI_LINT, HELM, ACTIONLINT, KWOK)}
