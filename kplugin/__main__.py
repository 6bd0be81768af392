"""``python -m kplugin``: the same as the kplugin command."""

from kplugin.launch import main

main()
