package permitgang

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"example.com/permit-gang/internal/fw"
	"example.com/permit-gang/internal/schedtest"
)

// BenchmarkPermit: the cost of Permit for the last pod of a gang of 100 on 100 nodes,
// each holding one of the gang's pods (it walks the nodes' pods and the waiting pods).
// make bench runs it; compare runs with benchstat.
func BenchmarkPermit(b *testing.B) {
	withGroups(b, podGroup("gang", 100))
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("node-%03d", i)
		nodes = append(nodes, schedtest.Node(name, map[v1.ResourceName]string{v1.ResourceCPU: "16"}, nil))
		pods = append(pods, member(fmt.Sprintf("p-%03d", i), "gang", name))
	}
	last := member("last", "gang", "")
	plugin := schedtest.Plugin{Name: Name, Factory: New, Extensions: extensions}
	h, err := schedtest.New(context.Background(), nodes, append(pods, last), plugin)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	state := h.NewCycleState()
	b.ReportAllocs()
	for b.Loop() {
		if status := h.Permit(ctx, state, last, "node-000"); status.Code() != fw.Success {
			b.Fatalf("Permit: %v", status)
		}
	}
}
