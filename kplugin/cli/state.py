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
