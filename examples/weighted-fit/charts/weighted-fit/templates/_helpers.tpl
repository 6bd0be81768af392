{{- define "scheduler.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/component: scheduler
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "scheduler.leaseNamespace" -}}
{{- $le := .Values.schedulerConfig.leaderElection | default dict -}}
{{- $le.resourceNamespace | default .Release.Namespace -}}
{{- end -}}
