package rackgang

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"example.com/rack-gang/internal/schedtest"
)

// benchHarness is a 100-node cluster, every node labelled and partly used, with the
// plugin enabled (and others, e.g. one to compare it with).
func benchHarness(b *testing.B, others ...schedtest.Plugin) (*schedtest.Harness, []string) {
	b.Helper()
	var nodes []*v1.Node
	var pods []*v1.Pod
	var names []string
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("node-%03d", i)
		names = append(names, name)
		nodes = append(nodes, schedtest.Node(name, map[v1.ResourceName]string{v1.ResourceCPU: "16"}, map[string]string{poolLabel: "a"}))
		pods = append(pods, schedtest.Pod("used-"+name, name, map[v1.ResourceName]string{v1.ResourceCPU: fmt.Sprintf("%dm", i*100)}))
	}
	plugin := schedtest.Plugin{Name: Name, Factory: New, Args: "", Extensions: extensions}
	h, err := schedtest.New(context.Background(), nodes, pods, append([]schedtest.Plugin{plugin}, others...)...)
	if err != nil {
		b.Fatal(err)
	}
	return h, names
}
