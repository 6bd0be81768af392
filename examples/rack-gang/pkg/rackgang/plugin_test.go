package rackgang

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"example.com/rack-gang/internal/fw"
	"example.com/rack-gang/internal/schedtest"
)

// extensions are the extension points the plugin is enabled at in these tests, as in
// deploy/scheduler-config.yaml.
var extensions = []string{"PlacementGenerate", "PlacementScore", "PodGroupPostFilter"}

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


// racks: "a1" and "a2" in rack-a, "b1" in rack-b, "loose" in none.
func racks() []*v1.Node {
	cpu := map[v1.ResourceName]string{v1.ResourceCPU: "4"}
	return []*v1.Node{
		schedtest.Node("a1", cpu, map[string]string{RackLabel: "rack-a"}),
		schedtest.Node("a2", cpu, map[string]string{RackLabel: "rack-a"}),
		schedtest.Node("b1", cpu, map[string]string{RackLabel: "rack-b"}),
		schedtest.Node("loose", cpu, nil),
	}
}

// placed lists each placement's nodes: "name=node,node name=node".
func placed(placements []*fw.Placement) string {
	var out []string
	for _, placement := range placements {
		var nodes []string
		for _, nodeInfo := range placement.Nodes {
			nodes = append(nodes, nodeInfo.Node().Name)
		}
		out = append(out, placement.Name+"="+strings.Join(nodes, ","))
	}
	return strings.Join(out, " ")
}

func TestGeneratePlacements(t *testing.T) {
	gang := schedtest.PodGroup("default", "gang", 2, schedtest.Pod("p1", "", nil), schedtest.Pod("p2", "", nil))
	h := newHarness(t, "", racks())
	placements, status := h.GeneratePlacements(context.Background(), gang)
	if !status.IsSuccess() {
		t.Fatalf("GeneratePlacements: %v", status.AsError())
	}
	if got, want := placed(placements), "rack-a=a1,a2 rack-b=b1"; got != want {
		t.Errorf("placements %q, want %q (one per rack, the unlabelled node in none)", got, want)
	}

	// without racks the group may go anywhere: one placement of every node
	h = newHarness(t, "", []*v1.Node{schedtest.Node("x", nil, nil), schedtest.Node("y", nil, nil)})
	placements, status = h.GeneratePlacements(context.Background(), gang)
	if !status.IsSuccess() || len(placements) != 1 || len(placements[0].Nodes) != 2 {
		t.Errorf("without racks: %s, %v; want one placement of both nodes", placed(placements), status)
	}
}

func TestScorePlacement(t *testing.T) {
	cpu := map[v1.ResourceName]string{v1.ResourceCPU: "4"}
	h := newHarness(t, "", []*v1.Node{schedtest.Node("n1", cpu, nil), schedtest.Node("n2", cpu, nil), schedtest.Node("n3", cpu, nil)})
	p1, p2, p3 := schedtest.Pod("p1", "", nil), schedtest.Pod("p2", "", nil), schedtest.Pod("p3", "", nil)
	gang := schedtest.PodGroup("default", "gang", 3, p1, p2, p3)
	every := []string{"n1", "n2", "n3"}
	scores, status := h.ScorePlacements(context.Background(), gang,
		schedtest.Assign(h.Placement("one", every...), map[*v1.Pod]string{p1: "n1", p2: "n1", p3: "n1"}),
		schedtest.Assign(h.Placement("two", every...), map[*v1.Pod]string{p1: "n1", p2: "n2", p3: "n2"}),
		schedtest.Assign(h.Placement("three", every...), map[*v1.Pod]string{p1: "n1", p2: "n2", p3: "n3"}),
	)
	if !status.IsSuccess() {
		t.Fatalf("ScorePlacements: %v", status.AsError())
	}
	want := map[string]int64{"one": fw.MaxNodeScore, "two": fw.MaxNodeScore / 2, "three": fw.MaxNodeScore / 3}
	for name, w := range want {
		if scores[name] != w {
			t.Errorf("placement %s: score %d, want %d (fewer nodes score higher)", name, scores[name], w)
		}
	}
}

func TestPodGroupPostFilter(t *testing.T) {
	schedtest.WithPodGroups(t)
	h := newHarness(t, "", []*v1.Node{schedtest.Node("n1", map[v1.ResourceName]string{v1.ResourceCPU: "1"}, nil)})
	gang := schedtest.PodGroup("default", "gang", 3, schedtest.Pod("p1", "", nil), schedtest.Pod("p2", "", nil), schedtest.Pod("p3", "", nil))
	scheduled := false
	result, status := h.PodGroupPostFilter(context.Background(), gang, func(context.Context) (*fw.PodGroupAssignments, *fw.Status) {
		scheduled = true
		return nil, fw.NewStatus(fw.Unschedulable)
	})
	if status.Code() != fw.Unschedulable {
		t.Fatalf("code %v, want Unschedulable", status.Code())
	}
	if result != nil {
		t.Errorf("result %+v, want none: the plugin nominates no node", result)
	}
	if scheduled {
		t.Errorf("the plugin ran the group's algorithm again; it makes no room, so it must not")
	}
	if want := "pod group default/gang needs 3 pods placed together and no placement takes them now; 3 of its pods wait"; !strings.Contains(status.Message(), want) {
		t.Errorf("message %q, want it to contain %q", status.Message(), want)
	}
}
