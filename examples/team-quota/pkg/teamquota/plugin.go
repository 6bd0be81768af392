// Package teamquota implements the TeamQuota scheduler plugin: a plugin with an API of
// its own. Each namespace may hold Quotas (quota.example.com/v1alpha1, config/crd/);
// PreFilter rejects a pod when the bound pods of its namespace and the pod itself would
// request more of Args.ResourceName than the namespace's smallest Quota allows, and a
// Quota that is created or raised sends the pods it rejected back to the queue.
//
// This file is yours: kplugin generated the project once and never rewrites it. It is
// written against the project's internal/fw package, the same on every Kubernetes
// version kplugin supports.
package teamquota

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"example.com/team-quota/internal/fw"
)

// Name is the name TeamQuota is registered under.
const Name = "TeamQuota"

// Quotas is the plugin's own resource, as the dynamic client and EventsToRegister name it.
var Quotas = schema.GroupVersionResource{Group: "quota.example.com", Version: "v1alpha1", Resource: "quotas"}

// TeamQuota is a scheduler plugin (see the package comment).
type TeamQuota struct {
	handle fw.Handle
	args   TeamQuotaArgs
	quotas cache.GenericLister
	synced cache.InformerSynced
	live   liveQuotas // nil in unit tests
	pods   listersv1.PodLister
}

// liveQuotas lists a namespace's Quotas from the API server itself.
type liveQuotas func(ctx context.Context, namespace string) ([]runtime.Object, error)

// Compile-time checks that the plugin implements its extension points.
var _ fw.PreFilterPlugin = &TeamQuota{}
var _ fw.EnqueueExtensions = &TeamQuota{}

// quotaInformer lists and watches the Quotas of every namespace through the scheduler's
// own kubeconfig (its RBAC: config/rbac/rules.yaml), and gives a live list too; tests
// replace it with a lister of their own objects.
var quotaInformer = func(ctx context.Context, h fw.Handle) (cache.GenericLister, cache.InformerSynced, liveQuotas, error) {
	client, err := dynamic.NewForConfig(h.KubeConfig())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: a client for %s: %w", Name, Quotas.String(), err)
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	informer := factory.ForResource(Quotas)
	factory.Start(ctx.Done())
	live := func(ctx context.Context, namespace string) ([]runtime.Object, error) {
		list, err := client.Resource(Quotas).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		objects := make([]runtime.Object, 0, len(list.Items))
		for i := range list.Items {
			objects = append(objects, &list.Items[i])
		}
		return objects, nil
	}
	return informer.Lister(), informer.Informer().HasSynced, live, nil
}

// NewPlugin builds the plugin and starts its Quota informer. It does not wait for the
// informer: the scheduler waits for its own informer of the same resource (from
// EventsToRegister) before it schedules, and PreFilter checks this one.
func NewPlugin(ctx context.Context, h fw.Handle, args *TeamQuotaArgs) (*TeamQuota, error) {
	quotas, synced, live, err := quotaInformer(ctx, h)
	if err != nil {
		return nil, err
	}
	pods := h.SharedInformerFactory().Core().V1().Pods().Lister()
	return &TeamQuota{handle: h, args: *args, quotas: quotas, synced: synced, live: live, pods: pods}, nil
}

// Name returns the name the plugin is registered under.
func (pl *TeamQuota) Name() string { return Name }

// PreFilter admits the pod when its namespace has no Quota, or when what the
// namespace's pods on nodes (bound or assumed, from the scheduler's snapshot) request
// plus the pod's request stays within the smallest Quota. Otherwise the pod is
// Unschedulable: no node can change that, only a Quota or a pod of the namespace.
//
// Before it rejects a pod, it reads the namespace's Quotas from the API server: the
// scheduler retries the pod on the event of its own informer of Quotas (EventsToRegister),
// which can come before this plugin's informer has the change; a verdict from the stale
// copy would leave the pod waiting with no event left to retry it.
func (pl *TeamQuota) PreFilter(ctx context.Context, _ fw.CycleState, pod *v1.Pod, _ []fw.NodeInfo) (*fw.PreFilterResult, *fw.Status) {
	if !pl.synced() {
		return nil, fw.NewStatus(fw.Unschedulable, fmt.Sprintf("%s: the Quotas are not read yet", Name))
	}
	objects, err := pl.quotas.ByNamespace(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil, fw.AsStatus(fmt.Errorf("listing the Quotas of namespace %s: %w", pod.Namespace, err))
	}
	want := podRequest(pod, pl.args.ResourceName)
	used, err := pl.used(pod.Namespace)
	if err != nil {
		return nil, fw.AsStatus(err)
	}
	limit, quota, err := smallest(objects, pl.args.ResourceName)
	if err == nil && quota != "" && used+want > limit && pl.live != nil {
		if objects, err = pl.live(ctx, pod.Namespace); err != nil {
			return nil, fw.AsStatus(fmt.Errorf("reading the Quotas of namespace %s: %w", pod.Namespace, err))
		}
		limit, quota, err = smallest(objects, pl.args.ResourceName)
	}
	if err != nil {
		return nil, fw.AsStatus(err)
	}
	if quota == "" {
		return nil, nil
	}
	if used+want > limit {
		return nil, fw.NewStatus(fw.Unschedulable, fmt.Sprintf(
			"namespace %s: Quota %s allows %d of %s, %d in use, the pod requests %d",
			pod.Namespace, quota, limit, pl.args.ResourceName, used, want))
	}
	return nil, nil
}

// PreFilterExtensions returns nil: the verdict does not depend on the node, so
// preemption, which evaluates nodes, cannot change it.
func (pl *TeamQuota) PreFilterExtensions() fw.PreFilterExtensions { return nil }

// smallest returns the smallest spec.hard[resource] of the Quotas and that Quota's name
// ("" when none limits the resource).
func smallest(objects []runtime.Object, resource v1.ResourceName) (int64, string, error) {
	var limit int64
	name := ""
	for _, obj := range objects {
		quota, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		hard, found, err := quotaLimit(quota, resource)
		if err != nil {
			return 0, "", err
		}
		if found && (name == "" || hard < limit || (hard == limit && quota.GetName() < name)) {
			limit, name = hard, quota.GetName()
		}
	}
	return limit, name, nil
}

// used adds up what the namespace's pods on nodes request, as the scheduler counts
// them (assumed pods included: two pods scheduled in a row both count).
func (pl *TeamQuota) used(namespace string) (int64, error) {
	nodes, err := fw.ListNodes(pl.handle)
	if err != nil {
		return 0, fmt.Errorf("listing the scheduler's nodes: %w", err)
	}
	var sum int64
	for _, node := range nodes {
		for _, info := range fw.PodsOn(node) {
			if pod := fw.PodOf(info); pod.Namespace == namespace {
				sum += podRequest(pod, pl.args.ResourceName)
			}
		}
	}
	return sum, nil
}

// quotaLimit reads spec.hard[resource] of a Quota, in podRequest's units.
func quotaLimit(quota *unstructured.Unstructured, name v1.ResourceName) (int64, bool, error) {
	hard, found, err := unstructured.NestedFieldNoCopy(quota.Object, "spec", "hard", string(name))
	if err != nil || !found {
		return 0, false, err
	}
	var q resource.Quantity
	switch v := hard.(type) {
	case string:
		if q, err = resource.ParseQuantity(v); err != nil {
			return 0, false, fmt.Errorf("Quota %s/%s: spec.hard.%s: %w", quota.GetNamespace(), quota.GetName(), name, err)
		}
	case int64:
		q = *resource.NewQuantity(v, resource.DecimalSI)
	case float64:
		q = *resource.NewMilliQuantity(int64(v*1000), resource.DecimalSI)
	default:
		return 0, false, fmt.Errorf("Quota %s/%s: spec.hard.%s is a %T", quota.GetNamespace(), quota.GetName(), name, hard)
	}
	return amount(q, name), true, nil
}

// EventsToRegister: a Quota created or changed, and a pod of the namespace deleted, may
// make a rejected pod schedulable; the hints say whether it does. Both events name one
// namespace, so their PreQueueingHints name its pending pods: the queue then asks the
// hints about those pods only, not about every pod of every namespace the plugin
// rejected (Kubernetes 1.37 on; internal/fw leaves them out before).
func (pl *TeamQuota) EventsToRegister(_ context.Context) ([]fw.ClusterEventWithHint, error) {
	return []fw.ClusterEventWithHint{
		{
			Event:             fw.ClusterEvent{Resource: fw.CustomResource(Quotas.Resource, Quotas.Version, Quotas.Group), ActionType: fw.Add | fw.Update},
			QueueingHintFn:    pl.isSchedulableAfterQuotaChange,
			PreQueueingHintFn: pl.podsAfterQuotaChange,
		},
		{
			Event:             fw.ClusterEvent{Resource: fw.Pod, ActionType: fw.Delete},
			QueueingHintFn:    pl.isSchedulableAfterPodDeleted,
			PreQueueingHintFn: pl.podsAfterPodDeleted,
		},
	}, nil
}

// podsAfterQuotaChange names the pods a Quota event may concern: the pending pods of the
// Quota's namespace when it now allows more than before (or is new), none otherwise.
func (pl *TeamQuota) podsAfterQuotaChange(_ klog.Logger, oldObj, newObj interface{}) (fw.PreQueueingHintResult, error) {
	newQuota, ok := newObj.(*unstructured.Unstructured)
	if !ok {
		return fw.AllPods, fmt.Errorf("a Quota event with %T", newObj)
	}
	raised, err := pl.raised(oldObj, newQuota)
	if err != nil {
		return fw.AllPods, err
	}
	if !raised {
		return fw.PreQueueingHintResult{}, nil
	}
	return pl.pendingIn(newQuota.GetNamespace())
}

// podsAfterPodDeleted names the pods a pod's deletion may concern: the pending pods of
// its namespace when it was bound and requested the resource, none otherwise.
func (pl *TeamQuota) podsAfterPodDeleted(_ klog.Logger, oldObj, newObj interface{}) (fw.PreQueueingHintResult, error) {
	deleted, _, err := fw.PodChange(oldObj, newObj)
	if err != nil {
		return fw.AllPods, err
	}
	if deleted == nil || deleted.Spec.NodeName == "" || podRequest(deleted, pl.args.ResourceName) == 0 {
		return fw.PreQueueingHintResult{}, nil
	}
	return pl.pendingIn(deleted.Namespace)
}

// pendingIn names the pending pods of a namespace, from the scheduler's own informer.
func (pl *TeamQuota) pendingIn(namespace string) (fw.PreQueueingHintResult, error) {
	pods, err := pl.pods.Pods(namespace).List(labels.Everything())
	if err != nil {
		return fw.AllPods, err
	}
	return fw.PendingPods(pods), nil
}

// raised tells whether a Quota event leaves the Quota allowing more of the resource than
// before: a new Quota that limits it, or one whose limit went up.
func (pl *TeamQuota) raised(oldObj interface{}, newQuota *unstructured.Unstructured) (bool, error) {
	after, found, err := quotaLimit(newQuota, pl.args.ResourceName)
	if err != nil {
		return true, err
	}
	if oldQuota, ok := oldObj.(*unstructured.Unstructured); ok && found {
		before, had, err := quotaLimit(oldQuota, pl.args.ResourceName)
		if err != nil {
			return true, err
		}
		if had && after <= before {
			return false, nil
		}
	}
	return true, nil
}

// isSchedulableAfterQuotaChange: a Quota of the pod's namespace that now allows more of
// the resource than before (or is new) may admit the pod; Quotas of other namespaces,
// and changes that do not raise the limit, cannot.
func (pl *TeamQuota) isSchedulableAfterQuotaChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fw.QueueingHint, error) {
	newQuota, ok := newObj.(*unstructured.Unstructured)
	if !ok {
		return fw.Queue, fmt.Errorf("a Quota event with %T", newObj)
	}
	if newQuota.GetNamespace() != pod.Namespace {
		return fw.QueueSkip, nil
	}
	raised, err := pl.raised(oldObj, newQuota)
	if err != nil {
		return fw.Queue, err
	}
	if !raised {
		return fw.QueueSkip, nil
	}
	logger.V(5).Info("Quota raised", "plugin", Name, "pod", klog.KObj(pod), "quota", klog.KObj(newQuota))
	return fw.Queue, nil
}

// isSchedulableAfterPodDeleted: a bound pod of the same namespace that requested the
// resource gave some of the Quota back.
func (pl *TeamQuota) isSchedulableAfterPodDeleted(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fw.QueueingHint, error) {
	deleted, _, err := fw.PodChange(oldObj, newObj)
	if err != nil {
		return fw.Queue, err
	}
	if deleted == nil || deleted.Namespace != pod.Namespace || deleted.Spec.NodeName == "" ||
		podRequest(deleted, pl.args.ResourceName) == 0 {
		return fw.QueueSkip, nil
	}
	logger.V(5).Info("Pod deleted", "plugin", Name, "pod", klog.KObj(pod), "deleted", klog.KObj(deleted))
	return fw.Queue, nil
}

var _ fw.SignPlugin = &TeamQuota{}

// SignPod declines to sign: the verdict depends on the other pods of the namespace,
// which change with every pod scheduled, so two pods that look alike must not share one
// cycle's result (the second could overrun the Quota). The profile then schedules pods
// one cycle each, as before Kubernetes 1.35.
func (pl *TeamQuota) SignPod(_ context.Context, _ *v1.Pod) ([]fw.SignFragment, *fw.Status) {
	return nil, fw.NewStatus(fw.Unschedulable, Name+" depends on the namespace's other pods")
}

// podRequest is what the pod asks of resource, as the scheduler counts it.
func podRequest(pod *v1.Pod, name v1.ResourceName) int64 {
	if name == v1.ResourcePods {
		return 1
	}
	q, ok := fw.PodRequests(pod)[name]
	if !ok {
		return 0
	}
	return amount(q, name)
}

// amount is a quantity in the units the scheduler counts the resource in.
func amount(q resource.Quantity, name v1.ResourceName) int64 {
	if name == v1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}
