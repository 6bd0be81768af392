// Package weightedfit implements the WeightedFit scheduler plugin: a worked example of
// a real plugin with non-trivial Args (a list of resource weights and a mode), in the
// manner of scheduler-plugins' NodeResourcesAllocatable, written against internal/fw
// so that it builds on every Kubernetes version kplugin supports.
package weightedfit

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"example.com/weighted-fit/internal/fw"
)

// Name is the name WeightedFit is registered under.
const Name = "WeightedFit"

// WeightedFit scores a node by the weighted sum of its allocatable resources: in Least
// mode the smaller the node the better (bin packing onto small nodes), in Most mode the
// bigger. It does not look at what is already running: the shape of the node decides.
type WeightedFit struct {
	handle fw.Handle
	args   WeightedFitArgs
}

var (
	_ fw.ScorePlugin = &WeightedFit{}
	_ fw.SignPlugin  = &WeightedFit{}
)

// NewPlugin builds the plugin from its decoded, defaulted and validated args.
func NewPlugin(_ context.Context, h fw.Handle, args *WeightedFitArgs) (*WeightedFit, error) {
	return &WeightedFit{handle: h, args: *args}, nil
}

// Name returns the name the plugin is registered under.
func (pl *WeightedFit) Name() string { return Name }

// Score is the node's weighted allocatable amount, negated in Least mode so that a
// higher score is always better; NormalizeScore maps it onto [MinNodeScore, MaxNodeScore].
func (pl *WeightedFit) Score(_ context.Context, _ fw.CycleState, _ *v1.Pod, nodeInfo fw.NodeInfo) (int64, *fw.Status) {
	var sum int64
	for _, r := range pl.args.Resources {
		sum += r.Weight * fw.Allocatable(nodeInfo, r.Name)
	}
	if pl.args.Mode == Least {
		return -sum, nil
	}
	return sum, nil
}

// ScoreExtensions returns the plugin itself: it implements NormalizeScore.
func (pl *WeightedFit) ScoreExtensions() fw.ScoreExtensions { return pl }

// NormalizeScore maps the raw scores linearly onto [MinNodeScore, MaxNodeScore]: the
// best node gets MaxNodeScore, the worst MinNodeScore; equal nodes all get MaxNodeScore.
func (pl *WeightedFit) NormalizeScore(_ context.Context, _ fw.CycleState, _ *v1.Pod, scores fw.NodeScoreList) *fw.Status {
	if len(scores) == 0 {
		return nil
	}
	lowest, highest := scores[0].Score, scores[0].Score
	for _, s := range scores {
		if s.Score < lowest {
			lowest = s.Score
		}
		if s.Score > highest {
			highest = s.Score
		}
	}
	for i := range scores {
		if highest == lowest {
			scores[i].Score = fw.MaxNodeScore
			continue
		}
		scores[i].Score = fw.MinNodeScore + (scores[i].Score-lowest)*(fw.MaxNodeScore-fw.MinNodeScore)/(highest-lowest)
	}
	return nil
}

// SignPod: the score depends on the node alone, never on the pod, so there is nothing
// to sign and, as far as this plugin is concerned, any pods may share a batch (1.35 on).
func (pl *WeightedFit) SignPod(_ context.Context, _ *v1.Pod) ([]fw.SignFragment, *fw.Status) {
	return nil, nil
}
