// Hand-written against the framework API of Kubernetes 1.37, without kplugin's layer:
// the generated plugin's Filter and Score logic, the baseline benchmarks/layer_overhead.py
// measures the layer against. Copied into a generated project's plugin package (bench).
package bench

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"example.com/bench/internal/schedtest"
)

type native struct {
	handle   fwk.Handle
	label    string
	resource v1.ResourceName
}

func newNative(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return &native{handle: h, label: poolLabel, resource: v1.ResourceCPU}, nil
}

func (pl *native) Name() string { return "Native" }

func (pl *native) demand(state fwk.CycleState, pod *v1.Pod) int64 {
	if data, err := state.Read(stateKey); err == nil {
		if s, ok := data.(*demandState); ok {
			return s.amount
		}
	}
	return podRequest(pod, pl.resource)
}

func (pl *native) free(nodeInfo fwk.NodeInfo) int64 {
	allocatable, requested := nodeInfo.GetAllocatable(), nodeInfo.GetRequested()
	switch pl.resource {
	case v1.ResourcePods:
		return int64(allocatable.GetAllowedPodNumber() - len(nodeInfo.GetPods()))
	case v1.ResourceCPU:
		return allocatable.GetMilliCPU() - requested.GetMilliCPU()
	case v1.ResourceMemory:
		return allocatable.GetMemory() - requested.GetMemory()
	case v1.ResourceEphemeralStorage:
		return allocatable.GetEphemeralStorage() - requested.GetEphemeralStorage()
	default:
		return allocatable.GetScalarResources()[pl.resource] - requested.GetScalarResources()[pl.resource]
	}
}

func (pl *native) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	node := nodeInfo.Node()
	if node == nil {
		return fwk.NewStatus(fwk.Error, "node not found")
	}
	if _, ok := node.Labels[pl.label]; !ok {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
			fmt.Sprintf("node %s does not have label %s", node.Name, pl.label))
	}
	want := pl.demand(state, pod)
	if want == 0 {
		return nil
	}
	if free := pl.free(nodeInfo); free < want {
		return fwk.NewStatus(fwk.Unschedulable,
			fmt.Sprintf("node %s has %d of %s free, pod requests %d", node.Name, free, pl.resource, want))
	}
	return nil
}

func (pl *native) Score(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	left := pl.free(nodeInfo) - pl.demand(state, pod)
	if left < 0 {
		left = 0
	}
	return left, nil
}

func (pl *native) ScoreExtensions() fwk.ScoreExtensions { return nil }

func BenchmarkCompare(b *testing.B) {
	benchCompare(b, schedtest.Plugin{Name: "Native", Factory: newNative, Extensions: []string{"Filter", "Score"}})
}
