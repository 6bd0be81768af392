module [[ cookiecutter.module ]]

go [[ cookiecutter.go_directive ]]
<% if cookiecutter.toolchain %>

// Kubernetes [[ cookiecutter.k8s_minor ]] needs Go [[ cookiecutter.go_directive ]]: with an older Go, the go command
// fetches this toolchain (GOTOOLCHAIN=auto: the Makefile and kplugin set it).
toolchain [[ cookiecutter.toolchain ]]
<% endif %>
<% if cookiecutter.godebug %>

godebug [[ cookiecutter.godebug ]]
<% endif %>

require k8s.io/kubernetes [[ cookiecutter.k8s_tag ]]

// k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with
// ./staging in its own repository; outside it, every one must be pinned here.
// Managed by kplugin (kplugin upgrade re-pins them).
replace (
<% for m in cookiecutter._data.staging_modules %>
	[[ m ]] => [[ m ]] [[ cookiecutter.staging_tag ]]
<% endfor %>
)
