// The shared half of BenchmarkCompare (the version-specific half is compare_1.XX_test.go):
// the generated plugin (through kplugin's layer) and the hand-written native one, in one
// framework over one cluster, each called as the framework calls it.
package bench

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"example.com/bench/internal/schedtest"
)

func benchCompare(b *testing.B, native schedtest.Plugin) {
	h, names := benchHarness(b, native) // the generated benchmark_test.go's cluster
	ctx := context.Background()
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "1"})
	state, _ := h.Filter(ctx, pod) // PreFilter writes the demand both plugins read
	info := h.NodeInfo(names[50])
	for _, plugin := range []struct{ label, name string }{{"layer", Name}, {"native", native.Name}} {
		filter, score := h.FilterFunc(plugin.name), h.ScoreFunc(plugin.name)
		b.Run(plugin.label+"/Filter", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if status := filter(ctx, state, pod, info); !status.IsSuccess() {
					b.Fatal(status.AsError())
				}
			}
		})
		b.Run(plugin.label+"/Score", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, status := score(ctx, state, pod, names[i%len(names)]); !status.IsSuccess() {
					b.Fatal(status.AsError())
				}
			}
		})
	}
}
