{% set c = cookiecutter %}
{% set P = c.plugin_name %}
{% set T = c._names %}
{% set point = c.point %}
package {{ c.package }}

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"{{ c.module }}/internal/fw"
	"{{ c.module }}/internal/schedtest"
)

// Test{{ c.go_name }}Stub runs the plugin's {{ c.go_name }} in the real framework runtime, with the
// plugin enabled at its extension points. Replace it with tests of your logic.
func Test{{ c.go_name }}Stub(t *testing.T) {
	ctx := context.Background()
	nodes := []*v1.Node{
		schedtest.Node("one", map[v1.ResourceName]string{v1.ResourceCPU: "4"}, nil),
		schedtest.Node("two", map[v1.ResourceName]string{v1.ResourceCPU: "4"}, nil),
	}
	h, err := schedtest.New(ctx, nodes, nil,
		schedtest.Plugin{Name: Name, Factory: New, Extensions: []string{ {%- for e in c._extensions -%}"{{ e }}"{{ ", " if not loop.last }}{%- endfor -%} }})
	if err != nil {
		t.Fatalf("building the framework: %v", err)
	}
{% if point != "enqueueextensions" %}
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "100m"})
{% endif %}
{% if point == "preenqueue" %}
	if status := h.PreEnqueue(ctx, pod); !status.IsSuccess() {
		t.Errorf("PreEnqueue: %v", status.AsError())
	}
{% elif point == "queuesort" %}
	high := schedtest.Pod("high", "", nil)
	priority := int32(1000)
	high.Spec.Priority = &priority
	if !h.Less(high, pod) {
		t.Errorf("a higher-priority pod should sort first")
	}
{% elif point in ("prefilter", "filter") %}
	_, statuses := h.Filter(ctx, pod)
	for _, node := range []string{"one", "two"} {
		if status := statuses[node]; !status.IsSuccess() {
			t.Errorf("node %s: %v", node, status.AsError())
		}
	}
{% elif point == "postfilter" %}
	result, status := h.PostFilter(ctx, h.NewCycleState(), pod, map[string]*{{ T.Status }}{
		"one": {{ T.NewStatus }}({{ T.Unschedulable }}, "too small"),
	})
	if status.Code() != {{ T.Unschedulable }} || result != nil {
		t.Errorf("PostFilter: result %v, status %v; want none, Unschedulable", result, status)
	}
{% elif point in ("prescore", "score") %}
	state, _ := h.Filter(ctx, pod)
	scores, status := h.Score(ctx, state, pod, "one", "two")
	if !status.IsSuccess() {
		t.Fatalf("Score: %v", status.AsError())
	}
	for node, score := range scores {
		if score < {{ T.MinNodeScore }} || score > {{ T.MaxNodeScore }} {
			t.Errorf("node %s: score %d outside [%d, %d]", node, score, {{ T.MinNodeScore }}, {{ T.MaxNodeScore }})
		}
	}
{% elif point == "reserve" %}
	state, _ := h.Filter(ctx, pod)
	if status := h.Reserve(ctx, state, pod, "one"); !status.IsSuccess() {
		t.Errorf("Reserve: %v", status.AsError())
	}
	h.Unreserve(ctx, state, pod, "one")
{% elif point == "permit" %}
	state, _ := h.Filter(ctx, pod)
	if status := h.Permit(ctx, state, pod, "one"); !status.IsSuccess() {
		t.Errorf("Permit: %v", status.AsError())
	}
{% elif point == "prebind" %}
	state, _ := h.Filter(ctx, pod)
	if status := h.PreBind(ctx, state, pod, "one"); !status.IsSuccess() {
		t.Errorf("PreBind: %v", status.AsError())
	}
{% elif point == "bind" %}
	state, _ := h.Filter(ctx, pod)
	if status := h.Bind(ctx, state, pod, "one"); !status.IsSuccess() {
		t.Fatalf("Bind: %v", status.AsError())
	}
	if got := h.Bindings()["default/new"]; got != "one" {
		t.Errorf("pod bound to %q through the API, want one", got)
	}
{% elif point == "postbind" %}
	state, _ := h.Filter(ctx, pod)
	h.PostBind(ctx, state, pod, "one")
{% elif point == "enqueueextensions" %}
	events, err := h.EventsToRegister(ctx, Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 {
		t.Errorf("no events registered: a pod the plugin rejects would wait for the periodic flush")
	}
{% endif %}
}
