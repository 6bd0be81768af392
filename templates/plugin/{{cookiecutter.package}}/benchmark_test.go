{% set c = cookiecutter %}
{% set P = c.plugin_name %}
package {{ c.package }}

import (
{% if c.filter or c.score or c._shape.factory_ctx %}
	"context"
{% endif %}
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"{{ c.module }}/internal/schedtest"
)

// benchHarness is a 100-node cluster, every node labelled and partly used.
func benchHarness(b *testing.B) (*schedtest.Harness, []string) {
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
	h, err := schedtest.New(context.Background(), nodes, pods,
		schedtest.Plugin{Name: Name, Factory: New, Args: "nodeLabel: " + poolLabel, Extensions: extensions})
	if err != nil {
		b.Fatal(err)
	}
	return h, names
}
{% if c.filter %}

func BenchmarkFilter(b *testing.B) {
	h, names := benchHarness(b)
	pl := pluginOf(b, h)
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "1"})
	info := h.NodeInfo(names[50])
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if status := pl.Filter(ctx, nil, pod, info); !status.IsSuccess() {
			b.Fatal(status.AsError())
		}
	}
}
{% endif %}
{% if c.score %}

func BenchmarkScore(b *testing.B) {
	h, names := benchHarness(b)
	pl := pluginOf(b, h)
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "1"})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
{% if c._shape.score_node_arg == "nodeInfo" %}
		if _, status := pl.Score(ctx, nil, pod, h.NodeInfo(names[i%len(names)])); !status.IsSuccess() {
{% else %}
		if _, status := pl.Score(ctx, nil, pod, names[i%len(names)]); !status.IsSuccess() {
{% endif %}
			b.Fatal(status.AsError())
		}
	}
}
{% endif %}

func pluginOf(b *testing.B, h *schedtest.Harness) *{{ P }} {
	b.Helper()
	pl, err := New({% if c._shape.factory_ctx %}context.Background(), {% endif %}&{{ P }}Args{NodeLabel: poolLabel}, h.Framework)
	if err != nil {
		b.Fatal(err)
	}
	return pl.(*{{ P }})
}
