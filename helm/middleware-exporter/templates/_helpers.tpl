{{- define "middleware-exporter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "middleware-exporter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "middleware-exporter.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "middleware-exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "middleware-exporter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "middleware-exporter.labels" -}}
helm.sh/chart: {{ include "middleware-exporter.chart" . }}
{{ include "middleware-exporter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "middleware-exporter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "middleware-exporter.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Name of the Secret mounted at /etc/middleware-exporter/secrets, empty when there is none. */}}
{{- define "middleware-exporter.secretName" -}}
{{- if .Values.existingSecret }}
{{- .Values.existingSecret }}
{{- else if .Values.secrets }}
{{- include "middleware-exporter.fullname" . }}
{{- end }}
{{- end }}

{{/* The exporter configuration: the chart's defaults with .Values.config merged onto them. */}}
{{- define "middleware-exporter.config" -}}
{{- $procfs := "/proc" }}
{{- $sysfs := "/sys" }}
{{- if eq .Values.mode "daemonset" }}
{{- $procfs = "/host/proc" }}
{{- $sysfs = "/host/sys" }}
{{- end }}
{{- $defaults := dict "web" (dict "listen_address" ":19462") "paths" (dict "procfs" $procfs "sysfs" $sysfs) }}
{{- $config := mustMergeOverwrite $defaults (deepCopy (.Values.config | default dict)) }}
{{- $rendered := toYaml $config }}
{{- if regexMatch "(?mi)^[ \\t-]*[a-z_]*(password|passwd|secret|token|api_?key)[ \\t]*:" $rendered }}
{{- fail "config: a password/secret/token is inlined; put it into `secrets` (or existingSecret) and reference it with password_file: /etc/middleware-exporter/secrets/<key>" }}
{{- end }}
{{- $rendered }}
{{- end }}
