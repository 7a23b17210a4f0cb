{{/* The base name of every object: the release name, or "<release>-placer". */}}
{{- define "placer.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "placer.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object, and the selector of placer's pods. */}}
{{- define "placer.labels" -}}
app.kubernetes.io/name: {{ include "placer.name" . }}
{{- end -}}

{{- define "placer.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The Secret with the serving certificate. */}}
{{- define "placer.certsSecret" -}}
{{ include "placer.fullname" . }}-certs
{{- end -}}

{{/* True (non-empty) when the plain-HTTP metrics listener runs. */}}
{{- define "placer.metricsListener" -}}
{{- if or .Values.metrics.enabled .Values.metrics.serviceMonitor.enabled .Values.metrics.podMonitor.enabled -}}
true
{{- end -}}
{{- end -}}

{{/* The PlacerConfiguration document in the ConfigMap. */}}
{{- define "placer.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- $_ := set $config "apiVersion" "placer.io/v1alpha1" -}}
{{- $_ := set $config "kind" "PlacerConfiguration" -}}
{{- $webhook := dict "listen" "0.0.0.0:8443" "tlsCertFile" "/certs/tls.crt" "tlsKeyFile" "/certs/tls.key" -}}
{{- $_ := set $config "webhook" (mergeOverwrite $webhook (default dict $config.webhook)) -}}
{{- if .Values.fallbackScheduler.enabled -}}
{{- $_ := set $config "fallbackSchedulerName" (printf "%s-fallback" (include "placer.fullname" .)) -}}
{{- end -}}
{{- if ne (include "placer.fullname" .) "placer" -}}
{{- $election := dict "resourceName" (include "placer.fullname" .) -}}
{{- $_ := set $config "leaderElection" (mergeOverwrite $election (default dict $config.leaderElection)) -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}

{{/* `placer certs ensure` arguments, without --interval. */}}
{{- define "placer.certsArgs" -}}
- certs
- ensure
- --service={{ include "placer.fullname" . }}
- --namespace=$(POD_NAMESPACE)
- --secret={{ include "placer.certsSecret" . }}
- --webhook-config={{ include "placer.fullname" . }}
- --out=/certs
{{- end -}}

{{- define "placer.podNamespaceEnv" -}}
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- end -}}
