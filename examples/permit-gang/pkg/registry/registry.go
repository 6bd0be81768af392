// Package registry collects the project's plugins. Each plugin package calls Register
// from its init(), and RegisterArgs when it takes args; cmd/scheduler turns Factories()
// into app.WithPlugin options. It does not import the scheduler command itself, so that
// tools (kplugin's args reader) can list the plugins without linking all of it.
package registry

import (
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// ArgsDecoder turns pluginConfig args (a *runtime.Unknown, or nil when the configuration
// has none) into the plugin's defaulted, validated Args, exactly as the plugin's factory
// does. kplugin runs it to learn the Args' fields and defaults and to check args files.
type ArgsDecoder func(obj runtime.Object) (runtime.Object, error)

var (
	mu        sync.Mutex
	factories = map[string]frameworkruntime.PluginFactory{}
	decoders  = map[string]ArgsDecoder{}
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

// RegisterArgs records how the plugin registered under name decodes its args. A plugin
// that takes no args does not call it.
func RegisterArgs(name string, decode ArgsDecoder) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := decoders[name]; dup {
		panic(fmt.Sprintf("args of scheduler plugin %q registered twice", name))
	}
	decoders[name] = decode
}

// Args returns the args decoder of the plugin registered under name, or nil.
func Args(name string) ArgsDecoder {
	mu.Lock()
	defer mu.Unlock()
	return decoders[name]
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

// Factory returns the factory registered under name, or nil.
func Factory(name string) frameworkruntime.PluginFactory {
	mu.Lock()
	defer mu.Unlock()
	return factories[name]
}
