<% import "plugin.jinja" as plugin %>
<% set c = cookiecutter %>
<% set P = c.plugin_name %>
<% set T = c._names %>
<% set S = c._shape %>
<% set native = c.api == "native" %>
package [[ c.package ]]

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"[[ c.module ]]/internal/fw"
	"[[ c.module ]]/internal/schedtest"
)

// extensions are the extension points the plugin is enabled at in these tests, as in
// deploy/scheduler-config.yaml.
var extensions = []string{ <%- for e in c._data.extensions -%>"[[ e ]]"[[ ", " if not loop.last ]]<%- endfor -%> }

const poolLabel = "example.com/pool"

func newHarness(t *testing.T, args string, nodes []*v1.Node, pods ...*v1.Pod) *schedtest.Harness {
	t.Helper()
	h, err := schedtest.New(context.Background(), nodes, pods,
		schedtest.Plugin{Name: Name, Factory: New, Args: args, Extensions: extensions})
	if err != nil {
		t.Fatalf("building the framework: %v", err)
	}
	return h
}

// cluster: "big" has 4 CPUs free and the pool label, "busy" has 1 CPU of which 800m
// are taken and the label, "plain" has 8 CPUs and no label.
func cluster() ([]*v1.Node, []*v1.Pod) {
	nodes := []*v1.Node{
		schedtest.Node("big", map[v1.ResourceName]string{v1.ResourceCPU: "4"}, map[string]string{poolLabel: "a"}),
		schedtest.Node("busy", map[v1.ResourceName]string{v1.ResourceCPU: "1"}, map[string]string{poolLabel: "a"}),
		schedtest.Node("plain", map[v1.ResourceName]string{v1.ResourceCPU: "8"}, nil),
	}
	pods := []*v1.Pod{
		schedtest.Pod("running", "busy", map[v1.ResourceName]string{v1.ResourceCPU: "800m"}),
	}
	return nodes, pods
}

[[ plugin.parts(c, "plugin_test_go") -]]
