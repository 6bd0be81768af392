package teamquota

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"example.com/team-quota/internal/schedtest"
)

// BenchmarkPreFilter: one pod's PreFilter in a 100-node cluster of 1,000 bound pods,
// its namespace under a Quota (the cost is the walk over the snapshot's pods).
func BenchmarkPreFilter(b *testing.B) {
	withQuotas(b, quota("team-a", "q", map[string]interface{}{"cpu": "1000"}))
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("node-%03d", i)
		nodes = append(nodes, schedtest.Node(name, map[v1.ResourceName]string{v1.ResourceCPU: "64"}, nil))
		for j := 0; j < 10; j++ {
			pods = append(pods, podIn(fmt.Sprintf("team-%d", j%3), fmt.Sprintf("p-%d-%d", i, j), name, "100m"))
		}
	}
	h, err := schedtest.New(context.Background(), nodes, pods,
		schedtest.Plugin{Name: Name, Factory: New, Extensions: extensions})
	if err != nil {
		b.Fatal(err)
	}
	pod := podIn("team-a", "new", "", "500m")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Framework.RunPreFilterPlugins(ctx, h.NewCycleState(), pod)
	}
}
