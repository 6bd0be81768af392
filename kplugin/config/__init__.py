"""The KubeSchedulerConfiguration of a project: render-config."""
