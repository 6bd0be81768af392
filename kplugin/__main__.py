from kplugin.cli import main

main()
