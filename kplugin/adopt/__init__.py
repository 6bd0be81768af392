"""kplugin adopt: an existing scheduler-plugin repository read as it is (its go.mod, the
Go code that builds its kube-scheduler, its plugins, configuration, CRDs, Dockerfile and
manifests) and recorded in kplugin.yaml, without moving or rewriting a file of its own.

gomod reads go.mod, gocode indexes the module's Go packages (the one reader of Go
declarations adopt uses), registry finds the scheduler command and each plugin it
registers, files finds the rest, discover puts it together and decides whether the
repository can be adopted, record writes what kplugin.yaml holds."""
