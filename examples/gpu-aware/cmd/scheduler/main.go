// Command scheduler is kube-scheduler (the version go.mod pins) with this project's plugins
// compiled in. Deploy it as a second scheduler (see deploy/) or in place of the default.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // JSON log format, as upstream
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"example.com/gpu-scheduler/pkg/registry"
)

func main() {
	command := app.NewSchedulerCommand(registry.Options()...)
	os.Exit(cli.Run(command))
}
