"""Process-wide CLI settings (set from global flags) and the CLI's own signals."""

debug = False
# fd 1 was closed when kplugin started (it is kept on /dev/null so that no file kplugin
# opens takes its place); output meant for stdout is then an error.
stdout_closed = False


class QuietExit(Exception):
    """End with this exit code and no message (stdout's reader went away)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def silence_stdout() -> None:
    """Point fd 1 at /dev/null once writing to stdout failed (a full disk): what is left in
    its buffer, and the flush at exit, then go nowhere instead of failing again."""
    import os
    import sys

    stream = sys.stdout
    if stream is None:
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError):
        pass
