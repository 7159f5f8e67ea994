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
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "middleware-exporter.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride }}
{{- end }}

{{/* "true" when the Prometheus Operator objects may be rendered (CRDs present or forced). */}}
{{- define "middleware-exporter.monitoringCRDs" -}}
{{- if or .Values.forceMonitoringCRDs (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1") }}true{{ end }}
{{- end }}

{{/* "true" when this release carries the rules / dashboards (see monitoringContent in values.yaml). */}}
{{- define "middleware-exporter.content" -}}
{{- $content := .Values.monitoringContent.enabled }}
{{- if kindIs "invalid" $content }}{{ $content = eq .Values.mode "daemonset" }}{{ end }}
{{- $content }}
{{- end }}
{{- define "middleware-exporter.rulesEnabled" -}}
{{- $on := .Values.prometheusRule.enabled }}
{{- if kindIs "invalid" $on }}{{ $on = eq (include "middleware-exporter.content" .) "true" }}{{ end }}
{{- if $on }}true{{ end }}
{{- end }}
{{- define "middleware-exporter.dashboardsEnabled" -}}
{{- $on := .Values.dashboards.enabled }}
{{- if kindIs "invalid" $on }}{{ $on = eq (include "middleware-exporter.content" .) "true" }}{{ end }}
{{- if $on }}true{{ end }}
{{- end }}

{{- define "middleware-exporter.image" -}}
{{- $image := .Values.image }}
{{- if regexMatch "(?i)(^|/)(example|replace-me)(/|$)" (printf "%s/%s" $image.registry $image.repository) }}
{{- fail (printf "image: %s/%s is a placeholder; build the image (docs/deployment.md, \"Image\"), push it and set image.registry/image.repository to where it is" $image.registry $image.repository) }}
{{- end }}
{{- $registry := $image.registry | default (.Values.global.imageRegistry | default "") }}
{{- $name := $image.repository }}
{{- if $registry }}{{ $name = printf "%s/%s" (trimSuffix "/" $registry) $image.repository }}{{ end }}
{{- if $image.digest }}
{{- printf "%s@%s" $name $image.digest }}
{{- else }}
{{- printf "%s:%s" $name ($image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* The rule files: alerts/*.yml (but alertmanager.yml), replaced by alerts/variants/node_exporter/<same name>
when hostMetricsSource is node_exporter. Returns a YAML map path -> file name. */}}
{{- define "middleware-exporter.ruleFiles" -}}
{{- $files := dict }}
{{- range $path, $_ := .Files.Glob "files/alerts/*.yml" }}
{{- if ne (base $path) "alertmanager.yml" }}{{ $_ := set $files (base $path) $path }}{{ end }}
{{- end }}
{{- if eq .Values.hostMetricsSource "node_exporter" }}
{{- range $path, $_ := .Files.Glob "files/alerts/variants/node_exporter/*.yml" }}
{{- $_ := set $files (base $path) $path }}
{{- end }}
{{- end }}
{{- toYaml $files }}
{{- end }}

{{- define "middleware-exporter.dashboardFiles" -}}
{{- $files := dict }}
{{- range $path, $_ := .Files.Glob "files/dashboards/*.json" }}{{ $_ := set $files (base $path) $path }}{{ end }}
{{- if eq .Values.hostMetricsSource "node_exporter" }}
{{- range $path, $_ := .Files.Glob "files/dashboards/variants/node_exporter/*.json" }}
{{- $_ := set $files (base $path) $path }}
{{- end }}
{{- end }}
{{- toYaml $files }}
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
{{- $paths := dict "procfs" "/proc" "sysfs" "/sys" }}
{{- if eq .Values.mode "daemonset" }}
{{- $paths = dict "procfs" "/host/proc" "sysfs" "/host/sys" "rootfs" "/host/root" }}
{{- end }}
{{- $defaults := dict "web" (dict "listen_address" ":19462") "paths" $paths }}
{{- if or (ne .Values.mode "daemonset") (eq .Values.hostMetricsSource "node_exporter") }}
{{- /* the filesystem collector measures the node's mounts under /host/root; node_exporter has them itself */}}
{{- $_ := set $defaults "collectors" (dict "host" (dict "enabled" false) "filesystem" (dict "enabled" false)) }}
{{- end }}
{{- if ne .Values.mode "daemonset" }}
{{- $_ := set $defaults.collectors "process" (dict "enabled" false) }}
{{- end }}
{{- if eq .Values.mode "gateway" }}
{{- $_ := set $defaults "inventory" (dict "file" (include "middleware-exporter.inventoryFile" .)) }}
{{- with .Values.gateway.modules }}{{ $_ := set $defaults "modules" (deepCopy .) }}{{ end }}
{{- end }}
{{- $config := mustMergeOverwrite $defaults (deepCopy (.Values.config | default dict)) }}
{{- $rendered := toYaml $config }}
{{- if regexMatch "(?mi)^[ \\t-]*[a-z_]*(password|passwd|secret|token|api_?key)[ \\t]*:" $rendered }}
{{- fail "config: a password/secret/token is inlined; put it into `secrets` (or existingSecret) and reference it with password_file: /etc/middleware-exporter/secrets/<key>" }}
{{- end }}
{{- if contains "PRIVATE KEY-----" $rendered }}
{{- fail "config: a private key is inlined (gateway.modules or config); put it into the Secret named by gateway.ssh.existingSecret and reference it with identity_file: /etc/middleware-exporter/ssh/<key>" }}
{{- end }}
{{- $rendered }}
{{- end }}

{{/* Endpoint fields shared by the ServiceMonitor and the PodMonitor (argument: their values). */}}
{{- define "middleware-exporter.endpoint" -}}
path: {{ .path | default "/metrics" }}
scheme: {{ .scheme | default "http" }}
{{- with .interval }}
interval: {{ . }}
{{- end }}
{{- with .scrapeTimeout }}
scrapeTimeout: {{ . }}
{{- end }}
honorLabels: {{ .honorLabels }}
{{- with .tlsConfig }}
tlsConfig:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .relabelings }}
relabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .metricRelabelings }}
metricRelabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Gateway mode (mode: gateway): one Deployment, Service and ScrapeConfig per shard. Their templates range over
the shard indexes and hand each object a context that is the release's own plus `shard` (the index):
`merge (dict "shard" $i) $`; every helper below takes such a context and, without `shard`, answers as for
the single workload of the other modes. */}}
{{- define "middleware-exporter.shardLabel" -}}middleware-exporter/shard{{- end }}

{{/* The name of the workload (and its Service): `<fullname>-shard-<i>` in gateway mode, kept within the 63
characters of a Service name. */}}
{{- define "middleware-exporter.workloadName" -}}
{{- if hasKey . "shard" }}
{{- $suffix := printf "-shard-%d" (int .shard) }}
{{- include "middleware-exporter.fullname" . | trunc (sub 63 (len $suffix) | int) | trimSuffix "-" }}{{ $suffix }}
{{- else }}
{{- include "middleware-exporter.fullname" . }}
{{- end }}
{{- end }}

{{/* Selector labels of the workload: a shard's pods carry its index too (each shard its own Deployment). */}}
{{- define "middleware-exporter.workloadSelectorLabels" -}}
{{ include "middleware-exporter.selectorLabels" . }}
{{- if hasKey . "shard" }}
{{ include "middleware-exporter.shardLabel" . }}: {{ .shard | quote }}
{{- end }}
{{- end }}

{{/* Labels of a shard's objects: the chart's labels, the component and the shard index. */}}
{{- define "middleware-exporter.shardLabels" -}}
{{ include "middleware-exporter.labels" . }}
app.kubernetes.io/component: gateway
{{ include "middleware-exporter.shardLabel" . }}: {{ .shard | quote }}
{{- end }}

{{/* Where the inventory ConfigMap is mounted (a directory, not a subPath: the kubelet then swaps in a changed
ConfigMap and the exporter's watcher re-reads it without a restart). */}}
{{- define "middleware-exporter.inventoryDir" -}}/etc/middleware-exporter/inventory{{- end }}
{{- define "middleware-exporter.inventoryFile" -}}
{{- include "middleware-exporter.inventoryDir" . }}/{{ .Values.gateway.inventoryKey | default "targets.yml" }}
{{- end }}
{{- define "middleware-exporter.inventoryConfigMap" -}}
{{- .Values.gateway.existingInventoryConfigMap | default (printf "%s-inventory" (include "middleware-exporter.fullname" .)) }}
{{- end }}

{{/* The shards' Service address as Prometheus reaches it from any namespace: <service>.<namespace>.svc:<port>. */}}
{{- define "middleware-exporter.shardAddress" -}}
{{- include "middleware-exporter.workloadName" . }}.{{ include "middleware-exporter.namespace" . }}.svc:{{ .Values.service.port }}
{{- end }}
