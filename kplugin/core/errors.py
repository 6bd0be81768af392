"""One error hierarchy; the CLI maps it to exit codes in one place."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence


class KpluginError(Exception):
    """Base of every error kplugin reports to the user.

    ``exit_code`` is what the CLI exits with; the message is one line naming the bad
    value and, where there is one, the fix.
    """

    exit_code = 1

    def __init__(self, message: str, details: Sequence[str] = ()) -> None:
        super().__init__(message)
        # Lines worth showing under the message, e.g. the compiler's own errors.
        self.details = list(details)

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

    def __str__(self) -> str:
        return self.summary

    def relocated(self, old: object, new: object) -> KpluginError:
        self.summary = self.summary.replace(str(old), str(new))
        self.details = [d.replace(str(old), str(new)) for d in self.details]
        return self

    @property
    def tail(self) -> str:
        lines = (self.output or "").strip().splitlines()
        return "\n".join(lines[-20:])
