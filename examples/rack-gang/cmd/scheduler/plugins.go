package main

// Each plugin package registers itself in init(); one blank import includes it.
// kplugin add plugin inserts new imports above the scaffold marker.
import (
	_ "example.com/rack-gang/pkg/rackgang"
	// +kplugin:scaffold:plugin-imports
)
