package main

// Each plugin package registers itself in init(); one blank import includes it.
// kplugin add plugin inserts new imports above the scaffold marker.
import (
<% for p in cookiecutter._data.plugins %>
	_ "[[ cookiecutter.module ]]/pkg/[[ p.package ]]"
<% endfor %>
	// +kplugin:scaffold:plugin-imports
)
