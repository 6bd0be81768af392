package weightedfit

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestDecodeArgs(t *testing.T) {
	defaults := WeightedFitArgs{
		Resources: []ResourceWeight{{Name: v1.ResourceCPU, Weight: 1 << 20}, {Name: v1.ResourceMemory, Weight: 1}},
		Mode:      Least,
	}
	tests := []struct {
		name    string
		obj     runtime.Object
		want    *WeightedFitArgs
		wantErr string
	}{
		{name: "nil gives defaults", obj: nil, want: &defaults},
		{
			name: "given resources replace the default list",
			obj:  &runtime.Unknown{Raw: []byte("resources: [{name: example.com/gpu, weight: 3}]")},
			want: &WeightedFitArgs{Resources: []ResourceWeight{{Name: "example.com/gpu", Weight: 3}}, Mode: Least},
		},
		{name: "unknown field", obj: &runtime.Unknown{Raw: []byte("mod: Most")}, wantErr: `unknown field "mod"`},
		{
			name:    "wrong type",
			obj:     &runtime.Unknown{Raw: []byte("resources: [{name: cpu, weight: lots}]")},
			wantErr: "weight",
		},
		{name: "bad mode", obj: &runtime.Unknown{Raw: []byte("mode: least")}, wantErr: "mode: Unsupported value"},
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
				t.Fatal(err)
			}
			if got.Mode != tt.want.Mode || len(got.Resources) != len(tt.want.Resources) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got.Resources {
				if got.Resources[i] != tt.want.Resources[i] {
					t.Errorf("resources[%d]: %+v, want %+v", i, got.Resources[i], tt.want.Resources[i])
				}
			}
		})
	}
}

// TestArgsDeepCopy proves the generated deep copy (make generate) copies the slice:
// a copy shares no backing array with the original.
func TestArgsDeepCopy(t *testing.T) {
	in := &WeightedFitArgs{Resources: []ResourceWeight{{Name: v1.ResourceCPU, Weight: 1}}, Mode: Most}
	out, ok := in.DeepCopyObject().(*WeightedFitArgs)
	if !ok {
		t.Fatalf("DeepCopyObject returned %T", in.DeepCopyObject())
	}
	out.Resources[0].Weight = 99
	if in.Resources[0].Weight != 1 {
		t.Errorf("the copy shares Resources with the original")
	}
}
