package permitgang

import (
	"context"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"example.com/permit-gang/internal/fw"
	"example.com/permit-gang/internal/schedtest"
)

// extensions are the extension points the plugin is enabled at in these tests, as in
// deploy/scheduler-config.yaml.
var extensions = []string{"PreFilter", "Reserve", "Permit"}

// withGroups makes the plugins these tests build read groups instead of an informer.
func withGroups(t testing.TB, groups ...*unstructured.Unstructured) {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, g := range groups {
		if err := indexer.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	saved := groupInformer
	groupInformer = func(context.Context, fw.Handle) (cache.GenericLister, cache.InformerSynced, error) {
		return cache.NewGenericLister(indexer, PodGroups.GroupResource()), func() bool { return true }, nil
	}
	t.Cleanup(func() { groupInformer = saved })
}

func podGroup(name string, minMember int64) *unstructured.Unstructured {
	g := &unstructured.Unstructured{Object: map[string]interface{}{"spec": map[string]interface{}{"minMember": minMember}}}
	g.SetAPIVersion(PodGroups.GroupVersion().String())
	g.SetKind("PodGroup")
	g.SetNamespace("default")
	g.SetName(name)
	return g
}

// member is a pod of group (none: ""), on nodeName ("": not bound).
func member(name, group, nodeName string) *v1.Pod {
	pod := schedtest.Pod(name, nodeName, map[v1.ResourceName]string{v1.ResourceCPU: "1"})
	pod.UID = types.UID("uid-" + name)
	if group != "" {
		pod.Labels = map[string]string{DefaultPodGroupLabel: group}
	}
	return pod
}

func newHarness(t testing.TB, pods ...*v1.Pod) *schedtest.Harness {
	t.Helper()
	nodes := []*v1.Node{
		schedtest.Node("n1", map[v1.ResourceName]string{v1.ResourceCPU: "8"}, nil),
		schedtest.Node("n2", map[v1.ResourceName]string{v1.ResourceCPU: "8"}, nil),
	}
	h, err := schedtest.New(context.Background(), nodes, pods,
		schedtest.Plugin{Name: Name, Factory: New, Args: "waitSeconds: 30", Extensions: extensions})
	if err != nil {
		t.Fatalf("building the framework: %v", err)
	}
	return h
}

func TestPreFilterWaitsForMinMemberPods(t *testing.T) {
	withGroups(t, podGroup("gang", 3), podGroup("bad", 0))
	a, b := member("a", "gang", ""), member("b", "gang", "")
	h := newHarness(t, a, b, member("solo", "", ""), member("lost", "nowhere", ""), member("odd", "bad", ""))
	ctx := context.Background()
	if _, statuses := h.Filter(ctx, a); statuses["n1"].Code() != fw.Unschedulable ||
		!strings.Contains(statuses["n1"].Message(), "PodGroup default/gang has 2 of its minMember 3 pods") {
		t.Errorf("two of three pods: %v, want Unschedulable", statuses["n1"])
	}
	if _, statuses := h.Filter(ctx, member("solo", "", "")); !statuses["n1"].IsSuccess() {
		t.Errorf("a pod of no group: %v, want it to fit", statuses["n1"])
	}
	if _, statuses := h.Filter(ctx, member("lost", "nowhere", "")); statuses["n1"].Code() != fw.UnschedulableAndUnresolvable {
		t.Errorf("a pod of a missing PodGroup: %v", statuses["n1"])
	}
	if _, statuses := h.Filter(ctx, member("odd", "bad", "")); !strings.Contains(statuses["n1"].Message(), "spec.minMember") {
		t.Errorf("a PodGroup of minMember 0: %v", statuses["n1"])
	}
	// the third pod arrives: each of them passes
	h = newHarness(t, a, b, member("c", "gang", ""))
	if _, statuses := h.Filter(ctx, a); !statuses["n1"].IsSuccess() {
		t.Errorf("three of three pods: %v, want it to fit", statuses["n1"])
	}
}

func TestPermitHoldsTheGangUntilMinMemberHoldANode(t *testing.T) {
	withGroups(t, podGroup("gang", 3))
	a, b, c := member("a", "gang", ""), member("b", "gang", ""), member("c", "gang", "")
	h := newHarness(t, a, b, c)
	ctx := context.Background()
	for _, pod := range []*v1.Pod{a, b} {
		state, _ := h.Filter(ctx, pod)
		if status := h.Permit(ctx, state, pod, "n1"); status.Code() != fw.Wait {
			t.Fatalf("Permit %s: %v, want Wait", pod.Name, status)
		}
	}
	waiting := h.Framework.GetWaitingPod(a.UID)
	if waiting == nil || len(waiting.GetPendingPlugins()) != 1 {
		t.Fatalf("pod a is not held by %s", Name)
	}
	state, _ := h.Filter(ctx, c)
	if status := h.Permit(ctx, state, c, "n2"); !status.IsSuccess() {
		t.Fatalf("Permit c: %v, want the gang complete", status)
	}
	for _, pod := range []*v1.Pod{a, b} { // allowed: their wait ends at once, in Success
		if status := h.Framework.WaitOnPermit(ctx, pod); !status.IsSuccess() {
			t.Errorf("pod %s: %v, want it allowed", pod.Name, status)
		}
	}
}

func TestPermitCountsTheGangsBoundPods(t *testing.T) {
	withGroups(t, podGroup("gang", 2))
	bound, late := member("bound", "gang", "n1"), member("late", "gang", "")
	h := newHarness(t, bound, late)
	state, _ := h.Filter(context.Background(), late)
	if status := h.Permit(context.Background(), state, late, "n2"); !status.IsSuccess() {
		t.Errorf("Permit with a bound sibling: %v, want Success", status)
	}
}

func TestUnreserveRejectsTheWaitingSiblings(t *testing.T) {
	withGroups(t, podGroup("gang", 3), podGroup("other", 2))
	a, b, c := member("a", "gang", ""), member("b", "gang", ""), member("c", "gang", "")
	x, y := member("x", "other", ""), member("y", "other", "")
	h := newHarness(t, a, b, c, x, y)
	ctx := context.Background()
	for _, pod := range []*v1.Pod{a, x} {
		state, _ := h.Filter(ctx, pod)
		if status := h.Permit(ctx, state, pod, "n1"); status.Code() != fw.Wait {
			t.Fatalf("Permit %s: %v, want Wait", pod.Name, status)
		}
	}
	h.Unreserve(ctx, h.NewCycleState(), b, "n2")
	if status := h.Framework.WaitOnPermit(ctx, a); status.Code() != fw.Unschedulable ||
		!strings.Contains(status.Message(), "pod b of PodGroup default/gang gave up its node") {
		t.Errorf("sibling a after b gave up: %v, want it rejected", status)
	}
	// x, of another group, still waits: allowed now, its wait ends in Success
	h.Framework.GetWaitingPod(x.UID).Allow(Name)
	if status := h.Framework.WaitOnPermit(ctx, x); !status.IsSuccess() {
		t.Errorf("pod x of another group: %v, want it left waiting", status)
	}
}

func TestEventsRequeueOnlyTheGangsOwn(t *testing.T) {
	withGroups(t, podGroup("gang", 3))
	h := newHarness(t)
	events, err := h.EventsToRegister(context.Background(), Name)
	if err != nil || len(events) != 2 {
		t.Fatalf("EventsToRegister: %v %v", events, err)
	}
	podAdded, groupChanged := events[0].QueueingHintFn, events[1].QueueingHintFn
	if podAdded == nil || groupChanged == nil {
		t.Fatalf("an event without a QueueingHintFn: the pod would be retried on every such event")
	}
	pod := member("a", "gang", "")
	logger := klog.Background()
	for _, tc := range []struct {
		event string
		hint  fw.QueueingHint
		fn    func() (fw.QueueingHint, error)
	}{
		{"a sibling added", fw.Queue, func() (fw.QueueingHint, error) { return podAdded(logger, pod, nil, member("b", "gang", "")) }},
		{"a stranger added", fw.QueueSkip, func() (fw.QueueingHint, error) { return podAdded(logger, pod, nil, member("s", "else", "")) }},
		{"its PodGroup changed", fw.Queue, func() (fw.QueueingHint, error) { return groupChanged(logger, pod, nil, podGroup("gang", 2)) }},
		{"another PodGroup", fw.QueueSkip, func() (fw.QueueingHint, error) { return groupChanged(logger, pod, nil, podGroup("other", 2)) }},
	} {
		if hint, err := tc.fn(); hint != tc.hint || err != nil {
			t.Errorf("%s: %v %v, want %v", tc.event, hint, err, tc.hint)
		}
	}
}

func TestPreQueueingHintsNameTheGangsPendingPods(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, pod := range []*v1.Pod{member("a", "gang", ""), member("b", "gang", "n1"), member("x", "else", ""), member("lone", "", "")} {
		if err := indexer.Add(pod); err != nil {
			t.Fatal(err)
		}
	}
	pl := &PermitGang{args: PermitGangArgs{PodGroupLabel: DefaultPodGroupLabel}, pods: listersv1.NewPodLister(indexer)}
	events, err := pl.EventsToRegister(context.Background())
	if err != nil || len(events) != 2 || events[0].PreQueueingHintFn == nil || events[1].PreQueueingHintFn == nil {
		t.Fatalf("EventsToRegister: %+v %v, want two events with a PreQueueingHintFn", events, err)
	}
	podAdded, groupChanged := events[0].PreQueueingHintFn, events[1].PreQueueingHintFn
	logger := klog.Background()
	for _, tc := range []struct {
		event string
		want  string
		fn    func() (fw.PreQueueingHintResult, error)
	}{
		{"a member added", "default/a,default/c", func() (fw.PreQueueingHintResult, error) {
			if err := indexer.Add(member("c", "gang", "")); err != nil {
				t.Fatal(err)
			}
			return podAdded(logger, nil, member("c", "gang", ""))
		}},
		{"a pod of no gang added", "", func() (fw.PreQueueingHintResult, error) { return podAdded(logger, nil, member("lone", "", "")) }},
		{"its PodGroup changed", "default/a,default/c", func() (fw.PreQueueingHintResult, error) { return groupChanged(logger, nil, podGroup("gang", 2)) }},
		{"a PodGroup without pods", "", func() (fw.PreQueueingHintResult, error) { return groupChanged(logger, nil, podGroup("empty", 2)) }},
	} {
		result, err := tc.fn()
		if err != nil || result.AllPods {
			t.Errorf("%s: %+v %v, want the gang's pending pods named", tc.event, result, err)
			continue
		}
		var names []string
		for _, name := range result.Pods {
			names = append(names, name.String())
		}
		sort.Strings(names)
		if got := strings.Join(names, ","); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.event, got, tc.want)
		}
	}
	if result, err := groupChanged(logger, nil, "not a PodGroup"); err == nil || !result.AllPods {
		t.Errorf("an event of another object: %+v %v, want every pod and an error", result, err)
	}
}
