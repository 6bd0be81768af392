package teamquota

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// TeamQuotaArgs are the plugin's arguments, given in the scheduler configuration as
//
//	pluginConfig:
//	- name: TeamQuota
//	  args:
//	    resourceName: cpu
//
// +k8s:deepcopy-gen=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type TeamQuotaArgs struct {
	metav1.TypeMeta `json:",inline"`

	// ResourceName is the resource a namespace's Quota limits (spec.hard[resourceName]).
	// Default: cpu.
	ResourceName v1.ResourceName `json:"resourceName,omitempty"`
}

// SetDefaults fills in what the configuration left out.
func (a *TeamQuotaArgs) SetDefaults() {
	if a.ResourceName == "" {
		a.ResourceName = v1.ResourceCPU
	}
}

// Validate reports every invalid field with its path under pluginConfig args.
func (a *TeamQuotaArgs) Validate() error {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(a.ResourceName)) {
		errs = append(errs, field.Invalid(field.NewPath("resourceName"), a.ResourceName, msg))
	}
	return errs.ToAggregate()
}

// DecodeArgs turns the pluginConfig args the scheduler hands an out-of-tree plugin (a
// *runtime.Unknown holding JSON or YAML, or nil) into defaulted, validated Args. The
// decoding is strict: a field the Args type does not have is an error naming it.
func DecodeArgs(obj runtime.Object) (*TeamQuotaArgs, error) {
	args := &TeamQuotaArgs{}
	switch v := obj.(type) {
	case nil:
	case *TeamQuotaArgs:
		args = v.DeepCopy()
	case *runtime.Unknown:
		if len(v.Raw) > 0 {
			if err := decodeStrict(v.Raw, args); err != nil {
				return nil, fmt.Errorf("decoding %s args: %w", Name, err)
			}
		}
	default:
		return nil, fmt.Errorf("%s args: want *runtime.Unknown or *TeamQuotaArgs, got %T", Name, obj)
	}
	args.SetDefaults()
	if err := args.Validate(); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	return args, nil
}

// decodeStrict decodes JSON or YAML without coercing types and without ignoring
// unknown or duplicate fields.
func decodeStrict(raw []byte, into *TeamQuotaArgs) error {
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
