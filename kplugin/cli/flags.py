"""The one place the library's settings get their command-line spelling.

Library messages name a setting through a placeholder (kplugin.core.errors.Setting);
the CLI prints them with these flags, so users read the option they type.
"""

from __future__ import annotations

from kplugin.core.errors import KpluginError, Setting
from kplugin.core.errors import render as _render

FLAGS: dict[Setting, str] = {
    Setting.K8S: "--k8s",
    Setting.API: "--api",
    Setting.EXTENSION_POINTS: "--extension-points",
    Setting.TEMPLATE: "--template",
    Setting.FORCE: "--force",
    Setting.NO_TIDY: "--no-tidy",
    Setting.KEEP_EDITED: "--keep-edited",
    Setting.BUILDER: "--builder",
    Setting.PLATFORM: "--platform",
    Setting.PUSH: "--push",
    Setting.ARGS: "--args",
    Setting.WEIGHT: "--weight",
    Setting.API_VERSION: "--api-version",
    Setting.SCHEDULER_NAME: "--scheduler-name",
    Setting.DISABLE_DEFAULT: "--disable-default",
    Setting.PERCENTAGE_OF_NODES: "--percentage-of-nodes-to-score",
    Setting.FORMAT: "--format",
    Setting.MERGE: "--merge",
    Setting.BINARY: "--binary",
    Setting.KUBECONFIG: "--kubeconfig",
    Setting.SCENARIO: "--scenario",
    Setting.ADMIN: "--admin",
    Setting.WORKLOAD: "--workload",
    Setting.CASE: "--case",
    Setting.NODES: "--nodes",
    Setting.PODS: "--pods",
    Setting.ALLOW_EXISTING_PODS: "--allow-existing-pods",
    Setting.CONTEXT: "--context",
    Setting.RESCHEDULE: "--reschedule",
    Setting.ANONYMIZE: "--anonymize",
    Setting.SALT: "--salt",
    Setting.PROJECT: "--project",
    Setting.GROUP: "--group",
    Setting.TYPE_VERSION: "--version",
    Setting.PLURAL: "--plural",
    Setting.PLUGIN: "--plugin",
    Setting.FEATURE_GATES: "--feature-gates",
    Setting.PROJECT_NAME: "--name",
    Setting.CGO: "--cgo",
    Setting.WITH: "--with",
}


def render(text: str) -> str:
    """A library note, hint or message with its settings spelled as flags."""
    return _render(text, FLAGS)


def message(err: KpluginError) -> str:
    """An error's message with its settings spelled as flags."""
    return err.render(FLAGS)
