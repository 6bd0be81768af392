package weightedfit

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

// Mode says which nodes WeightedFit prefers.
type Mode string

const (
	// Least prefers the nodes with the least of the weighted resources: pods pack onto
	// the small nodes and the big ones stay free for big pods.
	Least Mode = "Least"
	// Most prefers the nodes with the most: pods go to the big nodes first.
	Most Mode = "Most"
)

// MaxWeight bounds a resource's weight (the weighted sum stays far from overflowing).
const MaxWeight = 1 << 30

// ResourceWeight is a resource and how much its allocatable amount counts.
type ResourceWeight struct {
	// Name of the resource: cpu (counted in milli-CPU), memory (bytes), or any other.
	Name v1.ResourceName `json:"name"`
	// Weight multiplies the node's allocatable amount of the resource.
	Weight int64 `json:"weight"`
}

// WeightedFitArgs are WeightedFit's arguments, given in the scheduler configuration as
//
//	pluginConfig:
//	- name: WeightedFit
//	  args:
//	    mode: Most
//	    resources:
//	    - {name: cpu, weight: 1048576}
//	    - {name: memory, weight: 1}
//
// After changing the fields, run make generate: deepcopy-gen rewrites
// zz_generated.deepcopy.go (the Resources slice needs a real deep copy).
//
// +k8s:deepcopy-gen=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type WeightedFitArgs struct {
	metav1.TypeMeta `json:",inline"`

	// Resources are the resources a node is scored on, each with its weight. Default:
	// cpu 1048576 and memory 1, which makes a CPU count about as much as a GiB.
	Resources []ResourceWeight `json:"resources,omitempty"`
	// Mode is Least (the default) or Most.
	Mode Mode `json:"mode,omitempty"`
}

// SetDefaults fills in what the configuration left out.
func (a *WeightedFitArgs) SetDefaults() {
	if len(a.Resources) == 0 {
		a.Resources = []ResourceWeight{{Name: v1.ResourceCPU, Weight: 1 << 20}, {Name: v1.ResourceMemory, Weight: 1}}
	}
	if a.Mode == "" {
		a.Mode = Least
	}
}

// Validate reports every invalid field with its path under pluginConfig args.
func (a *WeightedFitArgs) Validate() error {
	var errs field.ErrorList
	if a.Mode != Least && a.Mode != Most {
		errs = append(errs, field.NotSupported(field.NewPath("mode"), a.Mode, []string{string(Least), string(Most)}))
	}
	seen := map[v1.ResourceName]bool{}
	for i, r := range a.Resources {
		path := field.NewPath("resources").Index(i)
		for _, msg := range validation.IsQualifiedName(string(r.Name)) {
			errs = append(errs, field.Invalid(path.Child("name"), r.Name, msg))
		}
		if seen[r.Name] {
			errs = append(errs, field.Duplicate(path.Child("name"), r.Name))
		}
		seen[r.Name] = true
		if r.Weight < 1 || r.Weight > MaxWeight {
			errs = append(errs, field.Invalid(path.Child("weight"), r.Weight, fmt.Sprintf("must be from 1 to %d", MaxWeight)))
		}
	}
	return errs.ToAggregate()
}

// DecodeArgs turns the pluginConfig args the scheduler hands an out-of-tree plugin (a
// *runtime.Unknown holding JSON or YAML, or nil) into defaulted, validated Args. The
// decoding is strict: a field the Args type does not have is an error naming it.
func DecodeArgs(obj runtime.Object) (*WeightedFitArgs, error) {
	args := &WeightedFitArgs{}
	switch v := obj.(type) {
	case nil:
	case *WeightedFitArgs:
		args = v.DeepCopy()
	case *runtime.Unknown:
		if len(v.Raw) > 0 {
			if err := decodeStrict(v.Raw, args); err != nil {
				return nil, fmt.Errorf("decoding %s args: %w", Name, err)
			}
		}
	default:
		return nil, fmt.Errorf("%s args: want *runtime.Unknown or *WeightedFitArgs, got %T", Name, obj)
	}
	args.SetDefaults()
	if err := args.Validate(); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	return args, nil
}

// decodeStrict decodes JSON or YAML without coercing types and without ignoring
// unknown or duplicate fields.
func decodeStrict(raw []byte, into *WeightedFitArgs) error {
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
