package permitgang

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
		want    PermitGangArgs
		wantErr string
	}{
		{name: "nil gives defaults", obj: nil, want: PermitGangArgs{PodGroupLabel: DefaultPodGroupLabel, WaitSeconds: 60}},
		{name: "empty raw gives defaults", obj: &runtime.Unknown{}, want: PermitGangArgs{PodGroupLabel: DefaultPodGroupLabel, WaitSeconds: 60}},
		{
			name: "json",
			obj:  &runtime.Unknown{Raw: []byte(`{"podGroupLabel":"example.com/gang","waitSeconds":5}`), ContentType: runtime.ContentTypeJSON},
			want: PermitGangArgs{PodGroupLabel: "example.com/gang", WaitSeconds: 5},
		},
		{
			name: "yaml",
			obj:  &runtime.Unknown{Raw: []byte("waitSeconds: 10\n"), ContentType: runtime.ContentTypeYAML},
			want: PermitGangArgs{PodGroupLabel: DefaultPodGroupLabel, WaitSeconds: 10},
		},
		{
			name: "typed",
			obj:  &PermitGangArgs{WaitSeconds: 3},
			want: PermitGangArgs{PodGroupLabel: DefaultPodGroupLabel, WaitSeconds: 3},
		},
		{name: "unknown field", obj: &runtime.Unknown{Raw: []byte(`{"minMember":3}`)}, wantErr: `unknown field "minMember"`},
		{name: "wrong type", obj: &runtime.Unknown{Raw: []byte(`{"waitSeconds":"5s"}`)}, wantErr: "waitSeconds"},
		{name: "invalid label key", obj: &runtime.Unknown{Raw: []byte(`{"podGroupLabel":"bad key!"}`)}, wantErr: "podGroupLabel: Invalid value"},
		{name: "too long a wait", obj: &runtime.Unknown{Raw: []byte(`{"waitSeconds":7200}`)}, wantErr: "waitSeconds: Invalid value"},
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
			if got.PodGroupLabel != tt.want.PodGroupLabel || got.WaitSeconds != tt.want.WaitSeconds {
				t.Errorf("got %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestArgsDeepCopy(t *testing.T) {
	in := &PermitGangArgs{PodGroupLabel: "example.com/gang", WaitSeconds: 5}
	out, ok := in.DeepCopyObject().(*PermitGangArgs)
	if !ok || out == in || *out != *in {
		t.Fatalf("DeepCopyObject gave %#v", out)
	}
}
