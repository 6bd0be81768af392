// Package gpuaware implements the GpuAware scheduler plugin.
//
// This file is yours: kplugin generated it once and never rewrites it. It is written
// against the project's internal/fw package, which is the same on every Kubernetes
// version kplugin supports, so kplugin upgrade never needs to touch it.
package gpuaware

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"example.com/gpu-scheduler/internal/fw"
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
	handle fw.Handle
	args   GpuAwareArgs
}

// Compile-time checks that the plugin implements its extension points.
var _ fw.PreFilterPlugin = &GpuAware{}
var _ fw.FilterPlugin = &GpuAware{}
var _ fw.ScorePlugin = &GpuAware{}

// NewPlugin builds the plugin from its decoded, defaulted and validated args. The
// generated New (zz_generated.adapter.go) decodes the pluginConfig args and calls it.
// Set up what the plugin needs here: informers from h.SharedInformerFactory(), a client
// from h.ClientSet().
func NewPlugin(_ context.Context, h fw.Handle, args *GpuAwareArgs) (*GpuAware, error) {
	return &GpuAware{handle: h, args: *args}, nil
}

// Name returns the name the plugin is registered under.
func (pl *GpuAware) Name() string { return Name }

// stateKey is where the pod's demand is kept in CycleState for the rest of the cycle.
const stateKey fw.StateKey = Name + "/demand"

// demandState is the per-pod work done once per cycle (see demand).
type demandState struct {
	amount int64
}

// Clone returns the state itself: it is never modified after it is written.
func (s *demandState) Clone() fw.StateData { return s }

// PreFilter computes the pod's demand once per scheduling cycle, so that Filter, which
// runs once per node, does not.
func (pl *GpuAware) PreFilter(_ context.Context, state fw.CycleState, pod *v1.Pod, _ []fw.NodeInfo) (*fw.PreFilterResult, *fw.Status) {
	pl.demand(state, pod)
	return nil, nil
}

// PreFilterExtensions returns the plugin itself: it implements AddPod and RemovePod.
func (pl *GpuAware) PreFilterExtensions() fw.PreFilterExtensions { return pl }

// AddPod is called when preemption evaluates adding podInfoToAdd to nodeInfo. The demand
// in CycleState does not depend on other pods, and Filter reads the node's use from the
// nodeInfo it is given (which already includes the pod), so there is nothing to update.
// A plugin whose PreFilter state counts other pods updates it here.
func (pl *GpuAware) AddPod(_ context.Context, _ fw.CycleState, _ *v1.Pod, _ fw.PodInfo, _ fw.NodeInfo) *fw.Status {
	return nil
}

// RemovePod is AddPod's counterpart for a pod preemption would evict.
func (pl *GpuAware) RemovePod(_ context.Context, _ fw.CycleState, _ *v1.Pod, _ fw.PodInfo, _ fw.NodeInfo) *fw.Status {
	return nil
}

// demand returns the pod's demand of Args.ResourceName for this scheduling cycle, kept in
// CycleState: PreFilter or PreScore writes it; where neither ran (a profile that enables
// the plugin only at Filter or Score), the first call of the cycle does. Filter and Score
// run once per node: working the demand out from the pod there (every container, a map
// allocated) would cost the scheduler more than the rest of the plugin together.
func (pl *GpuAware) demand(state fw.CycleState, pod *v1.Pod) int64 {
	if data, err := state.Read(stateKey); err == nil {
		if s, ok := data.(*demandState); ok {
			return s.amount
		}
	}
	s := &demandState{amount: podRequest(pod, pl.args.ResourceName)}
	state.Write(stateKey, s)
	return s.amount
}

// free returns how much of Args.ResourceName the node has left.
func (pl *GpuAware) free(nodeInfo fw.NodeInfo) int64 {
	return fw.Allocatable(nodeInfo, pl.args.ResourceName) - fw.Requested(nodeInfo, pl.args.ResourceName)
}

// Filter rejects nodes without Args.NodeLabel as UnschedulableAndUnresolvable
// (preempting pods cannot add a label) and nodes without enough free resource as
// Unschedulable (preempting lower-priority pods may free it).
func (pl *GpuAware) Filter(_ context.Context, state fw.CycleState, pod *v1.Pod, nodeInfo fw.NodeInfo) *fw.Status {
	node := nodeInfo.Node()
	if node == nil {
		return fw.NewStatus(fw.Error, "node not found")
	}
	if key := pl.args.NodeLabel; key != "" {
		if _, ok := node.Labels[key]; !ok {
			return fw.NewStatus(fw.UnschedulableAndUnresolvable,
				fmt.Sprintf("node %s does not have label %s", node.Name, key))
		}
	}
	want := pl.demand(state, pod)
	if want == 0 {
		return nil
	}
	if free := pl.free(nodeInfo); free < want {
		return fw.NewStatus(fw.Unschedulable,
			fmt.Sprintf("node %s has %d of %s free, pod requests %d", node.Name, free, pl.args.ResourceName, want))
	}
	return nil
}

// Score returns how much of Args.ResourceName the node would have left after placing
// the pod. The raw amount is mapped onto [MinNodeScore, MaxNodeScore] by NormalizeScore.
func (pl *GpuAware) Score(_ context.Context, state fw.CycleState, pod *v1.Pod, nodeInfo fw.NodeInfo) (int64, *fw.Status) {
	want := pl.demand(state, pod)
	left := pl.free(nodeInfo) - want
	if left < 0 {
		left = 0
	}
	return left, nil
}

// ScoreExtensions returns the plugin itself: it implements NormalizeScore.
func (pl *GpuAware) ScoreExtensions() fw.ScoreExtensions { return pl }

// NormalizeScore scales raw scores so that the node with the most free resource gets
// MaxNodeScore and the others proportionally less.
func (pl *GpuAware) NormalizeScore(_ context.Context, _ fw.CycleState, _ *v1.Pod, scores fw.NodeScoreList) *fw.Status {
	var highest int64
	for i := range scores {
		if scores[i].Score > highest {
			highest = scores[i].Score
		}
	}
	for i := range scores {
		if highest == 0 {
			scores[i].Score = fw.MinNodeScore
			continue
		}
		scores[i].Score = fw.MinNodeScore + scores[i].Score*(fw.MaxNodeScore-fw.MinNodeScore)/highest
	}
	return nil
}

var _ fw.SignPlugin = &GpuAware{}

// SignPod tells the scheduler what this plugin's PreFilter, Filter, PreScore and Score
// read of the pod, so that pods that sign alike (and were scheduled moments apart) can
// reuse one scheduling cycle's result: here only the pod's request of
// Args.ResourceName. Every plugin at those points must sign for the profile to batch.
// A plugin whose verdict depends on more of the pod than it can name here (its other
// pods, its affinity) must not sign it: return nil, fw.NewStatus(fw.Unschedulable, "why").
func (pl *GpuAware) SignPod(_ context.Context, pod *v1.Pod) ([]fw.SignFragment, *fw.Status) {
	return []fw.SignFragment{
		{Key: Name + "/" + string(pl.args.ResourceName), Value: podRequest(pod, pl.args.ResourceName)},
	}, nil
}

// podRequest is what the pod asks of resource, in the units Allocatable uses, counted
// as the scheduler counts it (fw.PodRequests: init and sidecar containers, overhead).
func podRequest(pod *v1.Pod, resource v1.ResourceName) int64 {
	if resource == v1.ResourcePods {
		return 1
	}
	q, ok := fw.PodRequests(pod)[resource]
	if !ok {
		return 0
	}
	if resource == v1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}
