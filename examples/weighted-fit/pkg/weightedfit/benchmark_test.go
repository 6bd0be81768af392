package weightedfit

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"example.com/weighted-fit/internal/schedtest"
)

// BenchmarkScore calls Score as the framework does, across 100 nodes.
func BenchmarkScore(b *testing.B) {
	var nodes []*v1.Node
	var names []string
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("node-%03d", i)
		names = append(names, name)
		nodes = append(nodes, schedtest.Node(name, map[v1.ResourceName]string{
			v1.ResourceCPU: fmt.Sprint(4 + i%4*4), v1.ResourceMemory: fmt.Sprintf("%dGi", 16+i%4*16),
		}, nil))
	}
	ctx := context.Background()
	h, err := schedtest.New(ctx, nodes, nil, schedtest.Plugin{Name: Name, Factory: New, Extensions: []string{"Score"}})
	if err != nil {
		b.Fatal(err)
	}
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "1"})
	state, _ := h.Filter(ctx, pod)
	score := h.ScoreFunc(Name)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, status := score(ctx, state, pod, names[i%len(names)]); !status.IsSuccess() {
			b.Fatal(status.AsError())
		}
	}
}
