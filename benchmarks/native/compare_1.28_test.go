// Hand-written against the framework API of Kubernetes 1.28, without kplugin's layer:
// the generated plugin's Filter and Score logic, the baseline benchmarks/layer_overhead.py
// measures the layer against. Copied into a generated project's plugin package (bench).
package bench

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"example.com/bench/internal/schedtest"
)

type native struct {
	handle   framework.Handle
	label    string
	resource v1.ResourceName
}

func newNative(_ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &native{handle: h, label: poolLabel, resource: v1.ResourceCPU}, nil
}

func (pl *native) Name() string { return "Native" }

func (pl *native) demand(state *framework.CycleState, pod *v1.Pod) int64 {
	if data, err := state.Read(stateKey); err == nil {
		if s, ok := data.(*demandState); ok {
			return s.amount
		}
	}
	return podRequest(pod, pl.resource)
}

func (pl *native) free(nodeInfo *framework.NodeInfo) int64 {
	switch pl.resource {
	case v1.ResourcePods:
		return int64(nodeInfo.Allocatable.AllowedPodNumber - len(nodeInfo.Pods))
	case v1.ResourceCPU:
		return nodeInfo.Allocatable.MilliCPU - nodeInfo.Requested.MilliCPU
	case v1.ResourceMemory:
		return nodeInfo.Allocatable.Memory - nodeInfo.Requested.Memory
	case v1.ResourceEphemeralStorage:
		return nodeInfo.Allocatable.EphemeralStorage - nodeInfo.Requested.EphemeralStorage
	default:
		return nodeInfo.Allocatable.ScalarResources[pl.resource] - nodeInfo.Requested.ScalarResources[pl.resource]
	}
}

func (pl *native) Filter(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	if _, ok := node.Labels[pl.label]; !ok {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable,
			fmt.Sprintf("node %s does not have label %s", node.Name, pl.label))
	}
	want := pl.demand(state, pod)
	if want == 0 {
		return nil
	}
	if free := pl.free(nodeInfo); free < want {
		return framework.NewStatus(framework.Unschedulable,
			fmt.Sprintf("node %s has %d of %s free, pod requests %d", node.Name, free, pl.resource, want))
	}
	return nil
}

func (pl *native) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeName string) (int64, *framework.Status) {
	nodeInfo, err := pl.handle.SnapshotSharedLister().NodeInfos().Get(nodeName)
	if err != nil {
		return 0, framework.AsStatus(fmt.Errorf("getting node %s from the snapshot: %w", nodeName, err))
	}
	left := pl.free(nodeInfo) - pl.demand(state, pod)
	if left < 0 {
		left = 0
	}
	return left, nil
}

func (pl *native) ScoreExtensions() framework.ScoreExtensions { return nil }

func BenchmarkCompare(b *testing.B) {
	benchCompare(b, schedtest.Plugin{Name: "Native", Factory: newNative, Extensions: []string{"Filter", "Score"}})
}
