package [[ a.version ]]

// This file is yours: kplugin add api generated it once and never rewrites it. After
// changing the types, run make generate: it rewrites zz_generated.deepcopy.go, the
// clientset, listers and informers under pkg/generated/, and the CRD in config/crd/
// (then kplugin refresh copies the CRD into deploy/ and the chart).

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
<% if not a.namespaced %>
// +genclient:nonNamespaced
<% endif %>
// +resourceName=[[ a.plural ]]
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=[[ a.scope ]],path=[[ a.plural ]]
// +kubebuilder:subresource:status

// [[ a.kind ]] is an object of the project's own API ([[ a.plural ]].[[ a.group ]]) that its
// scheduler plugins read.
type [[ a.kind ]] struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   [[ a.kind ]]Spec   `json:"spec,omitempty"`
	Status [[ a.kind ]]Status `json:"status,omitempty"`
}

// [[ a.kind ]]Spec is what the object asks of the scheduler.
type [[ a.kind ]]Spec struct {
	// Selector picks the pods the object applies to<% if a.namespaced %> (pods of its namespace)<% endif %>; none or an empty
	// selector picks every pod.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// [[ a.kind ]]Status is what a controller observed of the object.
type [[ a.kind ]]Status struct {
	// ObservedGeneration is the metadata.generation this status is about.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true

// [[ a.kind ]]List is a list of [[ a.kind ]] objects.
type [[ a.kind ]]List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items [][[ a.kind ]] `json:"items"`
}
