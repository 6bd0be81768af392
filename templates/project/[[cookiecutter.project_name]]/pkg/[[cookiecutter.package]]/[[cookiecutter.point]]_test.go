<% set c = cookiecutter %>
<% set P = c.plugin_name %>
<% set T = c._names %>
<% set point = c.point %>
<% if cookiecutter.point %><# renders only for a point: _files.when drops it otherwise #>
package [[ c.package ]]

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"[[ c.module ]]/internal/fw"
	"[[ c.module ]]/internal/schedtest"
)

// Test[[ c.go_name ]]Stub runs the plugin's [[ c.go_name ]] in the real framework runtime, with the
// plugin enabled at its extension points. Replace it with tests of your logic.
func Test[[ c.go_name ]]Stub(t *testing.T) {
	ctx := context.Background()
	nodes := []*v1.Node{
		schedtest.Node("one", map[v1.ResourceName]string{v1.ResourceCPU: "4"}, nil),
		schedtest.Node("two", map[v1.ResourceName]string{v1.ResourceCPU: "4"}, nil),
	}
	h, err := schedtest.New(ctx, nodes, nil,
		schedtest.Plugin{Name: Name, Factory: New, Extensions: []string{ <%- for e in c._data.extensions -%>"[[ e ]]"[[ ", " if not loop.last ]]<%- endfor -%> }})
	if err != nil {
		t.Fatalf("building the framework: %v", err)
	}
<% if point != "enqueueextensions" %>
	pod := schedtest.Pod("new", "", map[v1.ResourceName]string{v1.ResourceCPU: "100m"})
<% endif %>
<% import "sections/" ~ c.point ~ ".jinja" as part %>
[[ part.stub_test_go(c) -]]
}
<% endif %>
