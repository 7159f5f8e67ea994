{{/* The exporter's workload: the DaemonSet or Deployment of the release, or one shard's Deployment in gateway mode
(the context then carries `shard`, see "middleware-exporter.workloadName"). */}}
{{- define "middleware-exporter.workload" -}}
{{- $daemonset := eq .Values.mode "daemonset" }}
{{- $shard := hasKey . "shard" }}
{{- $gateway := .Values.gateway }}
{{- $secretName := include "middleware-exporter.secretName" . }}
apiVersion: apps/v1
kind: {{ ternary "DaemonSet" "Deployment" $daemonset }}
metadata:
  name: {{ include "middleware-exporter.workloadName" . }}
  namespace: {{ include "middleware-exporter.namespace" . }}
  labels:
    {{- include (ternary "middleware-exporter.shardLabels" "middleware-exporter.labels" $shard) . | nindent 4 }}
  {{- with .Values.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- if not $daemonset }}
  replicas: {{ ternary $gateway.replicas .Values.replicaCount $shard }}
  {{- end }}
  revisionHistoryLimit: {{ .Values.revisionHistoryLimit }}
  {{- if .Values.updateStrategy }}
  {{ ternary "updateStrategy" "strategy" $daemonset }}:
    {{- toYaml .Values.updateStrategy | nindent 4 }}
  {{- else if $daemonset }}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 1
  {{- end }}
  selector:
    matchLabels:
      {{- include "middleware-exporter.workloadSelectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "middleware-exporter.workloadSelectorLabels" . | nindent 8 }}
        {{- with .Values.commonLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        {{- with .Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/config: {{ include "middleware-exporter.config" . | sha256sum }}
        {{- if and (not .Values.existingSecret) .Values.secrets }}
        checksum/secret: {{ toYaml .Values.secrets | sha256sum }}
        {{- end }}
        {{- with .Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "middleware-exporter.serviceAccountName" . }}
      automountServiceAccountToken: {{ .Values.serviceAccount.automountServiceAccountToken }}
      # No <SERVICE>_SERVICE_HOST, <SERVICE>_PORT_... variables for the Services of the namespace: the exporter finds
      # nothing through them, and they only lengthen the environment (docs/configuration.md, "Environment").
      enableServiceLinks: false
      hostPID: {{ and $daemonset .Values.hostPID }}
      {{- $hostNetwork := and $daemonset .Values.hostNetwork }}
      {{- if $daemonset }}
      hostNetwork: {{ $hostNetwork }}
      {{- end }}
      {{- if .Values.dnsPolicy }}
      dnsPolicy: {{ .Values.dnsPolicy }}
      {{- else if $hostNetwork }}
      dnsPolicy: ClusterFirstWithHostNet
      {{- end }}
      {{- with .Values.terminationGracePeriodSeconds }}
      terminationGracePeriodSeconds: {{ . }}
      {{- end }}
      {{- with .Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with concat (.Values.global.imagePullSecrets | default list) (.Values.imagePullSecrets | default list) }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml .Values.podSecurityContext | nindent 8 }}
      {{- with concat (.Values.initContainers | default list) (.Values.extraInitContainers | default list) }}
      initContainers:
        {{- tpl (toYaml .) $ | nindent 8 }}
      {{- end }}
      containers:
        - name: exporter
          image: {{ include "middleware-exporter.image" . | quote }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          command: ["middleware-exporter"]
          args:
            - run
            - --config
            - /etc/middleware-exporter/config.yaml
            {{- range .Values.extraArgs }}
            - {{ . | quote }}
            {{- end }}
          {{- if or .Values.extraEnv .Values.env }}
          env:
            {{- with .Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- range $name, $value := .Values.env }}
            - name: {{ $name }}
              value: {{ toString $value | quote }}
            {{- end }}
          {{- end }}
          ports:
            - name: metrics
              containerPort: 19462
              protocol: TCP
          livenessProbe:
            httpGet:
              path: /healthz
              port: metrics
            {{- toYaml .Values.livenessProbe | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: metrics
            {{- toYaml .Values.readinessProbe | nindent 12 }}
          resources:
            {{- toYaml (ternary $gateway.resources .Values.resources $shard) | nindent 12 }}
          securityContext:
            {{- toYaml .Values.securityContext | nindent 12 }}
          volumeMounts:
            - name: config
              mountPath: /etc/middleware-exporter/config.yaml
              subPath: config.yaml
              readOnly: true
            - name: tmp
              mountPath: /tmp
            {{- if $secretName }}
            - name: secrets
              mountPath: /etc/middleware-exporter/secrets
              readOnly: true
            {{- end }}
            {{- if $shard }}
            - name: inventory
              mountPath: {{ include "middleware-exporter.inventoryDir" . }}
              readOnly: true
            {{- with $gateway.ssh.existingSecret }}
            - name: ssh
              mountPath: /etc/middleware-exporter/ssh
              readOnly: true
            {{- end }}
            {{- end }}
            {{- if $daemonset }}
            - name: proc
              mountPath: /host/proc
              readOnly: true
            - name: sys
              mountPath: /host/sys
              readOnly: true
            # the node's / for the filesystem collector (paths.rootfs); HostToContainer: mounts made after the pod
            # started (an NFS mount of a database) appear too, as in prometheus-node-exporter's chart
            - name: root
              mountPath: /host/root
              readOnly: true
              mountPropagation: HostToContainer
            {{- end }}
            {{- range .Values.extraHostVolumeMounts }}
            - name: {{ .name }}
              mountPath: {{ .mountPath }}
              readOnly: {{ .readOnly | default false }}
              {{- with .mountPropagation }}
              mountPropagation: {{ . }}
              {{- end }}
            {{- end }}
            {{- with .Values.extraVolumeMounts }}
            {{- tpl (toYaml .) $ | nindent 12 }}
            {{- end }}
        {{- with concat (.Values.sidecars | default list) (.Values.extraContainers | default list) }}
        {{- tpl (toYaml .) $ | nindent 8 }}
        {{- end }}
      volumes:
        - name: config
          configMap:
            name: {{ include "middleware-exporter.fullname" . }}
        - name: tmp
          emptyDir:
            sizeLimit: 16Mi
        {{- if $secretName }}
        - name: secrets
          secret:
            secretName: {{ $secretName }}
            defaultMode: 0440
        {{- end }}
        {{- if $shard }}
        - name: inventory
          configMap:
            name: {{ include "middleware-exporter.inventoryConfigMap" . }}
        {{- with $gateway.ssh.existingSecret }}
        # the ssh client key, ssh_config and known_hosts; 0440 with the pod's fsGroup (ssh refuses a key readable
        # by others, and accepts a group-readable one it does not own)
        - name: ssh
          secret:
            secretName: {{ . }}
            defaultMode: 0440
        {{- end }}
        {{- end }}
        {{- if $daemonset }}
        - name: proc
          hostPath:
            path: /proc
            type: Directory
        - name: sys
          hostPath:
            path: /sys
            type: Directory
        - name: root
          hostPath:
            path: /
            type: Directory
        {{- end }}
        {{- range .Values.extraHostVolumeMounts }}
        - name: {{ .name }}
          hostPath:
            path: {{ .hostPath }}
            {{- with .type }}
            type: {{ . }}
            {{- end }}
        {{- end }}
        {{- with .Values.extraVolumes }}
        {{- tpl (toYaml .) $ | nindent 8 }}
        {{- end }}
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- else }}
      {{- if and $shard (gt (int $gateway.replicas) 1) }}
      # the two pods of a shard's HA pair on different nodes when the cluster allows
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector:
                  matchLabels:
                    {{- include "middleware-exporter.workloadSelectorLabels" . | nindent 20 }}
      {{- end }}
      {{- end }}
      {{- $tolerations := .Values.tolerations }}
      {{- if kindIs "invalid" $tolerations }}
      {{- $tolerations = ternary (list (dict "operator" "Exists")) list $daemonset }}
      {{- end }}
      {{- with $tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}
