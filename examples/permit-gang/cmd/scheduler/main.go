// Command scheduler is kube-scheduler (the version go.mod pins) with this project's plugins
// compiled in. Deploy it as a second scheduler (see deploy/) or in place of the default.
// It also carries kplugin's reporting plugin (internal/rejections), which no profile runs
// unless its configuration enables it (kplugin e2e does).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // JSON log format, as upstream
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"example.com/permit-gang/internal/rejections"
	"example.com/permit-gang/pkg/registry"
)

func main() {
	command := app.NewSchedulerCommand(options()...)
	os.Exit(cli.Run(command))
}

// options returns one app.WithPlugin option per registered plugin, in name order, then
// kplugin's reporting plugin's.
func options() []app.Option {
	names := registry.Names()
	opts := make([]app.Option, 0, len(names)+1)
	for _, name := range names {
		opts = append(opts, app.WithPlugin(name, registry.Factory(name)))
	}
	return append(opts, app.WithPlugin(rejections.Name, rejections.New))
}
