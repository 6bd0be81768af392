package teamquota

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"example.com/team-quota/internal/fw"
	"example.com/team-quota/internal/schedtest"
)

// extensions are the extension points the plugin is enabled at in these tests, as in
// deploy/scheduler-config.yaml.
var extensions = []string{"PreFilter"}

// withQuotas makes the plugins these tests build read quotas instead of an informer.
func withQuotas(t testing.TB, quotas ...*unstructured.Unstructured) {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, q := range quotas {
		if err := indexer.Add(q); err != nil {
			t.Fatal(err)
		}
	}
	saved := quotaInformer
	quotaInformer = func(context.Context, fw.Handle) (cache.GenericLister, cache.InformerSynced, liveQuotas, error) {
		return cache.NewGenericLister(indexer, Quotas.GroupResource()), func() bool { return true }, nil, nil
	}
	t.Cleanup(func() { quotaInformer = saved })
}

func quota(namespace, name string, hard map[string]interface{}) *unstructured.Unstructured {
	q := &unstructured.Unstructured{Object: map[string]interface{}{"spec": map[string]interface{}{"hard": hard}}}
	q.SetAPIVersion(Quotas.GroupVersion().String())
	q.SetKind("Quota")
	q.SetNamespace(namespace)
	q.SetName(name)
	return q
}

func podIn(namespace, name, nodeName, cpu string) *v1.Pod {
	pod := schedtest.Pod(name, nodeName, map[v1.ResourceName]string{v1.ResourceCPU: cpu})
	pod.Namespace = namespace
	return pod
}

func newHarness(t *testing.T, args string, pods ...*v1.Pod) *schedtest.Harness {
	t.Helper()
	nodes := []*v1.Node{
		schedtest.Node("n1", map[v1.ResourceName]string{v1.ResourceCPU: "8"}, nil),
		schedtest.Node("n2", map[v1.ResourceName]string{v1.ResourceCPU: "8"}, nil),
	}
	h, err := schedtest.New(context.Background(), nodes, pods,
		schedtest.Plugin{Name: Name, Factory: New, Args: args, Extensions: extensions})
	if err != nil {
		t.Fatalf("building the framework: %v", err)
	}
	return h
}

func TestNewRejectsInvalidArgs(t *testing.T) {
	withQuotas(t)
	for name, args := range map[string]string{"unknown field": "resource: cpu", "not a name": "resourceName: 'a b'"} {
		t.Run(name, func(t *testing.T) {
			_, err := schedtest.New(context.Background(), nil, nil,
				schedtest.Plugin{Name: Name, Factory: New, Args: args, Extensions: extensions})
			if err == nil {
				t.Fatalf("args %q: framework built, want an error", args)
			}
		})
	}
}

func TestPreFilterKeepsANamespaceWithinItsQuota(t *testing.T) {
	withQuotas(t,
		quota("team-a", "small", map[string]interface{}{"cpu": "2"}),
		quota("team-a", "large", map[string]interface{}{"cpu": int64(8)}),
		quota("team-c", "memory-only", map[string]interface{}{"memory": "1Gi"}),
	)
	bound := []*v1.Pod{podIn("team-a", "a1", "n1", "1"), podIn("team-a", "a2", "n2", "500m"), podIn("team-b", "b1", "n1", "4")}
	h := newHarness(t, "", bound...)
	ctx := context.Background()
	tests := []struct {
		pod    *v1.Pod
		reason string // "" when admitted
	}{
		{pod: podIn("team-a", "fits", "", "500m")},
		{pod: podIn("team-a", "over", "", "600m"), reason: "namespace team-a: Quota small allows 2000 of cpu, 1500 in use, the pod requests 600"},
		{pod: podIn("team-b", "no-quota", "", "4")},
		{pod: podIn("team-c", "other-resource", "", "4")},
	}
	for _, tt := range tests {
		t.Run(tt.pod.Name, func(t *testing.T) {
			_, statuses := h.Filter(ctx, tt.pod)
			for node, status := range statuses {
				if tt.reason == "" {
					if !status.IsSuccess() {
						t.Errorf("node %s: %v, want feasible", node, status.AsError())
					}
					continue
				}
				if status.Code() != fw.Unschedulable || !strings.Contains(strings.Join(status.Reasons(), "; "), tt.reason) {
					t.Errorf("node %s: %v %v, want Unschedulable: %s", node, status.Code(), status.Reasons(), tt.reason)
				}
			}
		})
	}
}

func TestResourceNameArg(t *testing.T) {
	withQuotas(t, quota("team-a", "gpus", map[string]interface{}{"example.com/gpu": "1"}))
	h := newHarness(t, "resourceName: example.com/gpu")
	pod := podIn("team-a", "two-gpus", "", "1")
	pod.Spec.Containers[0].Resources.Requests["example.com/gpu"] = *mustQuantity(t, "2")
	_, statuses := h.Filter(context.Background(), pod)
	for node, status := range statuses {
		if status.Code() != fw.Unschedulable {
			t.Errorf("node %s: %v, want Unschedulable (2 GPUs against a Quota of 1)", node, status.Code())
		}
	}
}

func TestEventsToRegister(t *testing.T) {
	withQuotas(t)
	h := newHarness(t, "")
	events, err := h.EventsToRegister(context.Background(), Name)
	if err != nil {
		t.Fatal(err)
	}
	want := string(fw.CustomResource("quotas", "v1alpha1", "quota.example.com"))
	found := false
	for _, e := range events {
		if e.QueueingHintFn == nil {
			t.Errorf("event %v has no QueueingHintFn: the pod would be retried on every such event", e.Event)
		}
		found = found || string(e.Event.Resource) == want
	}
	own, err := (&TeamQuota{}).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range own {
		if e.PreQueueingHintFn == nil {
			t.Errorf("event %v has no PreQueueingHintFn: every rejected pod's hint would run on it", e.Event)
		}
	}
	if !found || want != "quotas.v1alpha1.quota.example.com" {
		t.Errorf("events %v: want one for %s, the name the scheduler's dynamic informer parses", events, want)
	}
}

func hintOf(t *testing.T, fn func(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fw.QueueingHint, error), pod *v1.Pod, oldObj, newObj interface{}) fw.QueueingHint {
	t.Helper()
	hint, err := fn(klog.Background(), pod, oldObj, newObj)
	if err != nil {
		t.Fatalf("hint: %v", err)
	}
	return hint
}

// podLister lists the pods given, as the scheduler's informer would.
func podLister(t *testing.T, pods ...*v1.Pod) listersv1.PodLister {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, pod := range pods {
		if err := indexer.Add(pod); err != nil {
			t.Fatal(err)
		}
	}
	return listersv1.NewPodLister(indexer)
}

// concerns runs a PreQueueingHintFn and tells whether its result names pod (or every pod).
func concerns(t *testing.T, fn func(klog.Logger, interface{}, interface{}) (fw.PreQueueingHintResult, error), pod *v1.Pod, oldObj, newObj interface{}) bool {
	t.Helper()
	result, err := fn(klog.Background(), oldObj, newObj)
	if err != nil {
		t.Fatalf("PreQueueingHint: %v", err)
	}
	if result.AllPods {
		return true
	}
	for _, name := range result.Pods {
		if name.Namespace == pod.Namespace && name.Name == pod.Name {
			return true
		}
	}
	return false
}

func TestQueueingHints(t *testing.T) {
	pod := podIn("team-a", "waiting", "", "1")
	// the scheduler's pods: the waiting one, a bound one of its namespace, one of team-b
	pods := podLister(t, pod, podIn("team-a", "running", "n1", "1"), podIn("team-b", "waiting", "", "1"))
	pl := &TeamQuota{args: TeamQuotaArgs{ResourceName: v1.ResourceCPU}, pods: pods}
	two := quota("team-a", "q", map[string]interface{}{"cpu": "2"})
	four := quota("team-a", "q", map[string]interface{}{"cpu": "4"})
	elsewhere := quota("team-b", "q", map[string]interface{}{"cpu": "4"})
	tests := []struct {
		name           string
		fn             func(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fw.QueueingHint, error)
		pre            func(klog.Logger, interface{}, interface{}) (fw.PreQueueingHintResult, error)
		oldObj, newObj interface{}
		want           fw.QueueingHint
		concerned      bool // the PreQueueingHint names the pod
	}{
		{"quota added", pl.isSchedulableAfterQuotaChange, pl.podsAfterQuotaChange, nil, two, fw.Queue, true},
		{"quota raised", pl.isSchedulableAfterQuotaChange, pl.podsAfterQuotaChange, two, four, fw.Queue, true},
		{"quota lowered", pl.isSchedulableAfterQuotaChange, pl.podsAfterQuotaChange, four, two, fw.QueueSkip, false},
		{"quota unchanged", pl.isSchedulableAfterQuotaChange, pl.podsAfterQuotaChange, two, two, fw.QueueSkip, false},
		{"another namespace's quota", pl.isSchedulableAfterQuotaChange, pl.podsAfterQuotaChange, nil, elsewhere, fw.QueueSkip, false},
		{"a bound pod of the namespace deleted", pl.isSchedulableAfterPodDeleted, pl.podsAfterPodDeleted, podIn("team-a", "gone", "n1", "1"), nil, fw.Queue, true},
		{"a pod of another namespace deleted", pl.isSchedulableAfterPodDeleted, pl.podsAfterPodDeleted, podIn("team-b", "gone", "n1", "1"), nil, fw.QueueSkip, false},
		{"a pending pod deleted", pl.isSchedulableAfterPodDeleted, pl.podsAfterPodDeleted, podIn("team-a", "gone", "", "1"), nil, fw.QueueSkip, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hintOf(t, tt.fn, pod, tt.oldObj, tt.newObj); got != tt.want {
				t.Errorf("hint %v, want %v", got, tt.want)
			}
			concerned := concerns(t, tt.pre, pod, tt.oldObj, tt.newObj)
			if concerned != tt.concerned {
				t.Errorf("PreQueueingHint names the pod: %v, want %v", concerned, tt.concerned)
			}
			if !concerned && tt.want == fw.Queue {
				t.Errorf("the PreQueueingHint leaves out a pod its QueueingHint queues: the pod would wait")
			}
		})
	}
}

func TestPreQueueingHintNamesTheNamespacesPendingPodsOnly(t *testing.T) {
	pods := podLister(t, podIn("team-a", "a-1", "", "1"), podIn("team-a", "a-2", "n1", "1"), podIn("team-b", "b-1", "", "1"))
	pl := &TeamQuota{args: TeamQuotaArgs{ResourceName: v1.ResourceCPU}, pods: pods}
	result, err := pl.podsAfterQuotaChange(klog.Background(), nil, quota("team-a", "q", map[string]interface{}{"cpu": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	if result.AllPods || len(result.Pods) != 1 || result.Pods[0].String() != "team-a/a-1" {
		t.Errorf("a new Quota of team-a: %+v, want team-a/a-1 alone", result)
	}
	if result, err := pl.podsAfterQuotaChange(klog.Background(), nil, "not a Quota"); err == nil || !result.AllPods {
		t.Errorf("an event of another object: %+v, %v; want every pod and an error", result, err)
	}
}

func mustQuantity(t *testing.T, text string) *resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(text)
	if err != nil {
		t.Fatal(err)
	}
	return &q
}

func TestABadQuotaIsAnError(t *testing.T) {
	pl := &TeamQuota{args: TeamQuotaArgs{ResourceName: v1.ResourceCPU}}
	_, err := pl.isSchedulableAfterQuotaChange(klog.Background(), podIn("team-a", "p", "", "1"), nil,
		quota("team-a", "q", map[string]interface{}{"cpu": "lots"}))
	if err == nil || !strings.Contains(err.Error(), "Quota team-a/q: spec.hard.cpu") {
		t.Errorf("error %v, want one naming the Quota and the field", err)
	}
}

// TestPreFilterReadsTheAPIBeforeItRejects: the scheduler retries a pod on its own
// informer's Quota event, which can come before this plugin's informer has the change. A
// rejection from the stale copy is checked against the API server's Quotas first.
func TestPreFilterReadsTheAPIBeforeItRejects(t *testing.T) {
	stale := quota("team-a", "cpu", map[string]interface{}{"cpu": "1"})
	raised := quota("team-a", "cpu", map[string]interface{}{"cpu": "4"})
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := indexer.Add(stale); err != nil {
		t.Fatal(err)
	}
	reads := 0
	saved := quotaInformer
	quotaInformer = func(context.Context, fw.Handle) (cache.GenericLister, cache.InformerSynced, liveQuotas, error) {
		live := func(_ context.Context, namespace string) ([]runtime.Object, error) {
			reads++
			if namespace != "team-a" {
				t.Errorf("live read of namespace %s", namespace)
			}
			return []runtime.Object{raised}, nil
		}
		return cache.NewGenericLister(indexer, Quotas.GroupResource()), func() bool { return true }, live, nil
	}
	t.Cleanup(func() { quotaInformer = saved })
	h := newHarness(t, "", podIn("team-a", "bound", "n1", "1"))
	_, statuses := h.Filter(context.Background(), podIn("team-a", "next", "", "1"))
	for node, status := range statuses {
		if !status.IsSuccess() {
			t.Errorf("node %s: %v, want feasible under the raised Quota", node, status.AsError())
		}
	}
	if reads != 1 {
		t.Errorf("%d live reads, want 1 (only before a rejection)", reads)
	}
	_, statuses = h.Filter(context.Background(), podIn("team-b", "other", "", "1"))
	if reads != 1 || !statuses["n1"].IsSuccess() {
		t.Errorf("a namespace without a Quota: %d live reads, %v", reads, statuses["n1"])
	}
}
