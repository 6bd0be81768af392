"""``python -m kplugin``: the same as the kplugin command."""

try:
    from kplugin.launch import main
except KeyboardInterrupt:  # Ctrl-C in the first milliseconds, before main() can report it
    import sys

    sys.stderr.write("kplugin: interrupted\n")
    sys.exit(130)

main()
