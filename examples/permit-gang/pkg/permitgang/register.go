package permitgang

import (
	"k8s.io/apimachinery/pkg/runtime"

	"example.com/permit-gang/pkg/registry"
)

// init adds the plugin to the project's registry; cmd/scheduler turns the registry into
// app.WithPlugin options. Importing this package is all it takes to include the plugin.
func init() {
	registry.Register(Name, New)
	// kplugin reads the Args' fields and defaults, and checks args files, through this
	registry.RegisterArgs(Name, func(obj runtime.Object) (runtime.Object, error) { return DecodeArgs(obj) })
}
