"""One error hierarchy; the CLI maps it to exit codes in one place.

Messages name the inputs a user sets in the library's own terms: a ``Setting`` in a
message (``f"{Setting.K8S} {value!r} is not supported"``) is a placeholder, ``{k8s}``,
that ``str(err)`` spells with the setting's own words ("target") and
``err.render(names)`` with the caller's (the CLI's flags: kplugin.cli.flags). Notes and
hints the library returns as strings carry the same placeholders; ``render`` spells them.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import TypeVar


class Setting(StrEnum):
    """An input a user sets, as a placeholder in a message. Only these tokens are ever
    replaced, so other braces in a message (YAML, JSON, Go) stay as they are."""

    K8S = "{k8s}"
    API = "{api}"
    EXTENSION_POINTS = "{extension_points}"
    TEMPLATE = "{template}"
    FORCE = "{force}"
    NO_TIDY = "{no_tidy}"
    KEEP_EDITED = "{keep_edited}"
    BUILDER = "{builder}"
    PLATFORM = "{platform}"
    PUSH = "{push}"
    ARGS = "{args}"
    WEIGHT = "{weight}"
    API_VERSION = "{api_version}"
    SCHEDULER_NAME = "{scheduler_name}"
    DISABLE_DEFAULT = "{disable_default}"
    PERCENTAGE_OF_NODES = "{percentage_of_nodes}"
    FORMAT = "{format}"
    MERGE = "{merge}"
    BINARY = "{binary}"
    KUBECONFIG = "{kubeconfig}"
    SCENARIO = "{scenario}"
    ADMIN = "{admin}"
    WORKLOAD = "{workload}"
    CASE = "{case}"
    NODES = "{nodes}"
    PODS = "{pods}"
    ALLOW_EXISTING_PODS = "{allow_existing_pods}"
    CONTEXT = "{context}"
    RESCHEDULE = "{reschedule}"
    ANONYMIZE = "{anonymize}"
    SALT = "{salt}"
    PROJECT = "{project}"
    GROUP = "{group}"
    TYPE_VERSION = "{type_version}"
    PLURAL = "{plural}"
    PLUGIN = "{plugin}"
    FEATURE_GATES = "{feature_gates}"
    PROJECT_NAME = "{project_name}"
    CGO = "{cgo}"
    WITH = "{with}"

    @property
    def words(self) -> str:
        """How the library names the setting."""
        return _WORDS[self]


_WORDS = {
    Setting.K8S: "target",  # the Target a version resolves to
    Setting.API: "API mode",
    Setting.EXTENSION_POINTS: "extension points",
    Setting.TEMPLATE: "template",
    Setting.FORCE: "force=True",
    Setting.NO_TIDY: "tidy=False",
    Setting.KEEP_EDITED: "keep_edited=True",
    Setting.BUILDER: "builder",
    Setting.PLATFORM: "platform",
    Setting.PUSH: "push",
    Setting.ARGS: "Args file",
    Setting.WEIGHT: "score weight",
    Setting.API_VERSION: "configuration apiVersion",
    Setting.SCHEDULER_NAME: "scheduler name",
    Setting.DISABLE_DEFAULT: "disabled default plugin",
    Setting.PERCENTAGE_OF_NODES: "percentageOfNodesToScore",
    Setting.FORMAT: "output format",
    Setting.MERGE: "configuration to merge into",
    Setting.BINARY: "kube-scheduler binary",
    Setting.KUBECONFIG: "kubeconfig",
    Setting.SCENARIO: "scenario",
    Setting.ADMIN: "admin=True",
    Setting.WORKLOAD: "workload",
    Setting.CASE: "workload case",
    Setting.NODES: "node count",
    Setting.PODS: "pod count",
    Setting.ALLOW_EXISTING_PODS: "allow_existing_pods=True",
    Setting.CONTEXT: "kubeconfig context",
    Setting.RESCHEDULE: "reschedule selector",
    Setting.ANONYMIZE: "anonymize",
    Setting.SALT: "salt",
    Setting.PROJECT: "project",
    Setting.GROUP: "API group",
    Setting.TYPE_VERSION: "API type version",
    Setting.PLURAL: "resource plural",
    Setting.PLUGIN: "plugin",
    Setting.FEATURE_GATES: "feature gate settings",
    Setting.PROJECT_NAME: "project name",
    Setting.CGO: "a build with cgo",
    Setting.WITH: "the parts to add",
}


def render(text: str, names: Mapping[Setting, str] | None = None) -> str:
    """``text`` with each setting placeholder spelled by ``names`` (a setting it lacks,
    and every one without it: the setting's own words); nothing else in it changes."""
    if "{" not in text:
        return text
    for setting in Setting:
        if setting.value in text:
            text = text.replace(setting.value, (names or {}).get(setting, setting.words))
    return text


class KpluginError(Exception):
    """Base of every error kplugin reports to the user.

    ``exit_code`` is what the CLI exits with; the message is one line naming the bad
    value and, where there is one, the fix. ``str(err)`` names settings in the
    library's words, ``err.render(names)`` in the caller's; ``err.message`` keeps the
    placeholders (to carry the error into another message or a note).
    """

    exit_code = 1

    def __init__(self, message: str, details: Sequence[str] = ()) -> None:
        super().__init__(message)
        # Lines worth showing under the message, e.g. the compiler's own errors.
        self.details = list(details)

    @property
    def message(self) -> str:
        return super().__str__()

    def __str__(self) -> str:
        return render(self.message)

    def render(self, names: Mapping[Setting, str]) -> str:
        return render(self.message, names)

    def relocated(self, old: object, new: object) -> KpluginError:
        """This error with every mention of the path ``old`` (a temporary copy kplugin
        made) replaced by ``new`` (what the user knows)."""
        old_text, new_text = str(old), str(new)
        self.args = tuple(a.replace(old_text, new_text) if isinstance(a, str) else a for a in self.args)
        self.details = [d.replace(old_text, new_text) for d in self.details]
        return self


class UsageError(KpluginError):
    """Bad input from the user (a flag value, a name, a version): exit 2."""

    exit_code = 2


class OperationError(KpluginError):
    """The input was fine but the operation failed (a file, a build): exit 1."""

    exit_code = 1


class ToolError(OperationError, subprocess.CalledProcessError):
    """An external command (go, docker) failed.

    It is also a ``CalledProcessError`` so callers that know subprocess can treat it as
    one; it carries the command, its exit code and the tail of its output.
    """

    def __init__(self, cmd: Sequence[str], returncode: int, output: str, summary: str) -> None:
        subprocess.CalledProcessError.__init__(self, returncode, list(cmd), output=output)
        self.summary = summary
        self.details: list[str] = []

    @property
    def message(self) -> str:
        return self.summary

    def relocated(self, old: object, new: object) -> KpluginError:
        self.summary = self.summary.replace(str(old), str(new))
        self.details = [d.replace(str(old), str(new)) for d in self.details]
        return self

    @property
    def tail(self) -> str:
        lines = (self.output or "").strip().splitlines()
        return "\n".join(lines[-20:])


Choice = TypeVar("Choice", bound=StrEnum)


def parse_choice(kind: type[Choice], value: str, setting: Setting) -> Choice:
    """``value`` as a member of ``kind``, the values of the option ``setting`` (an enum
    from the command line's edge on); anything else is a UsageError naming the choices."""
    try:
        return kind(value)
    except ValueError:
        raise UsageError(f"{setting} {value!r}: choose from {', '.join(kind)}") from None
