<% set P = cookiecutter.plugin_name %>
package [[ cookiecutter.package ]]

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		name    string
		obj     runtime.Object
		want    [[ P ]]Args
		wantErr string
	}{
		{name: "nil gives defaults", obj: nil, want: [[ P ]]Args{ResourceName: v1.ResourceCPU}},
		{name: "empty raw gives defaults", obj: &runtime.Unknown{}, want: [[ P ]]Args{ResourceName: v1.ResourceCPU}},
		{
			name: "json",
			obj:  &runtime.Unknown{Raw: []byte(`{"nodeLabel":"example.com/pool","resourceName":"nvidia.com/gpu"}`), ContentType: runtime.ContentTypeJSON},
			want: [[ P ]]Args{NodeLabel: "example.com/pool", ResourceName: "nvidia.com/gpu"},
		},
		{
			name: "yaml",
			obj:  &runtime.Unknown{Raw: []byte("nodeLabel: example.com/pool\n"), ContentType: runtime.ContentTypeYAML},
			want: [[ P ]]Args{NodeLabel: "example.com/pool", ResourceName: v1.ResourceCPU},
		},
		{
			name: "typed",
			obj:  &[[ P ]]Args{ResourceName: v1.ResourceMemory},
			want: [[ P ]]Args{ResourceName: v1.ResourceMemory},
		},
		{name: "unknown field", obj: &runtime.Unknown{Raw: []byte(`{"nodeLable":"x"}`)}, wantErr: `unknown field "nodeLable"`},
		{name: "wrong type", obj: &runtime.Unknown{Raw: []byte(`{"nodeLabel":7}`)}, wantErr: "nodeLabel"},
		{name: "invalid label key", obj: &runtime.Unknown{Raw: []byte(`{"nodeLabel":"bad key!"}`)}, wantErr: "nodeLabel: Invalid value"},
		{name: "invalid resource name", obj: &runtime.Unknown{Raw: []byte(`{"resourceName":"-cpu"}`)}, wantErr: "resourceName: Invalid value"},
		{name: "wrong object", obj: &v1.Pod{}, wantErr: "want *runtime.Unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeArgs(tt.obj)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.NodeLabel != tt.want.NodeLabel || got.ResourceName != tt.want.ResourceName {
				t.Errorf("got %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestArgsDeepCopy(t *testing.T) {
	in := &[[ P ]]Args{NodeLabel: "example.com/pool", ResourceName: v1.ResourceCPU}
	out, ok := in.DeepCopyObject().(*[[ P ]]Args)
	if !ok || out == in || *out != *in {
		t.Fatalf("DeepCopyObject gave %#v", out)
	}
}
