from __future__ import annotations

import pytest

from kplugin.core.errors import UsageError
from kplugin.model.versions import KubeVersion, catalog, default_target, resolve, supported_range


@pytest.mark.parametrize("value", ["1.28.3", "v1.28.3", " 1.28.3 "])
def test_exact_versions(value: str) -> None:
    target = resolve(value)
    assert target.version == KubeVersion(1, 28, 3)
    assert target.version.tag == "v1.28.3"
    assert target.version.staging_tag == "v0.28.3"
    assert not target.patch_was_implied
    assert not target.beyond_catalog


def test_minor_means_newest_catalogued_patch() -> None:
    target = resolve("1.28")
    assert target.patch_was_implied
    assert target.version == target.release.newest
    assert target.version.patch >= 15


def test_patch_beyond_catalog_is_allowed_and_flagged() -> None:
    target = resolve("1.28.99")
    assert target.beyond_catalog
    assert str(target.version) == "1.28.99"


@pytest.mark.parametrize("value", ["1.27.0", "1.99.0", "0.28.3", "2.28.0"])
def test_unsupported_minor(value: str) -> None:
    with pytest.raises(UsageError, match="not supported") as err:
        resolve(value)
    assert supported_range() in str(err.value)


@pytest.mark.parametrize("value", ["1.28.x", "1.28.3.4", "latest", "", "1", "v", "1.028.3", "1.28.-1"])
def test_malformed(value: str) -> None:
    with pytest.raises(UsageError, match="not a Kubernetes version") as err:
        resolve(value)
    assert repr(value) in str(err.value)
    assert supported_range() in str(err.value)


def test_default_is_newest_supported() -> None:
    target = default_target()
    assert target.release.supported


def test_catalog_1_28_is_complete() -> None:
    release = catalog()["1.28"]
    assert release.supported
    assert release.go_directive == "1.20"
    assert release.config_api_versions == ("v1", "v1beta3")
    # Every staging module k8s.io/kubernetes v1.28 replaces with ./staging.
    expected = {
        "api",
        "apiextensions-apiserver",
        "apimachinery",
        "apiserver",
        "cli-runtime",
        "client-go",
        "cloud-provider",
        "cluster-bootstrap",
        "code-generator",
        "component-base",
        "component-helpers",
        "controller-manager",
        "cri-api",
        "csi-translation-lib",
        "dynamic-resource-allocation",
        "endpointslice",
        "kms",
        "kube-aggregator",
        "kube-controller-manager",
        "kube-proxy",
        "kube-scheduler",
        "kubectl",
        "kubelet",
        "legacy-cloud-providers",
        "metrics",
        "mount-utils",
        "pod-security-admission",
        "sample-apiserver",
        "sample-cli-plugin",
        "sample-controller",
    }
    assert set(release.staging_modules) == {f"k8s.io/{m}" for m in expected}
    assert list(release.staging_modules) == sorted(release.staging_modules)


def test_catalog_covers_every_minor_to_1_37() -> None:
    minors = sorted(catalog(), key=lambda k: int(k.split(".")[1]))
    assert minors[0] == "1.28"
    assert {f"1.{m}" for m in range(28, 38)} <= set(minors)
    for key, release in catalog().items():
        assert release.go_directive, key
        assert release.go_version, key
        assert release.staging_modules, key


def test_versions_say_where_hints_and_signatures_apply(kplugin) -> None:  # type: ignore[no-untyped-def]
    """Read from each minor's kube_features.go and framework: hints off by default up to
    1.31 (on in 1.28.0-1.28.4, off in 1.28's newer patches), on from 1.32, locked on 1.34-1.36, the gate gone in 1.37;
    SignPod from 1.35."""
    import json

    run = kplugin("versions", "--json")
    rows = {r["minor"]: r for r in json.loads(run.stdout)}
    assert [rows[m]["queueing_hints"] for m in ("1.28", "1.31", "1.32", "1.34", "1.37")] == [
        "off",
        "off",
        "beta-on",
        "ga",
        "always",
    ]
    assert "retried on every event" in rows["1.31"]["queueing_hints_note"]
    # 1.28's first patches had the gate on (beta) until kubernetes PR 122291 turned it off in 1.28.5
    assert {m: r["queueing_hints_early_patches"] for m, r in rows.items() if r["queueing_hints_early_patches"]} == {
        "1.28": "1.28.0-1.28.4"
    }
    assert "used by default in 1.28.0-1.28.4" in rows["1.28"]["queueing_hints_note"]
    assert [m for m, r in rows.items() if r["sign_pod"]] == ["1.35", "1.36", "1.37", "1.38"]


def test_versions_say_where_prequeueinghints_apply(kplugin) -> None:  # type: ignore[no-untyped-def]
    """ClusterEventWithHint.PreQueueingHintFn from 1.37 (kube-scheduler framework/types.go);
    gate SchedulerPreQueueingHints alpha and off in 1.37, beta and on in 1.38
    (kube_features.go of v1.38.0-beta.0). The gate is e2e's to turn on at 1.37 only."""
    import json

    from kplugin.model.apifacts import PRE_QUEUEING_HINTS_GATE

    run = kplugin("versions", "--json", "--all")
    rows = {r["minor"]: r for r in json.loads(run.stdout)}
    assert {m: r["pre_queueing_hints"] for m, r in rows.items() if r["pre_queueing_hints"] != "none"} == {
        "1.37": "alpha-off",
        "1.38": "beta-on",
    }
    gates = {r.key: r.facts.pre_hints_gate for r in catalog().values()}
    assert {m: g for m, g in gates.items() if g} == {"1.37": PRE_QUEUEING_HINTS_GATE}
    assert [r.key for r in catalog().values() if r.facts.pre_hints] == ["1.37", "1.38"]
    text = kplugin("versions").stdout
    assert "PreQHints" in text and "alpha-off" in text and "SchedulerPreQueueingHints" in text


# --- pre-releases (issue 22) ----------------------------------------------------------------


def prerelease_minor() -> str:
    return next(r.key for r in catalog().values() if not r.released)


def test_a_prerelease_is_pinned_only_explicitly() -> None:
    minor = prerelease_minor()
    release = catalog()[minor]
    assert release.supported and release.prerelease == "beta.0"
    target = resolve(f"{minor}.0-beta.0")
    assert str(target.version) == f"{minor}.0-beta.0"
    assert target.version.tag == f"v{minor}.0-beta.0"
    assert target.version.staging_tag == f"v0.{minor.split('.')[1]}.0-beta.0"
    assert not target.beyond_catalog
    for value in (minor, f"{minor}.0", f"v{minor}.0"):
        with pytest.raises(UsageError) as err:
            resolve(value)
        assert str(err.value) == (
            f"target {value}: Kubernetes {minor} has no release yet, only the pre-release {minor}.0-beta.0; "
            f"pin it explicitly: target {minor}.0-beta.0"
        )
    with pytest.raises(UsageError, match=f"no pre-release {minor}.0-rc.0; use the pre-release {minor}.0-beta.0"):
        resolve(f"{minor}.0-rc.0")
    with pytest.raises(UsageError, match=r"no pre-release 1\.37\.0-beta\.0; use its release 1\.37"):
        resolve("1.37.0-beta.0")
    with pytest.raises(UsageError, match="not a Kubernetes version"):
        resolve(f"{minor}-beta.0")  # a pre-release names its patch


def test_the_default_is_never_a_prerelease() -> None:
    target = default_target()
    assert target.release.released and not target.version.pre
    assert target.release.key != prerelease_minor()
    assert supported_range().endswith(f", and the pre-release {prerelease_minor()}.0-beta.0")


def test_a_minor_that_needs_a_newer_go_names_its_toolchain() -> None:
    release = catalog()[prerelease_minor()]
    assert release.go_directive == "1.27.0" and release.godebug == "default=go1.27"
    assert release.toolchain == f"go{release.go_version}" == "go1.27.3"
    assert all(not r.toolchain for r in catalog().values() if r.released)  # every release builds with Go 1.26
