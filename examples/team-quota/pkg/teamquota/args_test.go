package teamquota

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
		want    v1.ResourceName
		wantErr string
	}{
		{name: "nil gives cpu", obj: nil, want: v1.ResourceCPU},
		{name: "a resource", obj: &runtime.Unknown{Raw: []byte("resourceName: example.com/gpu")}, want: "example.com/gpu"},
		{name: "unknown field", obj: &runtime.Unknown{Raw: []byte("resource: cpu")}, wantErr: `unknown field "resource"`},
		{name: "wrong type", obj: &runtime.Unknown{Raw: []byte("resourceName: [cpu]")}, wantErr: "resourceName"},
		{name: "not a name", obj: &runtime.Unknown{Raw: []byte("resourceName: 'a b'")}, wantErr: "resourceName: Invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeArgs(tt.obj)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeArgs: %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeArgs: %v", err)
			}
			if got.ResourceName != tt.want {
				t.Errorf("resourceName %q, want %q", got.ResourceName, tt.want)
			}
		})
	}
}
