"""``kplugin bench``: what the project's plugins cost the scheduler, measured the way
scheduler_perf measures Kubernetes' own: workloads in its performance-config format
(workload), a load generator and a watch of bound pods (client), the figures
(metrics), the runs on a local control plane or an existing cluster (run, kubeconfig),
DataItems and tables (results) and the report's pictures (report)."""
