"""Kubernetes at run time, below the features that use it (e2e, bench, snapshot, doctor):
an API client (apiclient), kubeconfig files (kubeconfig), a local control plane of etcd,
kube-apiserver and a scheduler (controlplane), where a run happens, locally or on a
cluster of the user's (cluster), bulk creation (bulk), JSON streaming (jsonstream),
label selectors (labelselector) and the kinds kplugin knows (kinds)."""
