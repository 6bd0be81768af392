<% set c = cookiecutter %>
<% set P = c.plugin_name %>
package [[ c.package ]]

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

// [[ P ]]Args are the plugin's arguments, given in the scheduler configuration as
//
//	pluginConfig:
//	- name: [[ P ]]
//	  args:
//	    nodeLabel: example.com/accelerator
//	    resourceName: nvidia.com/gpu
//
// After changing the fields, run make generate: deepcopy-gen rewrites
// zz_generated.deepcopy.go (a slice, map or pointer field needs a real deep copy).
//
// +k8s:deepcopy-gen=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type [[ P ]]Args struct {
	metav1.TypeMeta `json:",inline"`

	// NodeLabel is a label key a node must carry to be feasible. Empty: no label needed.
	NodeLabel string `json:"nodeLabel,omitempty"`
	// ResourceName is the resource Filter checks and Score prefers free capacity of.
	// Default: cpu.
	ResourceName v1.ResourceName `json:"resourceName,omitempty"`
}

// SetDefaults fills in what the configuration left out.
func (a *[[ P ]]Args) SetDefaults() {
	if a.ResourceName == "" {
		a.ResourceName = v1.ResourceCPU
	}
}

// Validate reports every invalid field with its path under pluginConfig args.
func (a *[[ P ]]Args) Validate() error {
	var errs field.ErrorList
	if a.NodeLabel != "" {
		for _, msg := range validation.IsQualifiedName(a.NodeLabel) {
			errs = append(errs, field.Invalid(field.NewPath("nodeLabel"), a.NodeLabel, msg))
		}
	}
	for _, msg := range validation.IsQualifiedName(string(a.ResourceName)) {
		errs = append(errs, field.Invalid(field.NewPath("resourceName"), a.ResourceName, msg))
	}
	return errs.ToAggregate()
}

// DecodeArgs turns the pluginConfig args the scheduler hands an out-of-tree plugin (a
// *runtime.Unknown holding JSON or YAML, or nil) into defaulted, validated Args. The
// decoding is strict: a field the Args type does not have is an error naming it.
func DecodeArgs(obj runtime.Object) (*[[ P ]]Args, error) {
	args := &[[ P ]]Args{}
	switch v := obj.(type) {
	case nil:
	case *[[ P ]]Args:
		args = v.DeepCopy()
	case *runtime.Unknown:
		if len(v.Raw) > 0 {
			if err := decodeStrict(v.Raw, args); err != nil {
				return nil, fmt.Errorf("decoding %s args: %w", Name, err)
			}
		}
	default:
		return nil, fmt.Errorf("%s args: want *runtime.Unknown or *[[ P ]]Args, got %T", Name, obj)
	}
	args.SetDefaults()
	if err := args.Validate(); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	return args, nil
}

// decodeStrict decodes JSON or YAML without coercing types and without ignoring
// unknown or duplicate fields.
func decodeStrict(raw []byte, into *[[ P ]]Args) error {
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
