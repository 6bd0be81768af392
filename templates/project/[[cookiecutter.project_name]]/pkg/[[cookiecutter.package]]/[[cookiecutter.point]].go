<% set c = cookiecutter %>
<% set P = c.plugin_name %>
<% set T = c._names %>
<% set S = c._shape %>
<% set native = c.api == "native" %>
<% set point = c.point %>
<% if cookiecutter.point %><# renders only for a point: _files.when drops it otherwise #>
package [[ c.package ]]

// This file is yours: kplugin add extension-point generated it once, with a body that
// does nothing harmful, and never rewrites it. Put the plugin's [[ c.go_name ]] logic here.

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"[[ c.module ]]/internal/fw"
)

var _ [[ T[c.interface] ]] = &[[ P ]]{}
<% import "sections/" ~ c.point ~ ".jinja" as part %>
[[ part.stub_go(c) -]]
<% endif %>
