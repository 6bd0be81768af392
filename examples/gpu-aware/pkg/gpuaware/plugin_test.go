package gpuaware

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"example.com/gpu-scheduler/internal/fw"
	"example.com/gpu-scheduler/internal/schedtest"
)

// extensions are the extension points the plugin is enabled at in these tests, as in
// deploy/scheduler-config.yaml.
var extensions = []string{"PreFilter", "Filter", "Score"}

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

func TestFilter(t *testing.T) {
	nodes, pods := cluster()
	tests := []struct {
		name    string
		args    string
		request string
		want    map[string]fw.Code
		message map[string]string
	}{
		{
			name:    "label required and enough cpu",
			args:    "nodeLabel: " + poolLabel,
			request: "500m",
			want: map[string]fw.Code{
				"big":   fw.Success,
				"busy":  fw.Unschedulable,
				"plain": fw.UnschedulableAndUnresolvable,
			},
			message: map[string]string{
				"busy":  "node busy has 200 of cpu free, pod requests 500",
				"plain": "node plain does not have label " + poolLabel,
			},
		},
		{
			name:    "no label required",
			request: "500m",
			want: map[string]fw.Code{
				"big":   fw.Success,
				"busy":  fw.Unschedulable,
				"plain": fw.Success,
			},
		},
		{
			name:    "small request fits everywhere labelled",
			args:    "nodeLabel: " + poolLabel,
			request: "100m",
			want: map[string]fw.Code{
				"big":   fw.Success,
				"busy":  fw.Success,
				"plain": fw.UnschedulableAndUnresolvable,
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
	want := map[string]int64{"most": fw.MaxNodeScore, "some": 42, "least": 14}
	for node, w := range want {
		if scores[node] != w {
			t.Errorf("node %s: score %d, want %d", node, scores[node], w)
		}
		if scores[node] < fw.MinNodeScore || scores[node] > fw.MaxNodeScore {
			t.Errorf("node %s: score %d outside [%d, %d]", node, scores[node], fw.MinNodeScore, fw.MaxNodeScore)
		}
	}
}

func TestNormalizeScore(t *testing.T) {
	pl := &GpuAware{}
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
			scores := make(fw.NodeScoreList, len(tt.in))
			for i, s := range tt.in {
				scores[i] = fw.NodeScore{Name: string(rune('a' + i)), Score: s}
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

// TestDemandIsKeptForTheCycle: the pod's demand is worked out once per cycle and read from
// CycleState at every node after that.
func TestDemandIsKeptForTheCycle(t *testing.T) {
	nodes, pods := cluster()
	h := newHarness(t, "", nodes, pods...)
	ctx := context.Background()
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "300m"})
	state := h.NewCycleState()
	filter := h.FilterFunc(Name)
	for _, node := range []string{"big", "plain"} {
		if status := filter(ctx, state, pod, h.NodeInfo(node)); !status.IsSuccess() {
			t.Fatalf("Filter on %s: %v", node, status.AsError())
		}
	}
	data, err := state.Read(stateKey)
	if err != nil {
		t.Fatalf("no demand in CycleState after the cycle's first calls: %v", err)
	}
	if got := data.(*demandState).amount; got != 300 {
		t.Errorf("demand in CycleState: %d, want 300", got)
	}
	// a demand already in CycleState is the one every call uses: the pod is not read again
	state = h.NewCycleState()
	state.Write(stateKey, &demandState{amount: 1 << 40})
	if status := filter(ctx, state, pod, h.NodeInfo("big")); status.Code() != fw.Unschedulable {
		t.Errorf("Filter with the demand in CycleState far above the node's CPU: %v, want Unschedulable", status.Code())
	}
	if score, status := h.ScoreFunc(Name)(ctx, state, pod, "big"); !status.IsSuccess() || score != 0 {
		t.Errorf("Score with the demand in CycleState far above the node's CPU: %d (%v), want 0", score, status.AsError())
	}
}

func TestSignPod(t *testing.T) {
	pl := &GpuAware{args: GpuAwareArgs{ResourceName: v1.ResourceCPU}}
	sign := func(pod *v1.Pod) string {
		fragments, status := pl.SignPod(context.Background(), pod)
		if !status.IsSuccess() {
			t.Fatalf("SignPod: %v", status.AsError())
		}
		return fmt.Sprint(fragments)
	}
	one := schedtest.Pod("one", "", map[v1.ResourceName]string{v1.ResourceCPU: "500m"})
	same := schedtest.Pod("same", "", map[v1.ResourceName]string{v1.ResourceCPU: "500m", v1.ResourceMemory: "1Gi"})
	more := schedtest.Pod("more", "", map[v1.ResourceName]string{v1.ResourceCPU: "1"})
	if sign(one) != sign(same) {
		t.Errorf("pods with the same cpu request sign differently: %s, %s", sign(one), sign(same))
	}
	if sign(one) == sign(more) {
		t.Errorf("pods with different cpu requests sign alike: %s", sign(one))
	}
}
