"""``kplugin bench``: what the project's plugins cost the scheduler, measured the way
scheduler_perf measures Kubernetes' own.

- the workload: its ops and limits (ops), read from scheduler_perf's performance-config
  format (workload, decode) with the objects' templates (templates), or shaped by the
  project's args (shaped);
- the benchmark: what it is run with (plan), the whole of it (run), one run's ops and
  measured phase (phases), the scheduler of a run (scheduler), where it runs and what
  it creates and removes there (cluster), the load generator and the watch of bound
  pods (loadgen);
- the figures: /metrics and scheduler_perf's computations (metrics), what each run and
  the benchmark give (outcome), DataItems and tables (results), pictures (report).
"""
