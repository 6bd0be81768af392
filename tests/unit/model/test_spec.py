from __future__ import annotations

import pytest
from support.names import BAD_IMAGES, BAD_MODULES, BAD_PLUGIN_NAMES, BAD_PROJECT_NAMES

from kplugin.core.errors import UsageError
from kplugin.model import points
from kplugin.model.spec import (
    ExtensionPoint,
    ProjectSpec,
    parse_extension_points,
    plugin_name_from_project,
    retag_image,
    split_image,
    validate_image,
    validate_module_path,
    validate_plugin_name,
    validate_project_name,
    validate_scheduler_name,
)
from kplugin.model.versions import KubeVersion, resolve


@pytest.mark.parametrize("image", BAD_IMAGES)
def test_image_rejected(image: str) -> None:
    with pytest.raises(UsageError, match="is not an image reference with a tag"):
        validate_image(image)


@pytest.mark.parametrize(
    ("image", "repository", "tag"),
    [
        ("gpu-aware:0.1.0-k8s1.28.3", "gpu-aware", "0.1.0-k8s1.28.3"),
        ("localhost:5000/team/gpu:1.2", "localhost:5000/team/gpu", "1.2"),
        ("registry.example.com/a/b__c:v1_x", "registry.example.com/a/b__c", "v1_x"),
    ],
)
def test_image_accepted_and_split(image: str, repository: str, tag: str) -> None:
    assert validate_image(image) == image
    assert split_image(image) == (repository, tag)


@pytest.mark.parametrize(
    ("image", "moved"),
    [
        ("localhost:5000/k8s1.28.3/gpu:2.0-k8s1.28.3", "localhost:5000/k8s1.28.3/gpu:2.0-k8s1.37.2"),
        ("registry.example.com/gpu:v1.28.3", "registry.example.com/gpu:v1.37.2"),
        ("registry.example.com/gpu:2.0", "registry.example.com/gpu:2.0"),
        ("registry.example.com/gpu:1.28.30", "registry.example.com/gpu:1.28.30"),
    ],
)
def test_custom_image_follows_the_version_in_its_tag_only(image: str, moved: str) -> None:
    assert retag_image(image, KubeVersion(1, 28, 3), KubeVersion(1, 37, 2)) == moved


@pytest.mark.parametrize("name", BAD_PROJECT_NAMES)
def test_project_name_rejected(name: str) -> None:
    with pytest.raises(UsageError, match="project name") as err:
        validate_project_name(name)
    assert repr(name) in str(err.value)
    assert err.value.exit_code == 2


@pytest.mark.parametrize("name", ["gpu-aware", "a", "a" * 63, "gpu1", "1gpu"])
def test_project_name_accepted(name: str) -> None:
    assert validate_project_name(name) == name


@pytest.mark.parametrize("name", BAD_PLUGIN_NAMES)
def test_plugin_name_rejected(name: str) -> None:
    with pytest.raises(UsageError, match="plugin name") as err:
        validate_plugin_name(name)
    assert repr(name) in str(err.value)


def test_keyword_and_clash_are_named_as_such() -> None:
    with pytest.raises(UsageError, match="Go keyword"):
        validate_plugin_name("type")
    with pytest.raises(UsageError, match="clashes"):
        validate_plugin_name("Status")


@pytest.mark.parametrize(
    ("project", "plugin"),
    [("gpu-aware", "GpuAware"), ("cost", "Cost"), ("1gpu", "P1gpu"), ("a-b-c", "ABC")],
)
def test_plugin_name_derived(project: str, plugin: str) -> None:
    assert plugin_name_from_project(project) == plugin
    validate_plugin_name(plugin)


@pytest.mark.parametrize("module", BAD_MODULES)
def test_module_rejected(module: str) -> None:
    with pytest.raises(UsageError, match="module path"):
        validate_module_path(module)


@pytest.mark.parametrize("module", ["example.com/gpu-scheduler", "github.com/Org/Repo/v2", "a.b/c_d~e"])
def test_module_accepted(module: str) -> None:
    assert validate_module_path(module) == module


@pytest.mark.parametrize("name", ["default-scheduler", "kube-scheduler", "Upper", "", "a_b"])
def test_scheduler_name_rejected(name: str) -> None:
    with pytest.raises(UsageError, match="scheduler name"):
        validate_scheduler_name(name)


def test_extension_points_parsed_in_cycle_order() -> None:
    assert parse_extension_points("score, Filter,pre-filter,score") == (
        ExtensionPoint.PRE_FILTER,
        ExtensionPoint.FILTER,
        ExtensionPoint.SCORE,
    )


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("filter,bogus", "unknown extension point 'bogus'"),
        ("", "is empty"),
        (" , ", "is empty"),
        ("enqueueextensions", "enqueueextensions alone is never called"),
        ("score,enqueueextensions", "only matters for a plugin that rejects pods"),
    ],
)
def test_extension_points_rejected(value: str, why: str) -> None:
    with pytest.raises(UsageError, match=why):
        parse_extension_points(value)


def test_every_extension_point_parses() -> None:
    every = ",".join(ExtensionPoint)
    assert parse_extension_points(every) == tuple(ExtensionPoint)
    assert [p.config_name for p in ExtensionPoint][-1] is None  # EnqueueExtensions: no config key
    assert ExtensionPoint.BIND.interface == "BindPlugin"
    assert ExtensionPoint.ENQUEUE_EXTENSIONS.interface == "EnqueueExtensions"


def test_a_point_outside_the_targets_minors_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table's first and last minor of a point decide where kplugin new offers it
    (every point is in every minor kplugin supports today)."""
    row = points.POINTS[ExtensionPoint.PRE_ENQUEUE]
    ProjectSpec.create("gpu", resolve("1.28.3"), extension_points="preenqueue,filter")
    monkeypatch.setitem(points.POINTS, ExtensionPoint.PRE_ENQUEUE, row._replace(first="1.29"))
    with pytest.raises(UsageError, match=r"Kubernetes 1\.28\.3 has no preenqueue extension point"):
        ProjectSpec.create("gpu", resolve("1.28.3"), extension_points="preenqueue,filter")
    ProjectSpec.create("gpu", resolve("1.29"), extension_points="preenqueue,filter")
    monkeypatch.setitem(points.POINTS, ExtensionPoint.PRE_ENQUEUE, row._replace(last="1.28"))
    with pytest.raises(UsageError, match="has no preenqueue"):
        ProjectSpec.create("gpu", resolve("1.29"), extension_points="preenqueue,filter")


def test_project_spec_defaults() -> None:
    spec = ProjectSpec.create("gpu-aware", resolve("1.28.3"))
    assert spec.module == "example.com/gpu-aware"
    assert spec.scheduler_name == "gpu-aware"
    (plugin,) = spec.plugins
    assert plugin.name == "GpuAware"
    assert plugin.package == "gpuaware"
    assert plugin.extension_points == (
        ExtensionPoint.PRE_FILTER,
        ExtensionPoint.FILTER,
        ExtensionPoint.PRE_SCORE,
        ExtensionPoint.SCORE,
    )


def test_default_scheduler_name_cannot_be_default_lease() -> None:
    with pytest.raises(UsageError, match="scheduler name 'kube-scheduler'"):
        ProjectSpec.create("kube-scheduler", resolve("1.28.3"))
