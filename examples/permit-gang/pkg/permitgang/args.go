package permitgang

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// PermitGangArgs are the plugin's arguments, given in the scheduler configuration as
//
//	pluginConfig:
//	- name: PermitGang
//	  args:
//	    podGroupLabel: scheduling.x-k8s.io/pod-group
//	    waitSeconds: 60
//
// After changing the fields, run make generate: deepcopy-gen rewrites
// zz_generated.deepcopy.go (a slice, map or pointer field needs a real deep copy).
//
// +k8s:deepcopy-gen=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PermitGangArgs struct {
	metav1.TypeMeta `json:",inline"`

	// PodGroupLabel is the pod label that names the pod's PodGroup (in its namespace).
	// Default: scheduling.x-k8s.io/pod-group, Coscheduling's.
	PodGroupLabel string `json:"podGroupLabel,omitempty"`
	// WaitSeconds is how long Permit holds a pod for its gang, unless its PodGroup's
	// spec.scheduleTimeoutSeconds says otherwise. Default: 60.
	WaitSeconds int32 `json:"waitSeconds,omitempty"`
}

// DefaultPodGroupLabel is Coscheduling's label of a pod's PodGroup.
const DefaultPodGroupLabel = "scheduling.x-k8s.io/pod-group"

// SetDefaults fills in what the configuration left out.
func (a *PermitGangArgs) SetDefaults() {
	if a.PodGroupLabel == "" {
		a.PodGroupLabel = DefaultPodGroupLabel
	}
	if a.WaitSeconds == 0 {
		a.WaitSeconds = 60
	}
}

// Validate reports every invalid field with its path under pluginConfig args.
func (a *PermitGangArgs) Validate() error {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(a.PodGroupLabel) {
		errs = append(errs, field.Invalid(field.NewPath("podGroupLabel"), a.PodGroupLabel, msg))
	}
	if a.WaitSeconds < 1 || a.WaitSeconds > 3600 {
		errs = append(errs, field.Invalid(field.NewPath("waitSeconds"), a.WaitSeconds, "must be from 1 to 3600"))
	}
	return errs.ToAggregate()
}

// DecodeArgs turns the pluginConfig args the scheduler hands an out-of-tree plugin (a
// *runtime.Unknown holding JSON or YAML, or nil) into defaulted, validated Args. The
// decoding is strict: a field the Args type does not have is an error naming it.
func DecodeArgs(obj runtime.Object) (*PermitGangArgs, error) {
	args := &PermitGangArgs{}
	switch v := obj.(type) {
	case nil:
	case *PermitGangArgs:
		args = v.DeepCopy()
	case *runtime.Unknown:
		if len(v.Raw) > 0 {
			if err := decodeStrict(v.Raw, args); err != nil {
				return nil, fmt.Errorf("decoding %s args: %w", Name, err)
			}
		}
	default:
		return nil, fmt.Errorf("%s args: want *runtime.Unknown or *PermitGangArgs, got %T", Name, obj)
	}
	args.SetDefaults()
	if err := args.Validate(); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	return args, nil
}

// decodeStrict decodes JSON or YAML without coercing types and without ignoring
// unknown or duplicate fields.
func decodeStrict(raw []byte, into *PermitGangArgs) error {
	data, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(data, into)
	if err != nil {
		return err
	}
	return utilerrors.NewAggregate(strict)
}
