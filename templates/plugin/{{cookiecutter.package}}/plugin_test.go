{% set c = cookiecutter %}
{% set P = c.plugin_name %}
{% set T = c._names %}
{% set S = c._shape %}
{% set native = c.api == "native" %}
package {{ c.package }}

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"{{ c.module }}/internal/fw"
	"{{ c.module }}/internal/schedtest"
)

// extensions are the extension points the plugin is enabled at in these tests, as in
// deploy/scheduler-config.yaml.
var extensions = []string{ {%- for e in c._extensions -%}"{{ e }}"{{ ", " if not loop.last }}{%- endfor -%} }

const poolLabel = "example.com/pool"

func newHarness(t *testing.T, args string, nodes []*v1.Node, pods ...*v1.Pod) *schedtest.Harness {
	t.Helper()
	h, err := schedtest.New(context.Background(), nodes, pods,
		schedtest.Plugin{Name: Name, Factory: New, Args: args, Extensions: extensions})
	if err != nil {
		t.Fatalf("building the framework: %v", err)
	}
	return h
}

// cluster: "big" has 4 CPUs free and the pool label, "busy" has 1 CPU of which 800m
// are taken and the label, "plain" has 8 CPUs and no label.
func cluster() ([]*v1.Node, []*v1.Pod) {
	nodes := []*v1.Node{
		schedtest.Node("big", map[v1.ResourceName]string{v1.ResourceCPU: "4"}, map[string]string{poolLabel: "a"}),
		schedtest.Node("busy", map[v1.ResourceName]string{v1.ResourceCPU: "1"}, map[string]string{poolLabel: "a"}),
		schedtest.Node("plain", map[v1.ResourceName]string{v1.ResourceCPU: "8"}, nil),
	}
	pods := []*v1.Pod{
		schedtest.Pod("running", "busy", map[v1.ResourceName]string{v1.ResourceCPU: "800m"}),
	}
	return nodes, pods
}

{% if c.args %}
func TestNewRejectsInvalidArgs(t *testing.T) {
	nodes, pods := cluster()
	for name, args := range map[string]string{
		"unknown field": "nodeLable: example.com/pool",
		"wrong type":    "resourceName: [cpu]",
		"invalid label": "nodeLabel: 'not a label!'",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := schedtest.New(context.Background(), nodes, pods,
				schedtest.Plugin{Name: Name, Factory: New, Args: args, Extensions: extensions})
			if err == nil {
				t.Fatalf("args %q: framework built, want an error", args)
			}
		})
	}
}
{% endif %}
{% if c.preenqueue %}

func TestPreEnqueue(t *testing.T) {
	nodes, pods := cluster()
	h := newHarness(t, "", nodes, pods...)
	held := schedtest.Pod("held", "", nil)
	held.Annotations = map[string]string{HoldAnnotation: "true"}
	status := h.PreEnqueue(context.Background(), held)
	if status.Code() != {{ T.UnschedulableAndUnresolvable }} {
		t.Fatalf("held pod: code %v, want UnschedulableAndUnresolvable", status.Code())
	}
	if want := "pod default/held is held by annotation " + HoldAnnotation; status.Message() != want {
		t.Errorf("message %q, want %q", status.Message(), want)
	}
	if status := h.PreEnqueue(context.Background(), schedtest.Pod("free", "", nil)); !status.IsSuccess() {
		t.Errorf("pod without the annotation: %v", status.AsError())
	}
}
{% endif %}
{% if c.filter %}

func TestFilter(t *testing.T) {
	nodes, pods := cluster()
	tests := []struct {
		name    string
		args    string
		request string
		want    map[string]{{ T.Code }}
		message map[string]string
	}{
		{
			name:    "label required and enough cpu",
			args:    "nodeLabel: " + poolLabel,
			request: "500m",
			want: map[string]{{ T.Code }}{
				"big":   {{ T.Success }},
				"busy":  {{ T.Unschedulable }},
				"plain": {{ T.UnschedulableAndUnresolvable }},
			},
			message: map[string]string{
				"busy":  "node busy has 200 of cpu free, pod requests 500",
				"plain": "node plain does not have label " + poolLabel,
			},
		},
		{
			name:    "no label required",
			request: "500m",
			want: map[string]{{ T.Code }}{
				"big":   {{ T.Success }},
				"busy":  {{ T.Unschedulable }},
				"plain": {{ T.Success }},
			},
		},
		{
			name:    "small request fits everywhere labelled",
			args:    "nodeLabel: " + poolLabel,
			request: "100m",
			want: map[string]{{ T.Code }}{
				"big":   {{ T.Success }},
				"busy":  {{ T.Success }},
				"plain": {{ T.UnschedulableAndUnresolvable }},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.args, nodes, pods...)
			pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: tt.request})
			_, statuses := h.Filter(context.Background(), pod)
			for node, want := range tt.want {
				if got := statuses[node].Code(); got != want {
					t.Errorf("node %s: code %v, want %v (%v)", node, got, want, statuses[node].Message())
				}
				if msg, ok := tt.message[node]; ok && statuses[node].Message() != msg {
					t.Errorf("node %s: message %q, want %q", node, statuses[node].Message(), msg)
				}
			}
		})
	}
}
{% endif %}
{% if c.prefilter %}

func TestPreFilterExtensions(t *testing.T) {
	nodes, pods := cluster()
	h := newHarness(t, "", nodes, pods...)
	ctx := context.Background()
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "500m"})
	state, _ := h.Filter(ctx, pod)
	data, err := state.Read(stateKey)
	if err != nil {
		t.Fatalf("PreFilter wrote no state: %v", err)
	}
	if got := data.(*demandState).amount; got != 500 {
		t.Errorf("demand in CycleState: %d, want 500", got)
	}
	other := schedtest.Pod("other", "", map[v1.ResourceName]string{v1.ResourceCPU: "1"})
	if status := h.AddPod(ctx, state, pod, other, "big"); !status.IsSuccess() {
		t.Errorf("AddPod: %v", status.AsError())
	}
	if status := h.RemovePod(ctx, state, pod, pods[0], "busy"); !status.IsSuccess() {
		t.Errorf("RemovePod: %v", status.AsError())
	}
}
{% endif %}
{% if c.postfilter %}

func TestPostFilter(t *testing.T) {
	nodes, pods := cluster()
	h := newHarness(t, "", nodes, pods...)
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "16"})
{% if native and S.postfilter_arg == "map" %}
	// "plain" is missing from the statuses: Kubernetes {{ c.k8s_minor }}'s NodeToStatusMap has no
	// status for it, so it does not count as rejected.
{% else %}
	// "plain" is missing from the statuses: a node that was not evaluated counts as rejected.
{% endif %}
	statuses := map[string]*{{ T.Status }}{
		"big":  {{ T.NewStatus }}({{ T.Unschedulable }}, "too small"),
		"busy": {{ T.NewStatus }}({{ T.Unschedulable }}, "too small"),
	}
	result, status := h.PostFilter(context.Background(), h.NewCycleState(), pod, statuses)
	if status.Code() != {{ T.Unschedulable }} {
		t.Fatalf("code %v, want Unschedulable", status.Code())
	}
	if result != nil {
		t.Errorf("result %+v, want none: the plugin nominates no node", result)
	}
	if want := "{{ 2 if native and S.postfilter_arg == "map" else 3 }} of 3 nodes rejected pod default/new"; !strings.Contains(status.Message(), want) {
		t.Errorf("message %q, want it to contain %q", status.Message(), want)
	}
}
{% endif %}
{% if c.prescore %}

func TestPreScore(t *testing.T) {
	nodes, pods := cluster()
	h := newHarness(t, "", nodes, pods...)
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "300m"})
	state := h.NewCycleState()
	if _, status := h.Score(context.Background(), state, pod, "big", "plain"); !status.IsSuccess() {
		t.Fatalf("prescore/score: %v", status.AsError())
	}
	data, err := state.Read(stateKey)
	if err != nil {
		t.Fatalf("PreScore wrote no state: %v", err)
	}
	if got := data.(*demandState).amount; got != 300 {
		t.Errorf("demand in CycleState: %d, want 300", got)
	}
}
{% endif %}
{% if c.score %}

func TestScore(t *testing.T) {
	nodes := []*v1.Node{
		schedtest.Node("most", map[v1.ResourceName]string{v1.ResourceCPU: "4"}, nil),
		schedtest.Node("some", map[v1.ResourceName]string{v1.ResourceCPU: "2"}, nil),
		schedtest.Node("least", map[v1.ResourceName]string{v1.ResourceCPU: "1"}, nil),
	}
	h := newHarness(t, "", nodes)
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "500m"})
	state, _ := h.Filter(context.Background(), pod)
	scores, status := h.Score(context.Background(), state, pod, "most", "some", "least")
	if !status.IsSuccess() {
		t.Fatalf("score: %v", status.AsError())
	}
	// Free after placing the pod: 3500, 1500, 500 milli-CPU, normalized by the largest.
	want := map[string]int64{"most": {{ T.MaxNodeScore }}, "some": 42, "least": 14}
	for node, w := range want {
		if scores[node] != w {
			t.Errorf("node %s: score %d, want %d", node, scores[node], w)
		}
		if scores[node] < {{ T.MinNodeScore }} || scores[node] > {{ T.MaxNodeScore }} {
			t.Errorf("node %s: score %d outside [%d, %d]", node, scores[node], {{ T.MinNodeScore }}, {{ T.MaxNodeScore }})
		}
	}
}

func TestNormalizeScore(t *testing.T) {
	pl := &{{ P }}{}
	tests := []struct {
		name string
		in   []int64
		want []int64
	}{
		{"scaled by the highest", []int64{50, 100, 0}, []int64{50, 100, 0}},
		{"large raw values", []int64{8000, 2000}, []int64{100, 25}},
		{"all zero", []int64{0, 0}, []int64{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scores := make({{ T.NodeScoreList }}, len(tt.in))
			for i, s := range tt.in {
				scores[i] = {{ T.NodeScore }}{Name: string(rune('a' + i)), Score: s}
			}
			if status := pl.NormalizeScore(context.Background(), nil, nil, scores); !status.IsSuccess() {
				t.Fatalf("normalize: %v", status.AsError())
			}
			for i := range scores {
				if scores[i].Score != tt.want[i] {
					t.Errorf("score %d: got %d, want %d", i, scores[i].Score, tt.want[i])
				}
			}
		})
	}
}
{% endif %}
{% if c.reserve or c.permit or c.prebind or c.bind or c.postbind %}

func TestBindingCycle(t *testing.T) {
	nodes, pods := cluster()
	h := newHarness(t, {{ '"nodeLabel: "+poolLabel' if c.args else '""' }}, nodes, pods...)
	ctx := context.Background()
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "100m"})
	state, _ := h.Filter(ctx, pod)
{% if c.reserve %}
	if status := h.Reserve(ctx, state, pod, "big"); !status.IsSuccess() {
		t.Fatalf("reserve: %v", status.AsError())
	}
	h.Unreserve(ctx, state, pod, "big")
{% endif %}
{% if c.permit %}
	if status := h.Permit(ctx, state, pod, "big"); !status.IsSuccess() {
		t.Errorf("permit on a labelled node: %v", status.AsError())
	}
	if status := h.Permit(ctx, state, pod, "plain"); status.Code() != {{ T.Unschedulable }} {
		t.Errorf("permit on a node without the label: code %v, want Unschedulable", status.Code())
	}
{% endif %}
{% if c.prebind %}
	if status := h.PreBind(ctx, state, pod, "big"); !status.IsSuccess() {
		t.Errorf("prebind: %v", status.AsError())
	}
	if status := h.PreBind(ctx, state, pod, "gone"); status.IsSuccess() {
		t.Errorf("prebind on a node missing from the snapshot succeeded")
	}
{% if not native or S.prebind_preflight != "none" %}
	// PreBindPreFlight skips PreBind for a pod that requests nothing: no error even for
	// a node that is gone.
	nothing := schedtest.Pod("nothing", "", nil)
	if status := h.PreBind(ctx, h.NewCycleState(), nothing, "gone"); !status.IsSuccess() {
		t.Errorf("prebind of a pod PreBindPreFlight skips: %v", status.AsError())
	}
{% endif %}
{% endif %}
{% if c.bind %}
	if status := h.Bind(ctx, state, pod, "big"); !status.IsSuccess() {
		t.Fatalf("bind: %v", status.AsError())
	}
	if got := h.Bindings()["default/new"]; got != "big" {
		t.Errorf("pod bound to %q through the API, want big", got)
	}
{% endif %}
{% if c.postbind %}
	h.PostBind(ctx, state, pod, "big")
{% endif %}
}
{% endif %}
{% if c.queuesort %}

func TestQueueSort(t *testing.T) {
	nodes, _ := cluster()
	h := newHarness(t, "", nodes)
	low := schedtest.Pod("low", "", nil)
	high := schedtest.Pod("high", "", nil)
	priority := int32(1000)
	high.Spec.Priority = &priority
	if !h.Less(high, low) {
		t.Errorf("a higher-priority pod should sort first")
	}
	if h.Less(low, high) {
		t.Errorf("a lower-priority pod should not sort first")
	}
	if !h.Less(low, schedtest.Pod("later", "", nil)) {
		t.Errorf("of equal priority, the pod queued first should sort first")
	}
}
{% endif %}
{% if c.enqueueextensions %}

func TestEventsToRegister(t *testing.T) {
	nodes, _ := cluster()
	h := newHarness(t, "", nodes)
	events, err := h.EventsToRegister(context.Background(), Name)
	if err != nil {
		t.Fatal(err)
	}
	var nodeAdd, podDelete bool
	for _, e := range events {
		nodeAdd = nodeAdd || (e.Event.Resource == {{ T.Node }} && e.Event.ActionType&{{ T.Add }} != 0)
		podDelete = podDelete || (e.Event.Resource == {{ T.Pod }} && e.Event.ActionType&{{ T.Delete }} != 0)
	}
	if !nodeAdd || !podDelete {
		t.Errorf("events %v: want a node Add and a pod Delete", events)
	}
}
{% endif %}
