{% import "_go/helpers.jinja" as go %}
{% set c = cookiecutter %}
{% set P = c.plugin_name %}
{% set T = c._names %}
{% set S = c._shape %}
{% set native = c.api == "native" %}
{% set point = c.point %}
package {{ c.package }}

// This file is yours: kplugin add extension-point generated it once, with a body that
// does nothing harmful, and never rewrites it. Put the plugin's {{ c.go_name }} logic here.

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"{{ c.module }}/internal/fw"
)

var _ {{ T[c.interface] }} = &{{ P }}{}
{% if point == "preenqueue" %}

// PreEnqueue runs before a pod enters the scheduling queue; a non-success status keeps
// it out (gated) until an event lets it in. This one lets every pod in.
func (pl *{{ P }}) PreEnqueue(_ context.Context, _ *v1.Pod) *{{ T.Status }} {
	return nil
}
{% elif point == "queuesort" %}

// Less orders the scheduling queue: higher priority first, then the entry that has
// waited longest. Only one QueueSort plugin may be enabled per profile.
func (pl *{{ P }}) Less(a, b {{ T.QueuedInfo }}) bool {
	pa, pb := {{ T.QueuedPriority }}(a), {{ T.QueuedPriority }}(b)
	if pa != pb {
		return pa > pb
	}
	return {{ T.QueuedSince }}(a).Before({{ T.QueuedSince }}(b))
}
{% if native %}
{{ go.helpers(T, T, S, ["QueuedPriority", "QueuedSince"]) }}
{% endif %}
{% elif point == "prefilter" %}

// PreFilter runs once per scheduling cycle before Filter: compute per-pod data here
// and keep it in CycleState. Returning a PreFilterResult narrows the nodes Filter sees.
{% if native and not S.prefilter_nodes %}
func (pl *{{ P }}) PreFilter(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod) (*{{ T.PreFilterResult }}, *{{ T.Status }}) {
{% else %}
func (pl *{{ P }}) PreFilter(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ []{{ T.NodeInfo }}) (*{{ T.PreFilterResult }}, *{{ T.Status }}) {
{% endif %}
	return nil, nil
}

// PreFilterExtensions returns nil: PreFilter keeps no state that depends on other pods.
func (pl *{{ P }}) PreFilterExtensions() {{ T.PreFilterExtensions }} { return nil }
{% elif point == "filter" %}

// Filter decides whether the pod can run on the node: Unschedulable (preemption may
// help) or UnschedulableAndUnresolvable (it cannot), with a message naming the node.
func (pl *{{ P }}) Filter(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, nodeInfo {{ T.NodeInfo }}) *{{ T.Status }} {
	if nodeInfo.Node() == nil {
		return {{ T.NewStatus }}({{ T.Error }}, "node not found")
	}
	return nil
}
{% elif point == "postfilter" %}

// PostFilter runs when no node passed Filter; it may make room (as preemption does) or
// explain. This one explains nothing and leaves the pod unschedulable.
func (pl *{{ P }}) PostFilter(_ context.Context, _ {{ T.CycleState }}, pod *v1.Pod, _ {{ T.NodeToStatusReader }}) (*{{ T.PostFilterResult }}, *{{ T.Status }}) {
	return nil, {{ T.NewStatus }}({{ T.Unschedulable }}, fmt.Sprintf("%s cannot help pod %s/%s", Name, pod.Namespace, pod.Name))
}
{% elif point == "prescore" %}

// PreScore runs once per cycle before Score: compute what Score needs for every node.
{% if native and S.prescore_nodes == "nodes" %}
func (pl *{{ P }}) PreScore(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ []*v1.Node) *{{ T.Status }} {
{% else %}
func (pl *{{ P }}) PreScore(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ []{{ T.NodeInfo }}) *{{ T.Status }} {
{% endif %}
	return nil
}
{% elif point == "score" %}

// Score rates a feasible node for the pod; after NormalizeScore (if any) the result must
// be within [MinNodeScore, MaxNodeScore]. This one rates every node the same.
{% if native and S.score_node_arg == "nodeName" %}
func (pl *{{ P }}) Score(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ string) (int64, *{{ T.Status }}) {
{% else %}
func (pl *{{ P }}) Score(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ {{ T.NodeInfo }}) (int64, *{{ T.Status }}) {
{% endif %}
	return {{ T.MinNodeScore }}, nil
}

// ScoreExtensions returns nil: the raw scores are already within the range.
func (pl *{{ P }}) ScoreExtensions() {{ T.ScoreExtensions }} { return nil }
{% elif point == "reserve" %}

// Reserve is called once a node is chosen, before binding; what it reserves must be
// released in Unreserve.
func (pl *{{ P }}) Reserve(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ string) *{{ T.Status }} {
	return nil
}

// Unreserve undoes Reserve when a later step fails; it must not fail itself.
func (pl *{{ P }}) Unreserve(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ string) {}
{% elif point == "permit" %}

// Permit approves the pod's binding, rejects it, or returns Wait with a timeout.
func (pl *{{ P }}) Permit(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ string) (*{{ T.Status }}, time.Duration) {
	return nil, 0
}
{% elif point == "prebind" %}
{% if not native or S.prebind_preflight != "none" %}

// PreBindPreFlight tells the scheduler, cheaply, whether PreBind has work for this pod.
{% if native and S.prebind_preflight == "status" %}
func (pl *{{ P }}) PreBindPreFlight(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ string) *{{ T.Status }} {
	return {{ T.NewStatus }}({{ T.Skip }})
}
{% else %}
func (pl *{{ P }}) PreBindPreFlight(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ string) (*{{ T.PreBindPreFlightResult }}, *{{ T.Status }}) {
	return nil, {{ T.NewStatus }}({{ T.Skip }})
}
{% endif %}
{% endif %}

// PreBind prepares the node for the pod just before binding (volumes, devices).
func (pl *{{ P }}) PreBind(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ string) *{{ T.Status }} {
	return nil
}
{% elif point == "bind" %}

// Bind binds the pod to the node through the API server, as the default binder does
// (the configuration disables DefaultBinder so that this plugin binds). Return Skip to
// leave a pod to the next bind plugin.
func (pl *{{ P }}) Bind(ctx context.Context, _ {{ T.CycleState }}, pod *v1.Pod, nodeName string) *{{ T.Status }} {
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	if err := pl.handle.ClientSet().CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		return {{ T.AsStatus }}(fmt.Errorf("binding pod %s/%s to node %s: %w", pod.Namespace, pod.Name, nodeName, err))
	}
	return nil
}
{% elif point == "postbind" %}

// PostBind is informational: the pod is bound and nothing can fail any more.
func (pl *{{ P }}) PostBind(_ context.Context, _ {{ T.CycleState }}, _ *v1.Pod, _ string) {}
{% elif point == "enqueueextensions" %}

// EventsToRegister lists the cluster events that may make a pod this plugin rejected
// schedulable, so that the scheduler retries it then: here a node added or its labels or
// allocatable changed, and a pod deleted.
{% if native and not S.events_ctx %}
func (pl *{{ P }}) EventsToRegister() []{{ T.ClusterEventWithHint }} {
	return []{{ T.ClusterEventWithHint }}{
{% else %}
func (pl *{{ P }}) EventsToRegister(_ context.Context) ([]{{ T.ClusterEventWithHint }}, error) {
	return []{{ T.ClusterEventWithHint }}{
{% endif %}
		{Event: {{ T.ClusterEvent }}{Resource: {{ T.Node }}, ActionType: {{ T.Add }} | {{ T.UpdateNodeLabel }} | {{ T.UpdateNodeAllocatable }}}},
		{Event: {{ T.ClusterEvent }}{Resource: {{ T.Pod }}, ActionType: {{ T.Delete }}}},
{% if native and not S.events_ctx %}
	}
{% else %}
	}, nil
{% endif %}
}
{% endif %}
