package main

// Each plugin package registers itself in init(); one blank import includes it.
// kplugin add plugin inserts new imports above the scaffold marker.
import (
	_ "example.com/permit-gang/pkg/permitgang"
	// +kplugin:scaffold:plugin-imports
)
