{{- define "scheduler.leaseNamespace" -}}
{{- $le := .Values.schedulerConfig.leaderElection | default dict -}}
{{- $le.resourceNamespace | default .Release.Namespace -}}
{{- end -}}
