// Package permitgang implements the PermitGang scheduler plugin: gang scheduling the way
// Coscheduling (kubernetes-sigs/scheduler-plugins) does it, with a PodGroup kind of the
// plugin's own (scheduling.x-k8s.io/v1alpha1, config/crd/). A pod joins a group with the
// label scheduling.x-k8s.io/pod-group (Args.PodGroupLabel). PreFilter turns a pod away
// while its group has fewer pods than the PodGroup's minMember; Permit holds each pod of
// the group on its node (Wait) until minMember of them hold one, then lets them all bind;
// a pod that gives up (its wait timed out, or it was rejected) takes its waiting siblings
// with it (Unreserve).
//
// Kubernetes 1.35 and later schedule gangs natively (scheduling.k8s.io PodGroups, the
// GenericWorkload gate): see the README's guide from this CRD to that API.
//
// This file is yours: kplugin generated the project once and never rewrites it. It is
// written against the project's internal/fw package, the same on every Kubernetes
// version kplugin supports.
package permitgang

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"example.com/permit-gang/internal/fw"
)

// Name is the name PermitGang is registered under.
const Name = "PermitGang"

// PodGroups is the plugin's own resource, as the dynamic client and EventsToRegister name it.
var PodGroups = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}

// PermitGang is a scheduler plugin (see the package comment).
type PermitGang struct {
	handle fw.Handle
	args   PermitGangArgs
	groups cache.GenericLister
	synced cache.InformerSynced
	pods   listersv1.PodLister
}

// Compile-time checks that the plugin implements its extension points.
var _ fw.PreFilterPlugin = &PermitGang{}
var _ fw.ReservePlugin = &PermitGang{}
var _ fw.PermitPlugin = &PermitGang{}
var _ fw.EnqueueExtensions = &PermitGang{}
var _ fw.SignPlugin = &PermitGang{}

// groupInformer lists and watches the PodGroups of every namespace through the
// scheduler's own kubeconfig (its RBAC: config/rbac/rules.yaml); tests replace it with
// a lister of their own objects.
var groupInformer = func(ctx context.Context, h fw.Handle) (cache.GenericLister, cache.InformerSynced, error) {
	client, err := dynamic.NewForConfig(h.KubeConfig())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: a client for %s: %w", Name, PodGroups.String(), err)
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	informer := factory.ForResource(PodGroups)
	factory.Start(ctx.Done())
	return informer.Lister(), informer.Informer().HasSynced, nil
}

// NewPlugin builds the plugin and starts its PodGroup informer; the pods come from the
// scheduler's own informer.
func NewPlugin(ctx context.Context, h fw.Handle, args *PermitGangArgs) (*PermitGang, error) {
	groups, synced, err := groupInformer(ctx, h)
	if err != nil {
		return nil, err
	}
	pods := h.SharedInformerFactory().Core().V1().Pods().Lister()
	return &PermitGang{handle: h, args: *args, groups: groups, synced: synced, pods: pods}, nil
}

// Name returns the name the plugin is registered under.
func (pl *PermitGang) Name() string { return Name }

// gang is a pod's group: its PodGroup's name and what it asks.
type gang struct {
	namespace, name string
	minMember       int
	wait            time.Duration
}

// gangOf returns the pod's group, nil for a pod of none, or a status when its PodGroup
// cannot be read.
func (pl *PermitGang) gangOf(pod *v1.Pod) (*gang, *fw.Status) {
	name := pod.Labels[pl.args.PodGroupLabel]
	if name == "" {
		return nil, nil
	}
	if !pl.synced() {
		return nil, fw.NewStatus(fw.Unschedulable, fmt.Sprintf("%s: the PodGroups are not read yet", Name))
	}
	obj, err := pl.groups.ByNamespace(pod.Namespace).Get(name)
	if errors.IsNotFound(err) {
		return nil, fw.NewStatus(fw.UnschedulableAndUnresolvable, fmt.Sprintf("PodGroup %s/%s not found", pod.Namespace, name))
	}
	if err != nil {
		return nil, fw.AsStatus(err)
	}
	group, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fw.AsStatus(fmt.Errorf("PodGroup %s/%s is a %T", pod.Namespace, name, obj))
	}
	minMember, _, err := unstructured.NestedInt64(group.Object, "spec", "minMember")
	if err != nil || minMember < 1 {
		return nil, fw.NewStatus(fw.UnschedulableAndUnresolvable,
			fmt.Sprintf("PodGroup %s/%s: spec.minMember must be a whole number of at least 1", pod.Namespace, name))
	}
	wait := time.Duration(pl.args.WaitSeconds) * time.Second
	if seconds, found, err := unstructured.NestedInt64(group.Object, "spec", "scheduleTimeoutSeconds"); err == nil && found && seconds > 0 {
		wait = time.Duration(seconds) * time.Second
	}
	return &gang{namespace: pod.Namespace, name: name, minMember: int(minMember), wait: wait}, nil
}

// PreFilter turns the pod away while its group has fewer pods (created, bound or not)
// than its minMember: it could not bind anyway, and would hold a node while it waits.
func (pl *PermitGang) PreFilter(_ context.Context, _ fw.CycleState, pod *v1.Pod, _ []fw.NodeInfo) (*fw.PreFilterResult, *fw.Status) {
	g, status := pl.gangOf(pod)
	if g == nil {
		return nil, status
	}
	selector := labels.SelectorFromSet(labels.Set{pl.args.PodGroupLabel: g.name})
	pods, err := pl.pods.Pods(g.namespace).List(selector)
	if err != nil {
		return nil, fw.AsStatus(fmt.Errorf("listing the pods of PodGroup %s/%s: %w", g.namespace, g.name, err))
	}
	if len(pods) < g.minMember {
		return nil, fw.NewStatus(fw.Unschedulable, fmt.Sprintf(
			"PodGroup %s/%s has %d of its minMember %d pods", g.namespace, g.name, len(pods), g.minMember))
	}
	return nil, nil
}

// PreFilterExtensions returns nil: the verdict does not depend on the node.
func (pl *PermitGang) PreFilterExtensions() fw.PreFilterExtensions { return nil }

// Reserve has nothing to keep: Permit counts the group's pods from the scheduler itself.
func (pl *PermitGang) Reserve(context.Context, fw.CycleState, *v1.Pod, string) *fw.Status {
	return nil
}

// Unreserve: the pod gave up its node (its wait timed out, a sibling's rejection or a
// later plugin failed it), so its waiting siblings cannot complete the group either.
func (pl *PermitGang) Unreserve(ctx context.Context, _ fw.CycleState, pod *v1.Pod, _ string) {
	name := pod.Labels[pl.args.PodGroupLabel]
	if name == "" {
		return
	}
	pl.handle.IterateOverWaitingPods(func(waiting fw.WaitingPod) {
		if sibling := waiting.GetPod(); sibling.UID != pod.UID && pl.sameGang(sibling, pod.Namespace, name) {
			klog.FromContext(ctx).V(3).Info("Rejecting a waiting sibling", "plugin", Name, "pod", klog.KObj(sibling),
				"podGroup", klog.KRef(pod.Namespace, name), "gaveUp", klog.KObj(pod))
			waiting.Reject(Name, fmt.Sprintf("pod %s of PodGroup %s/%s gave up its node", pod.Name, pod.Namespace, name))
		}
	})
}

// Permit holds the pod (Wait, up to the PodGroup's scheduleTimeoutSeconds or
// Args.WaitSeconds) until minMember pods of its group hold a node: those bound or
// assumed by the scheduler, those waiting here, and this one. The one that completes
// the group lets the waiting ones bind.
func (pl *PermitGang) Permit(ctx context.Context, _ fw.CycleState, pod *v1.Pod, nodeName string) (*fw.Status, time.Duration) {
	g, status := pl.gangOf(pod)
	if g == nil {
		return status, 0
	}
	holding := map[types.UID]bool{pod.UID: true}
	nodes, err := fw.ListNodes(pl.handle)
	if err != nil {
		return fw.AsStatus(fmt.Errorf("listing the scheduler's nodes: %w", err)), 0
	}
	for _, node := range nodes {
		for _, info := range fw.PodsOn(node) {
			if p := fw.PodOf(info); pl.sameGang(p, g.namespace, g.name) {
				holding[p.UID] = true
			}
		}
	}
	var waiting []fw.WaitingPod
	pl.handle.IterateOverWaitingPods(func(w fw.WaitingPod) {
		if p := w.GetPod(); pl.sameGang(p, g.namespace, g.name) {
			holding[p.UID] = true
			waiting = append(waiting, w)
		}
	})
	logger := klog.FromContext(ctx)
	if len(holding) < g.minMember {
		logger.V(3).Info("Waiting for the gang", "plugin", Name, "pod", klog.KObj(pod), "node", nodeName,
			"podGroup", klog.KRef(g.namespace, g.name), "holding", len(holding), "minMember", g.minMember)
		return fw.NewStatus(fw.Wait, fmt.Sprintf("PodGroup %s/%s: %d of its minMember %d pods hold a node",
			g.namespace, g.name, len(holding), g.minMember)), g.wait
	}
	for _, w := range waiting {
		w.Allow(Name)
	}
	logger.V(3).Info("The gang is complete", "plugin", Name, "pod", klog.KObj(pod), "node", nodeName,
		"podGroup", klog.KRef(g.namespace, g.name), "allowed", len(waiting))
	return nil, 0
}

// sameGang tells whether p is a pod of the PodGroup namespace/name.
func (pl *PermitGang) sameGang(p *v1.Pod, namespace, name string) bool {
	return p.Namespace == namespace && p.Labels[pl.args.PodGroupLabel] == name
}

// EventsToRegister: a pod of a group that was created, or its PodGroup created or
// changed, may let a pod PreFilter turned away through; the hints say whether it does.
// Each event names one gang, so its PreQueueingHint names the gang's pending pods: the
// queue then asks the hints about those pods only, not about the pods of every gang
// (Kubernetes 1.37 on; internal/fw leaves them out before).
func (pl *PermitGang) EventsToRegister(_ context.Context) ([]fw.ClusterEventWithHint, error) {
	return []fw.ClusterEventWithHint{
		{
			Event:             fw.ClusterEvent{Resource: fw.Pod, ActionType: fw.Add},
			QueueingHintFn:    pl.isSchedulableAfterSiblingAdded,
			PreQueueingHintFn: pl.gangOfAddedPod,
		},
		{
			Event:             fw.ClusterEvent{Resource: fw.CustomResource(PodGroups.Resource, PodGroups.Version, PodGroups.Group), ActionType: fw.Add | fw.Update},
			QueueingHintFn:    pl.isSchedulableAfterPodGroupChange,
			PreQueueingHintFn: pl.gangOfPodGroup,
		},
	}, nil
}

// gangOfAddedPod names the pods a new pod may concern: the pending pods of its gang;
// none for a pod of no gang.
func (pl *PermitGang) gangOfAddedPod(_ klog.Logger, oldObj, newObj interface{}) (fw.PreQueueingHintResult, error) {
	_, added, err := fw.PodChange(oldObj, newObj)
	if err != nil {
		return fw.AllPods, err
	}
	if added == nil || added.Labels[pl.args.PodGroupLabel] == "" {
		return fw.PreQueueingHintResult{}, nil
	}
	return pl.pendingOf(added.Namespace, added.Labels[pl.args.PodGroupLabel])
}

// gangOfPodGroup names the pods a PodGroup's event may concern: its own pending pods.
func (pl *PermitGang) gangOfPodGroup(_ klog.Logger, _, newObj interface{}) (fw.PreQueueingHintResult, error) {
	group, ok := newObj.(*unstructured.Unstructured)
	if !ok {
		return fw.AllPods, fmt.Errorf("a PodGroup event with %T", newObj)
	}
	return pl.pendingOf(group.GetNamespace(), group.GetName())
}

// pendingOf names the pending pods of a gang, from the scheduler's own informer.
func (pl *PermitGang) pendingOf(namespace, name string) (fw.PreQueueingHintResult, error) {
	selector := labels.SelectorFromSet(labels.Set{pl.args.PodGroupLabel: name})
	pods, err := pl.pods.Pods(namespace).List(selector)
	if err != nil {
		return fw.AllPods, err
	}
	return fw.PendingPods(pods), nil
}

// isSchedulableAfterSiblingAdded: a new pod of the same group brings it closer to its minMember.
func (pl *PermitGang) isSchedulableAfterSiblingAdded(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fw.QueueingHint, error) {
	_, added, err := fw.PodChange(oldObj, newObj)
	if err != nil {
		return fw.Queue, err
	}
	name := pod.Labels[pl.args.PodGroupLabel]
	if added == nil || name == "" || added.UID == pod.UID || !pl.sameGang(added, pod.Namespace, name) {
		return fw.QueueSkip, nil
	}
	logger.V(5).Info("A sibling was added", "plugin", Name, "pod", klog.KObj(pod), "sibling", klog.KObj(added))
	return fw.Queue, nil
}

// isSchedulableAfterPodGroupChange: the pod's own PodGroup, created or changed (its
// minMember lowered), may admit it.
func (pl *PermitGang) isSchedulableAfterPodGroupChange(logger klog.Logger, pod *v1.Pod, _, newObj interface{}) (fw.QueueingHint, error) {
	group, ok := newObj.(*unstructured.Unstructured)
	if !ok {
		return fw.Queue, fmt.Errorf("a PodGroup event with %T", newObj)
	}
	if group.GetNamespace() != pod.Namespace || group.GetName() != pod.Labels[pl.args.PodGroupLabel] {
		return fw.QueueSkip, nil
	}
	logger.V(5).Info("Its PodGroup changed", "plugin", Name, "pod", klog.KObj(pod), "podGroup", klog.KObj(group))
	return fw.Queue, nil
}

// SignPod declines to sign: the verdict depends on the group's other pods, which change
// with every pod scheduled, so two pods that look alike must not share one cycle's
// result. The profile then schedules pods one cycle each, as before Kubernetes 1.35.
func (pl *PermitGang) SignPod(_ context.Context, _ *v1.Pod) ([]fw.SignFragment, *fw.Status) {
	return nil, fw.NewStatus(fw.Unschedulable, Name+" depends on the group's other pods")
}
