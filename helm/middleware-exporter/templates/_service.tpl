{{/* The exporter's Service, or one shard's in gateway mode (context with `shard`). */}}
{{- define "middleware-exporter.service" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "middleware-exporter.workloadName" . }}
  namespace: {{ include "middleware-exporter.namespace" . }}
  labels:
    {{- include (ternary "middleware-exporter.shardLabels" "middleware-exporter.labels" (hasKey . "shard")) . | nindent 4 }}
    {{- with .Values.service.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with .Values.service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ .Values.service.type }}
  selector:
    {{- include "middleware-exporter.workloadSelectorLabels" . | nindent 4 }}
  ports:
    - name: metrics
      port: {{ .Values.service.port }}
      targetPort: metrics
      protocol: TCP
{{- end }}
