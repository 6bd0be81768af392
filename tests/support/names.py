"""Names, module paths and image references kplugin must refuse (the spec's tests and the CLI's)."""

from __future__ import annotations

BAD_PROJECT_NAMES = [
    "gpu_aware",
    "GPU",
    "-gpu",
    "gpu-",
    "a" * 64,
    "a/b",
    "..",
    '"gpu"',
    "gpu'x",
    "gpu aware",
    "gpü",
    "",
]
BAD_PLUGIN_NAMES = [
    "gpuAware",
    "1Gpu",
    "Gpu-Aware",
    "Gpu Aware",
    "type",
    "func",
    "Status",
    "Framework",
    "Handle",
    "NodeResourcesFit",
    "Gpü",
    "",
]
BAD_MODULES = [
    "gpu",
    "example.com//x",
    "/example.com/x",
    "example.com/x/",
    "Example.COM/x",
    "example.com/a b",
    "example.com/ü",
    "example.com/.hidden",
    "",
    "-x.com/y",
]

BAD_IMAGES = [
    "gpu",  # no tag: kplugin tags its build with the reference
    "Gpu:1",
    "gpu:",
    "gpu:-1",
    "gpu:1;rm -rf /",
    "gpu@sha256:" + "a" * 64,
    "registry.example.com/:1",
    "gpu:1\nimage: evil",
    "gpu:" + "a" * 129,
    "",
]
