{% set c = cookiecutter %}
{% set P = c.plugin_name %}
{% set uses_state = c.prefilter or c.prescore %}
{% set uses_demand = c.prefilter or c.filter or c.prescore or c.score %}
{% set uses_fmt = c.filter or (c.score and c._shape.score_node_arg != "nodeInfo") %}
// Package {{ c.package }} implements the {{ P }} scheduler plugin.
//
// This file is yours: kplugin generated it once and never rewrites it.
package {{ c.package }}

import (
	"context"
{% if uses_fmt %}
	"fmt"
{% endif %}
{% if c.permit %}
	"time"
{% endif %}

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
{% if c.queuesort %}
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
{% endif %}
{% if c.reserve or c.prebind or c.postbind or c.permit %}
	"k8s.io/klog/v2"
{% endif %}
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Name is the name {{ P }} is registered under; the scheduler configuration's
// profiles[].plugins and pluginConfig refer to it by this name.
const Name = "{{ P }}"

// {{ P }} is a scheduler plugin.
{% if c.filter %}
// Filter: a node is feasible when it carries Args.NodeLabel (if set) and has enough
// free Args.ResourceName for the pod.
{% endif %}
{% if c.score %}
// Score: nodes with more of Args.ResourceName left free after placing the pod score
// higher; NormalizeScore maps the raw amounts onto [MinNodeScore, MaxNodeScore].
{% endif %}
type {{ P }} struct {
	handle framework.Handle
	args   {{ P }}Args
}

// Compile-time checks that the plugin implements its extension points.
{% if c.queuesort %}
var _ framework.QueueSortPlugin = &{{ P }}{}
{% endif %}
{% if c.prefilter %}
var _ framework.PreFilterPlugin = &{{ P }}{}
{% endif %}
{% if c.filter %}
var _ framework.FilterPlugin = &{{ P }}{}
{% endif %}
{% if c.prescore %}
var _ framework.PreScorePlugin = &{{ P }}{}
{% endif %}
{% if c.score %}
var _ framework.ScorePlugin = &{{ P }}{}
{% endif %}
{% if c.reserve %}
var _ framework.ReservePlugin = &{{ P }}{}
{% endif %}
{% if c.permit %}
var _ framework.PermitPlugin = &{{ P }}{}
{% endif %}
{% if c.prebind %}
var _ framework.PreBindPlugin = &{{ P }}{}
{% endif %}
{% if c.postbind %}
var _ framework.PostBindPlugin = &{{ P }}{}
{% endif %}

// New builds the plugin from its pluginConfig args (nil when the config has none).
{% if c._shape.factory_ctx %}
func New(_ context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
{% else %}
func New(obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
{% endif %}
	args, err := DecodeArgs(obj)
	if err != nil {
		return nil, err
	}
	return &{{ P }}{handle: h, args: *args}, nil
}

// Name returns the name the plugin is registered under.
func (pl *{{ P }}) Name() string { return Name }
{% if c.queuesort %}

// Less orders the scheduling queue: higher priority first, then the pod that has
// waited longest. Only one QueueSort plugin may be enabled per profile.
func (pl *{{ P }}) Less(a, b *framework.QueuedPodInfo) bool {
	pa, pb := corev1helpers.PodPriority(a.Pod), corev1helpers.PodPriority(b.Pod)
	if pa != pb {
		return pa > pb
	}
	return a.Timestamp.Before(b.Timestamp)
}
{% endif %}
{% if uses_state %}

// stateKey is where the pod's demand is kept in CycleState for the rest of the cycle.
const stateKey framework.StateKey = Name + "/demand"

// demandState is the per-pod work done once in PreFilter/PreScore.
type demandState struct {
	amount int64
}

// Clone returns the state itself: it is never modified after it is written.
func (s *demandState) Clone() framework.StateData { return s }
{% endif %}
{% if c.prefilter %}

// PreFilter computes the pod's demand once per scheduling cycle, so that Filter, which
// runs once per node, does not.
func (pl *{{ P }}) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod) (*framework.PreFilterResult, *framework.Status) {
	state.Write(stateKey, &demandState{amount: podRequest(pod, pl.args.ResourceName)})
	return nil, nil
}

// PreFilterExtensions returns nil: the demand does not depend on other pods.
func (pl *{{ P }}) PreFilterExtensions() framework.PreFilterExtensions { return nil }
{% endif %}
{% if uses_demand %}

// demand returns how much of Args.ResourceName the pod requests, from CycleState when
// PreFilter or PreScore already computed it.
func (pl *{{ P }}) demand(state *framework.CycleState, pod *v1.Pod) int64 {
{% if uses_state %}
	if state != nil {
		if data, err := state.Read(stateKey); err == nil {
			if s, ok := data.(*demandState); ok {
				return s.amount
			}
		}
	}
{% endif %}
	return podRequest(pod, pl.args.ResourceName)
}

// free returns how much of Args.ResourceName the node has left.
func (pl *{{ P }}) free(nodeInfo *framework.NodeInfo) int64 {
	name := pl.args.ResourceName
	if name == v1.ResourcePods {
		return int64(nodeInfo.Allocatable.AllowedPodNumber - len(nodeInfo.Pods))
	}
	return amount(nodeInfo.Allocatable, name) - amount(nodeInfo.Requested, name)
}
{% endif %}
{% if c.filter %}

// Filter rejects nodes without Args.NodeLabel as UnschedulableAndUnresolvable
// (preempting pods cannot add a label) and nodes without enough free resource as
// Unschedulable (preempting lower-priority pods may free it).
func (pl *{{ P }}) Filter(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
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
{% endif %}
{% if c.prescore %}

// PreScore computes the pod's demand once for the Score calls that follow (it may
// already be in CycleState from PreFilter).
{% if c._shape.prescore_nodes == "nodeinfos" %}
func (pl *{{ P }}) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
{% else %}
func (pl *{{ P }}) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*v1.Node) *framework.Status {
{% endif %}
	if _, err := state.Read(stateKey); err != nil {
		state.Write(stateKey, &demandState{amount: podRequest(pod, pl.args.ResourceName)})
	}
	return nil
}
{% endif %}
{% if c.score %}

// Score returns how much of Args.ResourceName the node would have left after placing
// the pod. The raw amount is mapped onto [MinNodeScore, MaxNodeScore] by NormalizeScore.
{% if c._shape.score_node_arg == "nodeInfo" %}
func (pl *{{ P }}) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
{% else %}
func (pl *{{ P }}) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeName string) (int64, *framework.Status) {
	nodeInfo, err := pl.handle.SnapshotSharedLister().NodeInfos().Get(nodeName)
	if err != nil {
		return 0, framework.AsStatus(fmt.Errorf("getting node %s from the snapshot: %w", nodeName, err))
	}
{% endif %}
	left := pl.free(nodeInfo) - pl.demand(state, pod)
	if left < 0 {
		left = 0
	}
	return left, nil
}

// ScoreExtensions returns the plugin itself: it implements NormalizeScore.
func (pl *{{ P }}) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore scales raw scores so that the node with the most free resource gets
// MaxNodeScore and the others proportionally less.
func (pl *{{ P }}) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
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
{% endif %}
{% if c.reserve %}

// Reserve is called once a node is chosen, before binding; state kept here must be
// released in Unreserve.
func (pl *{{ P }}) Reserve(ctx context.Context, _ *framework.CycleState, pod *v1.Pod, nodeName string) *framework.Status {
	klog.FromContext(ctx).V(4).Info("Reserved node for pod", "plugin", Name, "pod", klog.KObj(pod), "node", nodeName)
	return nil
}

// Unreserve undoes Reserve when a later step fails; it must not fail itself.
func (pl *{{ P }}) Unreserve(ctx context.Context, _ *framework.CycleState, pod *v1.Pod, nodeName string) {
	klog.FromContext(ctx).V(4).Info("Released reservation", "plugin", Name, "pod", klog.KObj(pod), "node", nodeName)
}
{% endif %}
{% if c.permit %}

// Permit lets the pod bind at once unless the chosen node has lost Args.NodeLabel since
// it was filtered; return framework.Wait with a timeout to hold pods back instead.
func (pl *{{ P }}) Permit(ctx context.Context, _ *framework.CycleState, pod *v1.Pod, nodeName string) (*framework.Status, time.Duration) {
	if key := pl.args.NodeLabel; key != "" {
		nodeInfo, err := pl.handle.SnapshotSharedLister().NodeInfos().Get(nodeName)
		if err != nil {
			return framework.AsStatus(err), 0
		}
		if _, ok := nodeInfo.Node().Labels[key]; !ok {
			return framework.NewStatus(framework.Unschedulable, "node "+nodeName+" lost label "+key), 0
		}
	}
	klog.FromContext(ctx).V(4).Info("Permitted pod", "plugin", Name, "pod", klog.KObj(pod), "node", nodeName)
	return nil, 0
}
{% endif %}
{% if c.prebind %}

// PreBind runs just before binding: the place to provision what the pod needs on the
// node. Here it checks that the node is still in the snapshot.
func (pl *{{ P }}) PreBind(ctx context.Context, _ *framework.CycleState, pod *v1.Pod, nodeName string) *framework.Status {
	if _, err := pl.handle.SnapshotSharedLister().NodeInfos().Get(nodeName); err != nil {
		return framework.AsStatus(err)
	}
	klog.FromContext(ctx).V(4).Info("Prepared binding", "plugin", Name, "pod", klog.KObj(pod), "node", nodeName)
	return nil
}
{% endif %}
{% if c.postbind %}

// PostBind is informational: the pod is bound and nothing can fail any more.
func (pl *{{ P }}) PostBind(ctx context.Context, _ *framework.CycleState, pod *v1.Pod, nodeName string) {
	klog.FromContext(ctx).V(2).Info("Pod bound", "plugin", Name, "pod", klog.KObj(pod), "node", nodeName)
}
{% endif %}
{% if uses_demand %}

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
{% endif %}
