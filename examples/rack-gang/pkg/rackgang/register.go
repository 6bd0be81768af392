package rackgang

import (
	"example.com/rack-gang/pkg/registry"
)

// init adds the plugin to the project's registry; cmd/scheduler turns the registry into
// app.WithPlugin options. Importing this package is all it takes to include the plugin.
func init() {
	registry.Register(Name, New)
}
