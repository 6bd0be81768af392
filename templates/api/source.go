<% set K = a.kind %>
<% set k = a.kind[0] | lower ~ a.kind[1:] %>
<% set errs = not native or S.hint_error %>
<#- the layer names PreQueueingHintFns on every minor (internal/fw drops them before 1.37) -#>
<% set pre = not native or S.pre_queueing_hints != "none" %>
<% set R = T.PreQueueingHintResult if pre else "" %>
package [[ c.package ]]

// This file is yours: kplugin add api generated it once and never rewrites it. It shows
// how [[ c.plugin_name ]] reads [[ K ]] objects ([[ a.plural ]].[[ a.group ]], apis/[[ a.short ]]/[[ a.version ]]/)
// through the clientset, informers and listers make generate writes under pkg/generated/:
//
//   - in New, start an informer with the scheduler's context and kubeconfig; it lists and
//     watches until the scheduler stops:
//
//     [[ k ]]s, err := new[[ K ]]Source(ctx, h.KubeConfig())
//
//   - at an extension point, read the objects from its cache: [[ k ]]s.forPod(pod);
//   - in EventsToRegister, add [[ k ]]Events(pods) to the plugin's events, with pods the
//     scheduler's own pod lister (h.SharedInformerFactory().Core().V1().Pods().Lister()):
//     a pod the plugin rejected is tried again when a [[ K ]] that selects it is created
//     or changed<% if pre %>; the event's PreQueueingHint names the pending pods it selects, so
//     that the queue asks the QueueingHint about those pods only<% endif %>.
//
// The scheduler's ServiceAccount may read [[ a.plural ]]: kplugin add api added the rule to
// config/rbac/rules.yaml, and deploy/, the chart and kplugin e2e take it from there. The
// CRD (config/crd/, from make generate) is installed by deploy/crds.yaml, the chart's
// crds/ and kplugin e2e.

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	[[ a.alias ]] "[[ c.module ]]/apis/[[ a.short ]]/[[ a.version ]]"
	"[[ c.module ]]/internal/fw"
	"[[ c.module ]]/pkg/generated/clientset/versioned"
	"[[ c.module ]]/pkg/generated/informers/externalversions"
	[[ a.alias ]]listers "[[ c.module ]]/pkg/generated/listers/[[ a.short ]]/[[ a.version ]]"
)

// [[ k ]]Source reads [[ K ]] objects from an informer's cache.
type [[ k ]]Source struct {
	lister [[ a.alias ]]listers.[[ K ]]Lister
	synced cache.InformerSynced
}

// new[[ K ]]Source starts an informer of [[ K ]] objects with config (the scheduler's
// kubeconfig: Handle.KubeConfig()); it stops when ctx is done. It does not wait for the
// first list: forPod says when the objects are not read yet (the scheduler itself waits
// for its own informer of the kind, from EventsToRegister, before it schedules).
func new[[ K ]]Source(ctx context.Context, config *rest.Config) (*[[ k ]]Source, error) {
	client, err := versioned.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("a client for [[ a.plural ]].[[ a.group ]]: %w", err)
	}
	factory := externalversions.NewSharedInformerFactory(client, 0)
	informer := factory.[[ a.short | capitalize ]]().[[ a.version | capitalize ]]().[[ a.go_plural ]]()
	source := &[[ k ]]Source{lister: informer.Lister(), synced: informer.Informer().HasSynced}
	factory.Start(ctx.Done())
	return source, nil
}

// forPod returns the [[ K ]] objects that select pod, by name.
func (s *[[ k ]]Source) forPod(pod *v1.Pod) ([]*[[ a.alias ]].[[ K ]], error) {
	if !s.synced() {
		return nil, fmt.Errorf("the [[ a.plural ]] are not read yet")
	}
<% if a.namespaced %>
	all, err := s.lister.[[ a.go_plural ]](pod.Namespace).List(labels.Everything())
<% else %>
	all, err := s.lister.List(labels.Everything())
<% endif %>
	if err != nil {
		return nil, err
	}
	var found []*[[ a.alias ]].[[ K ]]
	for _, obj := range all {
		if [[ k ]]Selects(obj, pod) {
			found = append(found, obj)
		}
	}
	// The cache lists in no particular order; sort so that callers see the same order
	// every time.
	sort.Slice(found, func(i, j int) bool { return found[i].Name < found[j].Name })
	return found, nil
}

// [[ k ]]Selects says whether obj picks pod: <% if a.namespaced %>a pod of its namespace that <% endif %>its selector matches
// (no selector: every pod; a selector the API would not accept: none).
func [[ k ]]Selects(obj *[[ a.alias ]].[[ K ]], pod *v1.Pod) bool {
<% if a.namespaced %>
	if obj.Namespace != pod.Namespace {
		return false
	}
<% endif %>
	if obj.Spec.Selector == nil {
		return true
	}
	selector, err := metav1.LabelSelectorAsSelector(obj.Spec.Selector)
	return err == nil && selector.Matches(labels.Set(pod.Labels))
}

// [[ k ]]Events are the events of [[ K ]] objects that may make a pod the plugin rejected
// schedulable: one created or changed that selects it. pods is the scheduler's pod lister<% if pre %>
// (the PreQueueingHint reads the pods the object selects from it)<% else %>
// (unused at Kubernetes [[ c.k8s_minor ]], which has no PreQueueingHints: 1.37 on)<% endif %>.
func [[ k ]]Events(<% if pre %>pods<% else %>_<% endif %> listersv1.PodLister) [][[ T.ClusterEventWithHint ]] {
	return [][[ T.ClusterEventWithHint ]]{{
<% if native %>
		Event:          [[ T.ClusterEvent ]]{Resource: [[ T.EventResource ]]("[[ a.event_resource ]]"), ActionType: [[ T.Add ]] | [[ T.Update ]]},
<% else %>
		Event:          fw.ClusterEvent{Resource: fw.CustomResource("[[ a.plural ]]", "[[ a.version ]]", "[[ a.group ]]"), ActionType: fw.Add | fw.Update},
<% endif %>
		QueueingHintFn: [[ k ]]Hint,
<% if pre %>
		PreQueueingHintFn: func(_ klog.Logger, _, newObj interface{}) ([[ R ]], error) {
			return [[ k ]]Pods(pods, newObj)
		},
<% endif %>
	}}
}
<% if pre %>

// [[ k ]]Pods names the pods a [[ K ]] event may concern: the pending pods<% if a.namespaced %> of its
// namespace<% endif %> that its selector matches ([[ k ]]Selects), read from the scheduler's own
// informer. It runs once per event, where [[ k ]]Hint would run once per pod the plugin
// rejected.
func [[ k ]]Pods(pods listersv1.PodLister, newObj interface{}) ([[ R ]], error) {
	obj, err := as[[ K ]](newObj)
	if err != nil {
		return [[ R ]]{AllPods: true}, err
	}
	selector := labels.Everything()
	if obj.Spec.Selector != nil {
		if selector, err = metav1.LabelSelectorAsSelector(obj.Spec.Selector); err != nil {
			return [[ R ]]{}, nil // a selector the API would not accept selects no pod
		}
	}
<% if a.namespaced %>
	matched, err := pods.Pods(obj.Namespace).List(selector)
<% else %>
	matched, err := pods.List(selector)
<% endif %>
	if err != nil {
		return [[ R ]]{AllPods: true}, err
	}
<% if native %>
	result := [[ R ]]{Pods: []types.NamespacedName{}}
	for _, pod := range matched {
		if pod.Spec.NodeName == "" {
			result.Pods = append(result.Pods, types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
		}
	}
	return result, nil
<% else %>
	return fw.PendingPods(matched), nil
<% endif %>
}
<% endif %>

// [[ k ]]Hint is the QueueingHint of [[ k ]]Events: Queue when the new object selects pod.
func [[ k ]]Hint(logger klog.Logger, pod *v1.Pod, _, newObj interface{}) <% if errs %>([[ T.QueueingHint ]], error)<% else %>[[ T.QueueingHint ]]<% endif %> {
	obj, err := as[[ K ]](newObj)
	if err != nil {
<% if errs %>
		return [[ T.Queue ]], err
<% else %>
		logger.Error(err, "[[ c.plugin_name ]]: an event of an unexpected object; retrying the pod")
		return [[ T.Queue ]]
<% endif %>
	}
	if ![[ k ]]Selects(obj, pod) {
		logger.V(5).Info("[[ K ]] does not select the pod", "[[ k ]]", klog.KObj(obj), "pod", klog.KObj(pod))
		return [[ T.QueueSkip ]]<% if errs %>, nil<% endif %>

	}
	return [[ T.Queue ]]<% if errs %>, nil<% endif %>

}

// as[[ K ]] is the object of an event. The scheduler watches a custom kind with a dynamic
// informer, so its events carry *unstructured.Unstructured; a typed object (a test's) is
// taken as it is.
func as[[ K ]](obj interface{}) (*[[ a.alias ]].[[ K ]], error) {
	switch o := obj.(type) {
	case *[[ a.alias ]].[[ K ]]:
		return o, nil
	case *unstructured.Unstructured:
		typed := &[[ a.alias ]].[[ K ]]{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.UnstructuredContent(), typed); err != nil {
			return nil, fmt.Errorf("%s %s is not a [[ K ]]: %w", o.GetKind(), o.GetName(), err)
		}
		return typed, nil
	}
	return nil, fmt.Errorf("%T is not a [[ K ]]", obj)
}
