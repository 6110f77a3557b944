{{/* Chart name, overridable. */}}
{{- define "tenantplane.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Resource-name prefix: the release name, plus the chart name unless the release name already holds it. */}}
{{- define "tenantplane.fullname" -}}
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

{{/* Labels on every object of the release. */}}
{{- define "tenantplane.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "tenantplane.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tenantplane
{{- end -}}

{{/* Selector labels of the whole release. */}}
{{- define "tenantplane.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tenantplane.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
Per-service helpers take a dict: {root: $, name: <service key>}.
*/}}

{{/* Name of a service's objects: <fullname>-<service>, at most 63 characters. */}}
{{- define "tenantplane.serviceName" -}}
{{- printf "%s-%s" (include "tenantplane.fullname" .root) .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Name of the ClusterRole holding a service's tenantRules: <fullname>-<service>-tenant. */}}
{{- define "tenantplane.tenantRoleName" -}}
{{- printf "%s-tenant" (include "tenantplane.serviceName" .) -}}
{{- end -}}

{{/*
What the provisioner binds in each tenant namespace (its TENANT_ROLE_BINDINGS): one
"<clusterRole>=<release namespace>/<serviceAccount>" per enabled service with tenantRules,
comma-separated, the provisioner's own first so it can read the namespace soonest.
*/}}
{{- define "tenantplane.tenantGrants" -}}
{{- $root := . -}}
{{- $names := keys .Values.services | sortAlpha -}}
{{- if has "provisioner" $names -}}
{{- $names = prepend (without $names "provisioner") "provisioner" -}}
{{- end -}}
{{- $grants := list -}}
{{- range $name := $names -}}
{{- $svc := index $root.Values.services $name -}}
{{- if and $svc.enabled $svc.tenantRules -}}
{{- $ctx := dict "root" $root "name" $name -}}
{{- $grants = append $grants (printf "%s=%s/%s" (include "tenantplane.tenantRoleName" $ctx) $root.Release.Namespace (include "tenantplane.serviceName" $ctx)) -}}
{{- end -}}
{{- end -}}
{{- join "," $grants -}}
{{- end -}}

{{/* Labels on every object of one service. */}}
{{- define "tenantplane.serviceLabels" -}}
{{ include "tenantplane.labels" .root }}
app.kubernetes.io/component: {{ .name }}
tenantplane.io/component: {{ .name }}
{{- end -}}

{{/* Selector labels of one service's pods. */}}
{{- define "tenantplane.serviceSelectorLabels" -}}
{{ include "tenantplane.selectorLabels" .root }}
tenantplane.io/component: {{ .name }}
{{- end -}}

{{/* The one image every service runs. */}}
{{- define "tenantplane.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* NATS URL, failing the render with the fix when it is missing. */}}
{{- define "tenantplane.natsUrl" -}}
{{- if not .Values.nats.url -}}
{{- fail "nats.url is required: set it to your NATS server (2.11 or newer, JetStream enabled), e.g. --set nats.url=nats://nats.nats.svc:4222" -}}
{{- end -}}
{{- .Values.nats.url -}}
{{- end -}}

{{/* Path the NATS credentials file is mounted at. */}}
{{- define "tenantplane.natsCredsPath" -}}
/etc/tenantplane/nats/nats.creds
{{- end -}}

{{/* Directory the NATS CA bundle is mounted in. */}}
{{- define "tenantplane.natsCaDir" -}}
/etc/tenantplane/nats-ca
{{- end -}}

{{/* Directory the NATS client certificate and key are mounted in. */}}
{{- define "tenantplane.natsClientCertDir" -}}
/etc/tenantplane/nats-client
{{- end -}}

{{/*
A memory quantity (256Mi, 1Gi, 1.5G, 805306368, 8e8) in whole MiB, failing the render with the fix
for a form it cannot read. Argument: dict "q" (the quantity) "field" (its values path).
*/}}
{{- define "tenantplane.mebibytes" -}}
{{- $q := toString .q -}}
{{- $units := dict "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "k" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 -}}
{{- $bytes := -1.0 -}}
{{- range $suffix, $factor := $units -}}
{{- if and (lt $bytes 0.0) (hasSuffix $suffix $q) (regexMatch "^[0-9]+(\\.[0-9]+)?$" (trimSuffix $suffix $q)) -}}
{{- $bytes = mulf (trimSuffix $suffix $q | float64) $factor -}}
{{- end -}}
{{- end -}}
{{- if and (lt $bytes 0.0) (regexMatch "^[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$" $q) -}}
{{- $bytes = $q | float64 -}}
{{- end -}}
{{- if lt $bytes 0.0 -}}
{{- fail (printf "%s %q is not a memory quantity this chart reads: write it as e.g. 768Mi, 1Gi or a number of bytes (the heap cap is 3/4 of it)" .field $q) -}}
{{- end -}}
{{- divf $bytes 1048576.0 | floor | int64 -}}
{{- end -}}
