<% import "plugin.jinja" as plugin %>
<% set c, P, T = cookiecutter, cookiecutter.plugin_name, cookiecutter._names %>
// Package [[ c.package ]] implements the [[ P ]] scheduler plugin.
//
[[ plugin.doc(c) -]]
package [[ c.package ]]

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	podresource "k8s.io/kubernetes/pkg/api/v1/resource"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"

	"[[ c.module ]]/internal/fw"
)

// Name is the name [[ P ]] is registered under; the scheduler configuration's
// profiles[].plugins and pluginConfig refer to it by this name.
const Name = "[[ P ]]"[[ plugin.consts(c) ]]

// [[ P ]] is a scheduler plugin.
[[ plugin.type_doc(c) -]]
type [[ P ]] struct {
	handle [[ T.Handle ]]
[[ plugin.fields(c) -]]
}

// Compile-time checks that the plugin implements its extension points.
[[ plugin.assertions(c) -]]
[[ plugin.constructor(c) ]]
// Name returns the name the plugin is registered under.
func (pl *[[ P ]]) Name() string { return Name }
[[ plugin.parts(c, "plugin_go") -]]
