// Package rackgang implements the RackGang scheduler plugin.
//
// This file is yours: kplugin generated it once and never rewrites it. It is written
// against the project's internal/fw package, which is the same on every Kubernetes
// version kplugin supports, so kplugin upgrade never needs to touch it.
package rackgang

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/klog/v2"

	"example.com/rack-gang/internal/fw"
)

// Name is the name RackGang is registered under; the scheduler configuration's
// profiles[].plugins and pluginConfig refer to it by this name.
const Name = "RackGang"

// RackLabel is the node label GeneratePlacements keeps a pod group within one value of.
const RackLabel = "example.com/rack"

// RackGang is a scheduler plugin.
type RackGang struct {
	handle fw.Handle
}

// Compile-time checks that the plugin implements its extension points.
var _ fw.PlacementGeneratePlugin = &RackGang{}
var _ fw.PlacementScorePlugin = &RackGang{}
var _ fw.PodGroupPostFilterPlugin = &RackGang{}

// NewPlugin builds the plugin; the generated New (zz_generated.adapter.go) calls it.
// Set up what the plugin needs here: informers from h.SharedInformerFactory(), a client
// from h.ClientSet().
func NewPlugin(_ context.Context, h fw.Handle) (*RackGang, error) {
	return &RackGang{handle: h}, nil
}

// Name returns the name the plugin is registered under.
func (pl *RackGang) Name() string { return Name }

// GeneratePlacements keeps a pod group inside one rack: it splits the nodes of the
// parent placement by their RackLabel into one placement per rack, named after the
// rack, in name order. Nodes without the label are left out. When no node has it, the
// parent placement comes back as it is: the group is not constrained.
func (pl *RackGang) GeneratePlacements(ctx context.Context, _ fw.PodGroupCycleState, podGroup fw.PodGroupInfo, parent *fw.Placement) (*fw.GeneratePlacementsResult, *fw.Status) {
	racks := map[string][]fw.NodeInfo{}
	for _, nodeInfo := range parent.Nodes {
		if rack := nodeInfo.Node().Labels[RackLabel]; rack != "" {
			racks[rack] = append(racks[rack], nodeInfo)
		}
	}
	if len(racks) == 0 {
		return &fw.GeneratePlacementsResult{Placements: []*fw.Placement{parent}}, nil
	}
	names := make([]string, 0, len(racks))
	for rack := range racks {
		names = append(names, rack)
	}
	sort.Strings(names)
	result := &fw.GeneratePlacementsResult{}
	for _, rack := range names {
		result.Placements = append(result.Placements, &fw.Placement{Name: rack, Nodes: racks[rack]})
	}
	klog.FromContext(ctx).V(4).Info("One placement per rack", "plugin", Name,
		"podGroup", klog.KRef(podGroup.GetNamespace(), podGroup.GetName()), "pods", len(fw.PodGroupPods(podGroup)), "racks", names)
	return result, nil
}

// ScorePlacement prefers the placement that packs the pod group onto the fewest nodes:
// MaxNodeScore divided by the number of nodes its pods are proposed on.
func (pl *RackGang) ScorePlacement(_ context.Context, _ fw.PlacementState, _ fw.PodGroupInfo, placement *fw.PodGroupAssignments) (int64, *fw.Status) {
	nodes := map[string]bool{}
	for _, assignment := range placement.ProposedAssignments {
		nodes[assignment.GetNodeName()] = true
	}
	if len(nodes) == 0 {
		return fw.MinNodeScore, nil
	}
	return fw.MaxNodeScore / int64(len(nodes)), nil
}

// PlacementScoreExtensions returns nil: the scores are in [MinNodeScore, MaxNodeScore]
// already, so there is nothing to normalize.
func (pl *RackGang) PlacementScoreExtensions() fw.PlacementScoreExtensions { return nil }

// PodGroupPostFilter runs when no placement takes a pod group. It cannot make room for the
// group (that is what the default preemption's PodGroupPostFilter does), so it logs why
// the group waits and returns Unschedulable. The scheduler adds the reason to the group's
// status, unless a later plugin here ends the chain with UnschedulableAndUnresolvable
// (1.37's DefaultPreemption does when it finds no victims), whose reason replaces it.
func (pl *RackGang) PodGroupPostFilter(ctx context.Context, _ fw.PodGroupCycleState, podGroup fw.PodGroupInfo, _ fw.PodGroupSchedulingFunc) (*fw.PodGroupPostFilterResult, *fw.Status) {
	waiting := len(fw.PodGroupPods(podGroup))
	needed := int32(1)
	if pg := podGroup.GetPodGroup(); pg != nil && pg.Spec.SchedulingPolicy.Gang != nil {
		needed = pg.Spec.SchedulingPolicy.Gang.MinCount
	}
	klog.FromContext(ctx).V(4).Info("No placement takes pod group", "plugin", Name,
		"podGroup", klog.KRef(podGroup.GetNamespace(), podGroup.GetName()), "waiting", waiting, "needed", needed)
	return nil, fw.NewStatus(fw.Unschedulable, fmt.Sprintf("%s: pod group %s/%s needs %d pods placed together and no placement takes them now; %d of its pods wait for capacity (no preemption)",
		Name, podGroup.GetNamespace(), podGroup.GetName(), needed, waiting))
}
