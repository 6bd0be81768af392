"""kplugin: scaffold, configure, build and test out-of-tree Kubernetes scheduler plugins."""

__version__ = "0.1.0"
