<% set K = a.kind %>
<% set k = a.kind[0] | lower ~ a.kind[1:] %>
<% set errs = not native or S.hint_error %>
<% set pre = not native or S.pre_queueing_hints != "none" %>
package [[ c.package ]]

import (
	"context"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	[[ a.alias ]] "[[ c.module ]]/apis/[[ a.short ]]/[[ a.version ]]"
	"[[ c.module ]]/internal/fw"
	[[ a.alias ]]listers "[[ c.module ]]/pkg/generated/listers/[[ a.short ]]/[[ a.version ]]"
)

func test[[ K ]](name string, selector map[string]string) *[[ a.alias ]].[[ K ]] {
	obj := &[[ a.alias ]].[[ K ]]{ObjectMeta: metav1.ObjectMeta{Name: name<% if a.namespaced %>, Namespace: "team-a"<% endif %>}}
	if selector != nil {
		obj.Spec.Selector = &metav1.LabelSelector{MatchLabels: selector}
	}
	return obj
}

func test[[ K ]]Pod(namespace string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: namespace, Labels: map[string]string{"team": "a"}}}
}

func Test[[ K ]]SourceFindsTheObjectsThatSelectAPod(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, obj := range []*[[ a.alias ]].[[ K ]]{test[[ K ]]("z-all", nil), test[[ K ]]("team-a", map[string]string{"team": "a"}), test[[ K ]]("team-b", map[string]string{"team": "b"}), test[[ K ]]("all", nil), test[[ K ]]("a-team", map[string]string{"team": "a"})} {
		if err := indexer.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	source := &[[ k ]]Source{lister: [[ a.alias ]]listers.New[[ K ]]Lister(indexer), synced: func() bool { return true }}
	// The cache lists in no set order; ask a few times to see that forPod sorts.
	for i := 0; i < 3; i++ {
		found, err := source.forPod(test[[ K ]]Pod("team-a"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, obj := range found {
			names = append(names, obj.Name)
		}
		if strings.Join(names, ",") != "a-team,all,team-a,z-all" {
			t.Fatalf("forPod found %v, want [a-team all team-a z-all] in this order", names)
		}
	}
<% if a.namespaced %>
	if found, err := source.forPod(test[[ K ]]Pod("team-b")); err != nil || len(found) != 0 {
		t.Errorf("forPod of a pod in another namespace: %v, %v; want none", found, err)
	}
<% endif %>
}

func Test[[ K ]]SourceIsNotReadBeforeItsInformerSynced(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// an API server that is not there: the informer starts, and keeps trying to list
	source, err := new[[ K ]]Source(ctx, &rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := source.forPod(test[[ K ]]Pod("team-a")); err == nil || !strings.Contains(err.Error(), "not read yet") {
		t.Errorf("forPod before the informer synced: %v, want an error", err)
	}
}

// test[[ K ]]Pods is a pod lister of pods of team-a and team-b, pending and bound.
func test[[ K ]]Pods(t *testing.T) listersv1.PodLister {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, pod := range []*v1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "a-pending", Namespace: "team-a", Labels: map[string]string{"team": "a"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "a-bound", Namespace: "team-a", Labels: map[string]string{"team": "a"}}, Spec: v1.PodSpec{NodeName: "n"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b-pending", Namespace: "team-a", Labels: map[string]string{"team": "b"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "other-pending", Namespace: "team-b", Labels: map[string]string{"team": "a"}}},
	} {
		if err := indexer.Add(pod); err != nil {
			t.Fatal(err)
		}
	}
	return listersv1.NewPodLister(indexer)
}

func Test[[ K ]]EventsRetryThePodsAnObjectSelects(t *testing.T) {
	events := [[ k ]]Events(test[[ K ]]Pods(t))
	if len(events) != 1 || string(events[0].Event.Resource) != "[[ a.event_resource ]]" {
		t.Fatalf("events: %+v, want one of [[ a.event_resource ]]", events)
	}
	// the scheduler's informer of a custom kind is dynamic: its events carry unstructured objects
	asEvent := func(obj *[[ a.alias ]].[[ K ]]) interface{} {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: content}
	}
	pod := test[[ K ]]Pod("team-a")
	for _, tc := range []struct {
		name string
		obj  interface{}
		want [[ T.QueueingHint ]]
	}{
		{"selects the pod", asEvent(test[[ K ]]("a", map[string]string{"team": "a"})), [[ T.Queue ]]},
		{"selects other pods", asEvent(test[[ K ]]("b", map[string]string{"team": "b"})), [[ T.QueueSkip ]]},
		{"typed", test[[ K ]]("c", nil), [[ T.Queue ]]},
	} {
<% if errs %>
		got, err := events[0].QueueingHintFn(klog.Background(), pod, nil, tc.obj)
		if err != nil || got != tc.want {
			t.Errorf("%s: hint %v, %v; want %v", tc.name, got, err, tc.want)
		}
<% else %>
		if got := events[0].QueueingHintFn(klog.Background(), pod, nil, tc.obj); got != tc.want {
			t.Errorf("%s: hint %v; want %v", tc.name, got, tc.want)
		}
<% endif %>
	}
}
<% if pre %>

func Test[[ K ]]PreQueueingHintNamesThePendingPodsAnObjectSelects(t *testing.T) {
	events := [[ k ]]Events(test[[ K ]]Pods(t))
	if events[0].PreQueueingHintFn == nil {
		t.Fatal("the event has no PreQueueingHintFn")
	}
	asEvent := func(obj *[[ a.alias ]].[[ K ]]) interface{} {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: content}
	}
	bad := test[[ K ]]("bad", nil)
	bad.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Bogus"}}}
	for _, tc := range []struct {
		name string
		obj  interface{}
		want string
	}{
		{"selects team a", asEvent(test[[ K ]]("a", map[string]string{"team": "a"})), "<% if a.namespaced %>team-a/a-pending<% else %>team-a/a-pending,team-b/other-pending<% endif %>"},
		{"selects every pod", asEvent(test[[ K ]]("all", nil)), "<% if a.namespaced %>team-a/a-pending,team-a/b-pending<% else %>team-a/a-pending,team-a/b-pending,team-b/other-pending<% endif %>"},
		{"selects no pod", asEvent(test[[ K ]]("c", map[string]string{"team": "c"})), ""},
		{"a selector the API would not accept", bad, ""},
	} {
		result, err := events[0].PreQueueingHintFn(klog.Background(), nil, tc.obj)
		if err != nil || result.AllPods {
			t.Errorf("%s: %+v, %v; want the pods named", tc.name, result, err)
			continue
		}
		var names []string
		for _, name := range result.Pods {
			names = append(names, name.String())
		}
		sort.Strings(names)
		if got := strings.Join(names, ","); got != tc.want {
			t.Errorf("%s: names %q, want %q", tc.name, got, tc.want)
		}
	}
	if result, err := events[0].PreQueueingHintFn(klog.Background(), nil, "not a [[ K ]]"); err == nil || !result.AllPods {
		t.Errorf("an event of an unexpected object: %+v, %v; want every pod and an error", result, err)
	}
}
<% endif %>
