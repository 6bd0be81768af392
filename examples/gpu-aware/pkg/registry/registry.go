// Package registry collects the project's plugins. Each plugin package calls Register
// from its init(); cmd/scheduler passes Options() to app.NewSchedulerCommand.
package registry

import (
	"fmt"
	"sort"
	"sync"

	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

var (
	mu        sync.Mutex
	factories = map[string]frameworkruntime.PluginFactory{}
)

// Register adds a plugin factory under name. Registering a name twice is a programming
// error and panics at start-up, before the scheduler runs.
func Register(name string, factory frameworkruntime.PluginFactory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := factories[name]; dup {
		panic(fmt.Sprintf("scheduler plugin %q registered twice", name))
	}
	factories[name] = factory
}

// Names returns the registered plugin names, sorted.
func Names() []string {
	mu.Lock()
	defer mu.Unlock()
	names := make([]string, 0, len(factories))
	for name := range factories {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Options returns one app.WithPlugin option per registered plugin, in name order.
func Options() []app.Option {
	names := Names()
	mu.Lock()
	defer mu.Unlock()
	opts := make([]app.Option, 0, len(names))
	for _, name := range names {
		opts = append(opts, app.WithPlugin(name, factories[name]))
	}
	return opts
}
