// Package gpuaware implements the GpuAware scheduler plugin.
//
// This file is yours: kplugin generated it once and never rewrites it.
package gpuaware

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Name is the name GpuAware is registered under; the scheduler configuration's
// profiles[].plugins and pluginConfig refer to it by this name.
const Name = "GpuAware"

// GpuAware is a scheduler plugin.
// Filter: a node is feasible when it carries Args.NodeLabel (if set) and has enough
// free Args.ResourceName for the pod.
// Score: nodes with more of Args.ResourceName left free after placing the pod score
// higher; NormalizeScore maps the raw amounts onto [MinNodeScore, MaxNodeScore].
type GpuAware struct {
	handle framework.Handle
	args   GpuAwareArgs
}

// Compile-time checks that the plugin implements its extension points.
var _ framework.PreFilterPlugin = &GpuAware{}
var _ framework.FilterPlugin = &GpuAware{}
var _ framework.ScorePlugin = &GpuAware{}

// New builds the plugin from its pluginConfig args (nil when the config has none).
func New(obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
	args, err := DecodeArgs(obj)
	if err != nil {
		return nil, err
	}
	return &GpuAware{handle: h, args: *args}, nil
}

// Name returns the name the plugin is registered under.
func (pl *GpuAware) Name() string { return Name }

// stateKey is where the pod's demand is kept in CycleState for the rest of the cycle.
const stateKey framework.StateKey = Name + "/demand"

// demandState is the per-pod work done once in PreFilter/PreScore.
type demandState struct {
	amount int64
}

// Clone returns the state itself: it is never modified after it is written.
func (s *demandState) Clone() framework.StateData { return s }

// PreFilter computes the pod's demand once per scheduling cycle, so that Filter, which
// runs once per node, does not.
func (pl *GpuAware) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod) (*framework.PreFilterResult, *framework.Status) {
	state.Write(stateKey, &demandState{amount: podRequest(pod, pl.args.ResourceName)})
	return nil, nil
}

// PreFilterExtensions returns nil: the demand does not depend on other pods.
func (pl *GpuAware) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// demand returns how much of Args.ResourceName the pod requests, from CycleState when
// PreFilter or PreScore already computed it.
func (pl *GpuAware) demand(state *framework.CycleState, pod *v1.Pod) int64 {
	if state != nil {
		if data, err := state.Read(stateKey); err == nil {
			if s, ok := data.(*demandState); ok {
				return s.amount
			}
		}
	}
	return podRequest(pod, pl.args.ResourceName)
}

// free returns how much of Args.ResourceName the node has left.
func (pl *GpuAware) free(nodeInfo *framework.NodeInfo) int64 {
	name := pl.args.ResourceName
	if name == v1.ResourcePods {
		return int64(nodeInfo.Allocatable.AllowedPodNumber - len(nodeInfo.Pods))
	}
	return amount(nodeInfo.Allocatable, name) - amount(nodeInfo.Requested, name)
}

// Filter rejects nodes without Args.NodeLabel as UnschedulableAndUnresolvable
// (preempting pods cannot add a label) and nodes without enough free resource as
// Unschedulable (preempting lower-priority pods may free it).
func (pl *GpuAware) Filter(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	if key := pl.args.NodeLabel; key != "" {
		if _, ok := node.Labels[key]; !ok {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("node %s does not have label %s", node.Name, key))
		}
	}
	want := pl.demand(state, pod)
	if want == 0 {
		return nil
	}
	if free := pl.free(nodeInfo); free < want {
		return framework.NewStatus(framework.Unschedulable,
			fmt.Sprintf("node %s has %d of %s free, pod requests %d", node.Name, free, pl.args.ResourceName, want))
	}
	return nil
}

// Score returns how much of Args.ResourceName the node would have left after placing
// the pod. The raw amount is mapped onto [MinNodeScore, MaxNodeScore] by NormalizeScore.
func (pl *GpuAware) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeName string) (int64, *framework.Status) {
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

// ScoreExtensions returns the plugin itself: it implements NormalizeScore.
func (pl *GpuAware) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore scales raw scores so that the node with the most free resource gets
// MaxNodeScore and the others proportionally less.
func (pl *GpuAware) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	var highest int64
	for i := range scores {
		if scores[i].Score > highest {
			highest = scores[i].Score
		}
	}
	for i := range scores {
		if highest == 0 {
			scores[i].Score = framework.MinNodeScore
			continue
		}
		scores[i].Score = framework.MinNodeScore + scores[i].Score*(framework.MaxNodeScore-framework.MinNodeScore)/highest
	}
	return nil
}

// podRequest is what the pod asks of resource: the larger of its containers' sum and
// its largest init container, plus pod overhead, in the units amount() uses.
func podRequest(pod *v1.Pod, resource v1.ResourceName) int64 {
	if resource == v1.ResourcePods {
		return 1
	}
	value := func(list v1.ResourceList) int64 {
		q, ok := list[resource]
		if !ok {
			return 0
		}
		if resource == v1.ResourceCPU {
			return q.MilliValue()
		}
		return q.Value()
	}
	var sum, initMax int64
	for i := range pod.Spec.Containers {
		sum += value(pod.Spec.Containers[i].Resources.Requests)
	}
	for i := range pod.Spec.InitContainers {
		if v := value(pod.Spec.InitContainers[i].Resources.Requests); v > initMax {
			initMax = v
		}
	}
	if initMax > sum {
		sum = initMax
	}
	return sum + value(pod.Spec.Overhead)
}

// amount reads one resource from the framework's per-node accounting: milli-CPU for
// cpu, the plain quantity for everything else.
func amount(r *framework.Resource, resource v1.ResourceName) int64 {
	switch resource {
	case v1.ResourceCPU:
		return r.MilliCPU
	case v1.ResourceMemory:
		return r.Memory
	case v1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	default:
		return r.ScalarResources[resource]
	}
}
