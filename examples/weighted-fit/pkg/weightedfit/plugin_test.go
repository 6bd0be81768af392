package weightedfit

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"example.com/weighted-fit/internal/fw"
	"example.com/weighted-fit/internal/schedtest"
)

// nodes of three sizes; the scores below follow from their shape alone.
func nodes() []*v1.Node {
	return []*v1.Node{
		schedtest.Node("small", map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "16Gi"}, nil),
		schedtest.Node("medium", map[v1.ResourceName]string{v1.ResourceCPU: "8", v1.ResourceMemory: "32Gi"}, nil),
		schedtest.Node("large", map[v1.ResourceName]string{v1.ResourceCPU: "16", v1.ResourceMemory: "64Gi"}, nil),
	}
}

func TestScore(t *testing.T) {
	tests := []struct {
		name string
		args string
		want map[string]int64
	}{
		{"Least (the default) prefers the small node", "", map[string]int64{"small": 100, "medium": 66, "large": 0}},
		{"Most prefers the large node", "mode: Most", map[string]int64{"small": 0, "medium": 33, "large": 100}},
		{
			"only the weighted resources count",
			"mode: Most\nresources: [{name: cpu, weight: 1}]",
			map[string]int64{"small": 0, "medium": 33, "large": 100},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			h, err := schedtest.New(ctx, nodes(), nil,
				schedtest.Plugin{Name: Name, Factory: New, Args: tt.args, Extensions: []string{"Score"}})
			if err != nil {
				t.Fatalf("building the framework: %v", err)
			}
			pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "1"})
			state, _ := h.Filter(ctx, pod)
			scores, status := h.Score(ctx, state, pod, "small", "medium", "large")
			if !status.IsSuccess() {
				t.Fatalf("score: %v", status.AsError())
			}
			for node, want := range tt.want {
				if scores[node] != want {
					t.Errorf("node %s: score %d, want %d", node, scores[node], want)
				}
			}
		})
	}
}

func TestNormalizeScoreEqualNodes(t *testing.T) {
	pl := &WeightedFit{}
	scores := fw.NodeScoreList{{Name: "a", Score: -7}, {Name: "b", Score: -7}}
	if status := pl.NormalizeScore(context.Background(), nil, nil, scores); !status.IsSuccess() {
		t.Fatal(status.AsError())
	}
	for _, s := range scores {
		if s.Score != fw.MaxNodeScore {
			t.Errorf("node %s: %d, want %d", s.Name, s.Score, fw.MaxNodeScore)
		}
	}
}

func TestNewRejectsInvalidArgs(t *testing.T) {
	for name, args := range map[string]string{
		"unknown mode":     "mode: Sideways",
		"unknown field":    "modes: Most",
		"zero weight":      "resources: [{name: cpu, weight: 0}]",
		"duplicate":        "resources: [{name: cpu, weight: 1}, {name: cpu, weight: 2}]",
		"bad name":         "resources: [{name: 'not a name!', weight: 1}]",
		"weights not list": "resources: {cpu: 1}",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := schedtest.New(context.Background(), nodes(), nil,
				schedtest.Plugin{Name: Name, Factory: New, Args: args, Extensions: []string{"Score"}})
			if err == nil {
				t.Fatalf("args %q: framework built, want an error", args)
			}
		})
	}
}
