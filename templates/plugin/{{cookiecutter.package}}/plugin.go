{% import "_go/helpers.jinja" as go %}
{% set c = cookiecutter %}
{% set P = c.plugin_name %}
{% set T = c._names %}
{% set S = c._shape %}
{% set native = c.api == "native" %}
{% set uses_state = c.prefilter or c.prescore %}
{% set uses_demand = c.prefilter or c.filter or c.prescore or c.score or c.prebind %}
// Package {{ c.package }} implements the {{ P }} scheduler plugin.
//
{% if native %}
// This file is yours: kplugin generated it once and never rewrites it. It is written
// against the framework API of Kubernetes {{ c.k8s_minor }} (--api native); kplugin upgrade can
// move it to another patch of {{ c.k8s_minor }}, but not to another minor.
{% else %}
// This file is yours: kplugin generated it once and never rewrites it. It is written
// against the project's internal/fw package, which is the same on every Kubernetes
// version kplugin supports, so kplugin upgrade never needs to touch it.
{% endif %}
package {{ c.package }}

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	podresource "k8s.io/kubernetes/pkg/api/v1/resource"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"{{ c.module }}/internal/fw"
)

// Name is the name {{ P }} is registered under; the scheduler configuration's
// profiles[].plugins and pluginConfig refer to it by this name.
const Name = "{{ P }}"
{% if c.preenqueue %}

// HoldAnnotation keeps a pod out of scheduling while it is set to "true" (PreEnqueue).
const HoldAnnotation = "example.com/hold"
{% endif %}

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
	handle {{ T.Handle }}
{% if c.args %}
	args   {{ P }}Args
{% endif %}
}

// Compile-time checks that the plugin implements its extension points.
{% for point in c._points %}
var _ {{ T[point.interface] }} = &{{ P }}{}
{% endfor %}
{% if native %}

{% if c.args %}
// New builds the plugin from its pluginConfig args (nil when the config has none).
func New({% if S.factory_ctx %}_ context.Context, {% endif %}obj runtime.Object, h {{ T.Handle }}) ({{ T.Plugin }}, error) {
	args, err := DecodeArgs(obj)
	if err != nil {
		return nil, err
	}
	return &{{ P }}{handle: h, args: *args}, nil
}
{% else %}
// New builds the plugin; it takes no args.
func New({% if S.factory_ctx %}_ context.Context, {% endif %}_ runtime.Object, h {{ T.Handle }}) ({{ T.Plugin }}, error) {
	return &{{ P }}{handle: h}, nil
}
{% endif %}
{% else %}

{% if c.args %}
// NewPlugin builds the plugin from its decoded, defaulted and validated args. The
// generated New (zz_generated.adapter.go) decodes the pluginConfig args and calls it.
// Set up what the plugin needs here: informers from h.SharedInformerFactory(), a client
// from h.ClientSet().
func NewPlugin(_ context.Context, h {{ T.Handle }}, args *{{ P }}Args) (*{{ P }}, error) {
	return &{{ P }}{handle: h, args: *args}, nil
}
{% else %}
// NewPlugin builds the plugin; the generated New (zz_generated.adapter.go) calls it.
// Set up what the plugin needs here: informers from h.SharedInformerFactory(), a client
// from h.ClientSet().
func NewPlugin(_ context.Context, h {{ T.Handle }}) (*{{ P }}, error) {
	return &{{ P }}{handle: h}, nil
}
{% endif %}
{% endif %}

// Name returns the name the plugin is registered under.
func (pl *{{ P }}) Name() string { return Name }
{% if c.preenqueue %}

// PreEnqueue runs before a pod enters the scheduling queue. A pod annotated with
// example.com/hold set to "true" is gated: it waits, without using scheduling cycles,
// until the annotation is removed.
func (pl *{{ P }}) PreEnqueue(_ context.Context, pod *v1.Pod) *{{ T.Status }} {
	if pod.Annotations[HoldAnnotation] == "true" {
		return {{ T.NewStatus }}({{ T.UnschedulableAndUnresolvable }},
			fmt.Sprintf("pod %s/%s is held by annotation %s", pod.Namespace, pod.Name, HoldAnnotation))
	}
	return nil
}
{% endif %}
{% if c.queuesort %}

// Less orders the scheduling queue: higher priority first, then the entry that has
// waited longest. Only one QueueSort plugin may be enabled per profile.
func (pl *{{ P }}) Less(a, b {{ T.QueuedInfo }}) bool {
	pa, pb := {{ T.QueuedPriority }}(a), {{ T.QueuedPriority }}(b)
	if pa != pb {
		return pa > pb
	}
	return {{ T.QueuedSince }}(a).Before({{ T.QueuedSince }}(b))
}
{% endif %}
{% if uses_state %}

// stateKey is where the pod's demand is kept in CycleState for the rest of the cycle.
const stateKey {{ T.StateKey }} = Name + "/demand"

// demandState is the per-pod work done once in PreFilter/PreScore.
type demandState struct {
	amount int64
}

// Clone returns the state itself: it is never modified after it is written.
func (s *demandState) Clone() {{ T.StateData }} { return s }
{% endif %}
{% if c.prefilter %}

// PreFilter computes the pod's demand once per scheduling cycle, so that Filter, which
// runs once per node, does not.
{% if native and not S.prefilter_nodes %}
func (pl *{{ P }}) PreFilter(_ context.Context, state {{ T.CycleState }}, pod *v1.Pod) (*{{ T.PreFilterResult }}, *{{ T.Status }}) {
{% else %}
func (pl *{{ P }}) PreFilter(_ context.Context, state {{ T.CycleState }}, pod *v1.Pod, _ []{{ T.NodeInfo }}) (*{{ T.PreFilterResult }}, *{{ T.Status }}) {
{% endif %}
	state.Write(stateKey, &demandState{amount: podRequest(pod, pl.args.ResourceName)})
	return nil, nil
}

// PreFilterExtensions returns the plugin itself: it implements AddPod and RemovePod.
func (pl *{{ P }}) PreFilterExtensions() {{ T.PreFilterExtensions }} { return pl }

// AddPod is called when preemption evaluates adding podInfoToAdd to nodeInfo. The demand
// in CycleState does not depend on other pods, and Filter reads the node's use from the
// nodeInfo it is given (which already includes the pod), so there is nothing to update.
// A plugin whose PreFilter state counts other pods updates it here.
func (pl *{{ P }}) AddPod(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ {{ T.PodInfo }}, _ {{ T.NodeInfo }}) *{{ T.Status }} {
	return nil
}

// RemovePod is AddPod's counterpart for a pod preemption would evict.
func (pl *{{ P }}) RemovePod(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ {{ T.PodInfo }}, _ {{ T.NodeInfo }}) *{{ T.Status }} {
	return nil
}
{% endif %}
{% if uses_state %}

// demand returns the pod's demand that PreFilter or PreScore wrote into CycleState.
// Missing state is an error, as in the scheduler's own plugins: it means the plugin is
// not enabled at the point that writes it, and recomputing would hide that.
func demand(state {{ T.CycleState }}) (int64, error) {
	data, err := state.Read(stateKey)
	if err != nil {
		return 0, fmt.Errorf("reading %s from CycleState: %w", stateKey, err)
	}
	s, ok := data.(*demandState)
	if !ok {
		return 0, fmt.Errorf("%s in CycleState holds %T, not *demandState", stateKey, data)
	}
	return s.amount, nil
}
{% endif %}
{% if uses_demand %}

// free returns how much of Args.ResourceName the node has left.
func (pl *{{ P }}) free(nodeInfo {{ T.NodeInfo }}) int64 {
	return {{ T.Allocatable }}(nodeInfo, pl.args.ResourceName) - {{ T.Requested }}(nodeInfo, pl.args.ResourceName)
}
{% endif %}
{% if c.filter %}

// Filter rejects nodes without Args.NodeLabel as UnschedulableAndUnresolvable
// (preempting pods cannot add a label) and nodes without enough free resource as
// Unschedulable (preempting lower-priority pods may free it).
func (pl *{{ P }}) Filter(_ context.Context, state {{ T.CycleState }}, pod *v1.Pod, nodeInfo {{ T.NodeInfo }}) *{{ T.Status }} {
	node := nodeInfo.Node()
	if node == nil {
		return {{ T.NewStatus }}({{ T.Error }}, "node not found")
	}
	if key := pl.args.NodeLabel; key != "" {
		if _, ok := node.Labels[key]; !ok {
			return {{ T.NewStatus }}({{ T.UnschedulableAndUnresolvable }},
				fmt.Sprintf("node %s does not have label %s", node.Name, key))
		}
	}
{% if c.prefilter %}
	want, err := demand(state)
	if err != nil {
		return {{ T.AsStatus }}(err)
	}
{% else %}
	want := podRequest(pod, pl.args.ResourceName)
{% endif %}
	if want == 0 {
		return nil
	}
	if free := pl.free(nodeInfo); free < want {
		return {{ T.NewStatus }}({{ T.Unschedulable }},
			fmt.Sprintf("node %s has %d of %s free, pod requests %d", node.Name, free, pl.args.ResourceName, want))
	}
	return nil
}
{% endif %}
{% if c.postfilter %}

// PostFilter runs when no node passed Filter. It cannot make room for the pod (that is
// what preemption, the default PostFilter, does), so it explains the failure and
// returns Unschedulable, as an informational PostFilter plugin should.
func (pl *{{ P }}) PostFilter(ctx context.Context, _ {{ T.CycleState }}, pod *v1.Pod, statuses {{ T.NodeToStatusReader }}) (*{{ T.PostFilterResult }}, *{{ T.Status }}) {
	nodes, err := {{ T.ListNodes }}(pl.handle)
	if err != nil {
		return nil, {{ T.AsStatus }}(err)
	}
	rejected := 0
	for _, nodeInfo := range nodes {
{% if native and S.postfilter_arg == "map" %}
		if status := statuses[nodeInfo.Node().Name]; !status.IsSuccess() {
{% else %}
		if status := statuses.Get(nodeInfo.Node().Name); !status.IsSuccess() {
{% endif %}
			rejected++
		}
	}
	klog.FromContext(ctx).V(4).Info("No node fits pod", "plugin", Name, "pod", klog.KObj(pod), "rejected", rejected, "nodes", len(nodes))
	return nil, {{ T.NewStatus }}({{ T.Unschedulable }},
		fmt.Sprintf("%d of %d nodes rejected pod %s/%s", rejected, len(nodes), pod.Namespace, pod.Name))
}
{% endif %}
{% if c.prescore %}

// PreScore computes the pod's demand once for the Score calls that follow (it may
// already be in CycleState from PreFilter).
{% if native and S.prescore_nodes == "nodes" %}
func (pl *{{ P }}) PreScore(_ context.Context, state {{ T.CycleState }}, pod *v1.Pod, _ []*v1.Node) *{{ T.Status }} {
{% else %}
func (pl *{{ P }}) PreScore(_ context.Context, state {{ T.CycleState }}, pod *v1.Pod, _ []{{ T.NodeInfo }}) *{{ T.Status }} {
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
{% if native and S.score_node_arg == "nodeName" %}
func (pl *{{ P }}) Score(_ context.Context, state {{ T.CycleState }}, pod *v1.Pod, nodeName string) (int64, *{{ T.Status }}) {
	nodeInfo, err := {{ T.LookupNode }}(pl.handle, nodeName)
	if err != nil {
		return 0, {{ T.AsStatus }}(fmt.Errorf("getting node %s from the snapshot: %w", nodeName, err))
	}
{% else %}
func (pl *{{ P }}) Score(_ context.Context, state {{ T.CycleState }}, pod *v1.Pod, nodeInfo {{ T.NodeInfo }}) (int64, *{{ T.Status }}) {
{% endif %}
{% if uses_state %}
	want, err := demand(state)
	if err != nil {
		return 0, {{ T.AsStatus }}(err)
	}
{% else %}
	want := podRequest(pod, pl.args.ResourceName)
{% endif %}
	left := pl.free(nodeInfo) - want
	if left < 0 {
		left = 0
	}
	return left, nil
}

// ScoreExtensions returns the plugin itself: it implements NormalizeScore.
func (pl *{{ P }}) ScoreExtensions() {{ T.ScoreExtensions }} { return pl }

// NormalizeScore scales raw scores so that the node with the most free resource gets
// MaxNodeScore and the others proportionally less.
func (pl *{{ P }}) NormalizeScore(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, scores {{ T.NodeScoreList }}) *{{ T.Status }} {
	var highest int64
	for i := range scores {
		if scores[i].Score > highest {
			highest = scores[i].Score
		}
	}
	for i := range scores {
		if highest == 0 {
			scores[i].Score = {{ T.MinNodeScore }}
			continue
		}
		scores[i].Score = {{ T.MinNodeScore }} + scores[i].Score*({{ T.MaxNodeScore }}-{{ T.MinNodeScore }})/highest
	}
	return nil
}
{% endif %}
{% if c.reserve %}

// Reserve is called once a node is chosen, before binding; state kept here must be
// released in Unreserve.
func (pl *{{ P }}) Reserve(ctx context.Context, _ {{ T.CycleState }}, pod *v1.Pod, nodeName string) *{{ T.Status }} {
	klog.FromContext(ctx).V(4).Info("Reserved node for pod", "plugin", Name, "pod", klog.KObj(pod), "node", nodeName)
	return nil
}

// Unreserve undoes Reserve when a later step fails; it must not fail itself.
func (pl *{{ P }}) Unreserve(ctx context.Context, _ {{ T.CycleState }}, pod *v1.Pod, nodeName string) {
	klog.FromContext(ctx).V(4).Info("Released reservation", "plugin", Name, "pod", klog.KObj(pod), "node", nodeName)
}
{% endif %}
{% if c.permit %}

// Permit lets the pod bind at once unless the chosen node has lost Args.NodeLabel since
// it was filtered; return Wait with a timeout to hold pods back instead.
func (pl *{{ P }}) Permit(ctx context.Context, _ {{ T.CycleState }}, pod *v1.Pod, nodeName string) (*{{ T.Status }}, time.Duration) {
	if key := pl.args.NodeLabel; key != "" {
		nodeInfo, err := {{ T.LookupNode }}(pl.handle, nodeName)
		if err != nil {
			return {{ T.AsStatus }}(err), 0
		}
		if _, ok := nodeInfo.Node().Labels[key]; !ok {
			return {{ T.NewStatus }}({{ T.Unschedulable }}, fmt.Sprintf("node %s lost label %s", nodeName, key)), 0
		}
	}
	klog.FromContext(ctx).V(4).Info("Permitted pod", "plugin", Name, "pod", klog.KObj(pod), "node", nodeName)
	return nil, 0
}
{% endif %}
{% if c.prebind %}
{% if not native or S.prebind_preflight != "none" %}

// PreBindPreFlight tells the scheduler, cheaply, whether PreBind has work for this
// pod: Skip for pods that request none of Args.ResourceName (nothing to prepare).
{% if native and S.prebind_preflight == "status" %}
func (pl *{{ P }}) PreBindPreFlight(_ context.Context, _ {{ T.CycleState }}, pod *v1.Pod, _ string) *{{ T.Status }} {
	if podRequest(pod, pl.args.ResourceName) == 0 {
		return {{ T.NewStatus }}({{ T.Skip }})
	}
	return nil
}
{% else %}
func (pl *{{ P }}) PreBindPreFlight(_ context.Context, _ {{ T.CycleState }}, pod *v1.Pod, _ string) (*{{ T.PreBindPreFlightResult }}, *{{ T.Status }}) {
	if podRequest(pod, pl.args.ResourceName) == 0 {
		return nil, {{ T.NewStatus }}({{ T.Skip }})
	}
	return nil, nil
}
{% endif %}
{% endif %}

// PreBind runs just before binding: the place to provision what the pod needs on the
// node. Here it checks that the node is still in the snapshot.
func (pl *{{ P }}) PreBind(ctx context.Context, _ {{ T.CycleState }}, pod *v1.Pod, nodeName string) *{{ T.Status }} {
	if _, err := {{ T.LookupNode }}(pl.handle, nodeName); err != nil {
		return {{ T.AsStatus }}(fmt.Errorf("node %s for pod %s/%s: %w", nodeName, pod.Namespace, pod.Name, err))
	}
	klog.FromContext(ctx).V(4).Info("Prepared binding", "plugin", Name, "pod", klog.KObj(pod), "node", nodeName)
	return nil
}
{% endif %}
{% if c.bind %}

// Bind binds the pod to the node through the API server, as the default binder does
// (the generated configuration disables DefaultBinder so that this plugin binds).
// Return Skip to leave a pod to the next bind plugin.
func (pl *{{ P }}) Bind(ctx context.Context, _ {{ T.CycleState }}, pod *v1.Pod, nodeName string) *{{ T.Status }} {
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	if err := pl.handle.ClientSet().CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		return {{ T.AsStatus }}(fmt.Errorf("binding pod %s/%s to node %s: %w", pod.Namespace, pod.Name, nodeName, err))
	}
	klog.FromContext(ctx).V(2).Info("Bound pod", "plugin", Name, "pod", klog.KObj(pod), "node", nodeName)
	return nil
}
{% endif %}
{% if c.postbind %}

// PostBind is informational: the pod is bound and nothing can fail any more.
func (pl *{{ P }}) PostBind(ctx context.Context, _ {{ T.CycleState }}, pod *v1.Pod, nodeName string) {
	klog.FromContext(ctx).V(2).Info("Pod bound", "plugin", Name, "pod", klog.KObj(pod), "node", nodeName)
}
{% endif %}
{% if c.enqueueextensions %}

// EventsToRegister lists the cluster events that may make a pod this plugin rejected
// schedulable, so the scheduler retries it then and only then: a node added or its
// labels or allocatable changed, a pod deleted (which frees resources) or updated
// (e.g. its hold annotation removed).
{% if native and not S.events_ctx %}
func (pl *{{ P }}) EventsToRegister() []{{ T.ClusterEventWithHint }} {
	return []{{ T.ClusterEventWithHint }}{
{% else %}
func (pl *{{ P }}) EventsToRegister(_ context.Context) ([]{{ T.ClusterEventWithHint }}, error) {
	return []{{ T.ClusterEventWithHint }}{
{% endif %}
		{Event: {{ T.ClusterEvent }}{Resource: {{ T.Node }}, ActionType: {{ T.Add }} | {{ T.UpdateNodeLabel }} | {{ T.UpdateNodeAllocatable }}}},
		{Event: {{ T.ClusterEvent }}{Resource: {{ T.Pod }}, ActionType: {{ T.Delete }} | {{ T.Update }}}},
{% if native and not S.events_ctx %}
	}
{% else %}
	}, nil
{% endif %}
}
{% endif %}
{% if uses_demand %}

// podRequest is what the pod asks of resource, in the units Allocatable uses, counted
// as the scheduler counts it ({{ T.PodRequests }}: init and sidecar containers, overhead).
func podRequest(pod *v1.Pod, resource v1.ResourceName) int64 {
	if resource == v1.ResourcePods {
		return 1
	}
	q, ok := {{ T.PodRequests }}(pod)[resource]
	if !ok {
		return 0
	}
	if resource == v1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}
{% endif %}
{% if native %}
{% set helpers = [] %}
{% if uses_demand %}{% set helpers = helpers + ["Allocatable", "Requested", "PodRequests"] %}{% endif %}
{% if c.queuesort %}{% set helpers = helpers + ["QueuedPriority", "QueuedSince"] %}{% endif %}
{% if c.postfilter %}{% set helpers = helpers + ["ListNodes"] %}{% endif %}
{% if c.permit or c.prebind or (c.score and S.score_node_arg == "nodeName") %}{% set helpers = helpers + ["LookupNode"] %}{% endif %}
{{ go.helpers(T, T, S, helpers) }}
{% endif %}
