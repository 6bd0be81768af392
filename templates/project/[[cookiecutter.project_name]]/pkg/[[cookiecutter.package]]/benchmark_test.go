<% set c = cookiecutter %>
package [[ c.package ]]

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"[[ c.module ]]/internal/schedtest"
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
	plugin := schedtest.Plugin{Name: Name, Factory: New, Args: [[ '"nodeLabel: " + poolLabel' if c.args else '""' ]], Extensions: extensions}
	h, err := schedtest.New(context.Background(), nodes, pods, append([]schedtest.Plugin{plugin}, others...)...)
	if err != nil {
		b.Fatal(err)
	}
	return h, names
}
<% if c.filter %>

// BenchmarkFilter calls Filter as the framework does, for one node: -benchmem (or the
// allocs/op it reports) shows what one call costs; the generated plugin allocates nothing.
func BenchmarkFilter(b *testing.B) {
	h, names := benchHarness(b)
	ctx := context.Background()
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "1"})
	state, _ := h.Filter(ctx, pod)
	filter := h.FilterFunc(Name)
	info := h.NodeInfo(names[50])
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if status := filter(ctx, state, pod, info); !status.IsSuccess() {
			b.Fatal(status.AsError())
		}
	}
}
<% endif %>
<% if c.score %>

// BenchmarkScore calls Score as the framework does, for one node (allocs/op as Filter's).
func BenchmarkScore(b *testing.B) {
	h, names := benchHarness(b)
	ctx := context.Background()
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "1"})
	state, _ := h.Filter(ctx, pod)
<% if c.prescore %>
	if _, status := h.Score(ctx, state, pod, names...); !status.IsSuccess() { // PreScore fills CycleState
		b.Fatal(status.AsError())
	}
<% endif %>
	score := h.ScoreFunc(Name)
	node := names[50]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, status := score(ctx, state, pod, node); !status.IsSuccess() {
			b.Fatal(status.AsError())
		}
	}
}
<% endif %>
