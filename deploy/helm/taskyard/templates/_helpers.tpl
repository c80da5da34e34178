{{/* Names, labels and the values each service shares. */}}

{{- define "taskyard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every resource; the services' names add at most 13 characters, and a
     StatefulSet's name must stay within 52 (its pods' controller-revision-hash label is
     the name plus 11 characters, and a label value holds 63). */}}
{{- define "taskyard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 39 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 39 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 39 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "taskyard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* What selects the suite's pods (every service): the NetworkPolicies' "suite". */}}
{{- define "taskyard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "taskyard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "taskyard.labels" -}}
helm.sh/chart: {{ include "taskyard.chart" . }}
{{ include "taskyard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: taskyard
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* One service's pods: call with (dict "root" $ "component" "gateway"). */}}
{{- define "taskyard.componentSelectorLabels" -}}
{{ include "taskyard.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "taskyard.componentLabels" -}}
{{ include "taskyard.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The values key of a service: result-store -> resultStore. */}}
{{- define "taskyard.valuesKey" -}}
{{- index (dict "gateway" "gateway" "scheduler" "scheduler" "result-store" "resultStore" "worker-pool" "workerPool") . -}}
{{- end -}}

{{- define "taskyard.serviceName" -}}
{{- printf "%s-%s" (include "taskyard.fullname" .root) .component -}}
{{- end -}}

{{/* --- The pods of a StatefulSet (scheduler, result-store) by name: <pod>.<domain>, the
     domain being its headless Service (the StatefulSet's name too), qualified by the
     namespace (and the cluster domain) unless podDns.namespaced is false. */}}
{{- define "taskyard.podDomain" -}}
{{- $domain := include "taskyard.serviceName" . -}}
{{- $dns := .root.Values.podDns -}}
{{- if $dns.namespaced -}}
{{- $domain = printf "%s.%s.svc" $domain .root.Release.Namespace -}}
{{- with $dns.clusterDomain }}{{ $domain = printf "%s.%s" $domain . }}{{ end -}}
{{- end -}}
{{- $domain -}}
{{- end -}}

{{/* Every pod of the StatefulSet, comma-separated, as the dialers list them
     (TASKYARD_SCHEDULER_HOSTS, TASKYARD_STORE_HOSTS). With 0 replicas the first pod is
     still listed: where it comes back, so scaling 0 <-> 1 changes no other pod. */}}
{{- define "taskyard.podHosts" -}}
{{- $values := index .root.Values (include "taskyard.valuesKey" .component) -}}
{{- $name := include "taskyard.serviceName" . -}}
{{- $domain := include "taskyard.podDomain" . -}}
{{- $hosts := list -}}
{{- range $i := until (int (max 1 (int $values.replicas))) -}}
{{- $hosts = append $hosts (printf "%s-%d.%s" $name $i $domain) -}}
{{- end -}}
{{- join "," $hosts -}}
{{- end -}}

{{- define "taskyard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "taskyard.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "taskyard.image" -}}
{{- $image := merge (deepCopy (.values.image | default dict)) .root.Values.image -}}
{{- printf "%s:%s" $image.repository (toString (default .root.Chart.AppVersion $image.tag)) -}}
{{- end -}}

{{- define "taskyard.imagePullPolicy" -}}
{{- $image := merge (deepCopy (.values.image | default dict)) .root.Values.image -}}
{{- $image.pullPolicy -}}
{{- end -}}

{{/* --- Secrets: the chart's own when a value is given, else the existing one. */}}
{{- define "taskyard.busKeysSecret" -}}
{{- if .Values.bus.keys -}}{{ include "taskyard.fullname" . }}-bus-keys{{- else -}}{{ required "bus.keys or bus.existingSecret is required: every NNG message is signed (docs/security.md)" .Values.bus.existingSecret }}{{- end -}}
{{- end -}}
{{- define "taskyard.busKeysKey" -}}
{{- if .Values.bus.keys -}}TASKYARD_BUS_KEYS{{- else -}}{{ .Values.bus.existingSecretKey }}{{- end -}}
{{- end -}}
{{/* The Secret (name, key) holding a service's bus keyring: its role's own when
     bus.roleSecrets names one (docs/security.md, "Keys per role"), else the shared one. */}}
{{- define "taskyard.busKeysRef" -}}
{{- $own := index (.root.Values.bus.roleSecrets | default dict) (include "taskyard.valuesKey" .component) | default "" -}}
{{- if $own -}}
name: {{ $own }}
key: {{ .root.Values.bus.roleSecretKey | default "TASKYARD_BUS_KEYS" }}
{{- else -}}
name: {{ include "taskyard.busKeysSecret" .root }}
key: {{ include "taskyard.busKeysKey" .root }}
{{- end -}}
{{- end -}}

{{- define "taskyard.databaseSecret" -}}
{{- if .Values.database.url -}}{{ include "taskyard.fullname" . }}-database{{- else -}}{{ required "database.url or database.existingSecret is required: the result-store needs PostgreSQL" .Values.database.existingSecret }}{{- end -}}
{{- end -}}
{{- define "taskyard.databaseKey" -}}
{{- if .Values.database.url -}}TASKYARD_DATABASE_URL{{- else -}}{{ .Values.database.existingSecretKey }}{{- end -}}
{{- end -}}

{{- define "taskyard.metricsSecret" -}}
{{- if .Values.metrics.token -}}{{ include "taskyard.fullname" . }}-metrics{{- else -}}{{ required "metrics.token or metrics.existingSecret is required with metrics.enabled: /metrics off loopback needs a token" .Values.metrics.existingSecret }}{{- end -}}
{{- end -}}
{{- define "taskyard.metricsKey" -}}
{{- if .Values.metrics.token -}}TASKYARD_METRICS_TOKEN{{- else -}}{{ .Values.metrics.existingSecretKey }}{{- end -}}
{{- end -}}

{{- define "taskyard.tlsSecret" -}}
{{- if .Values.gateway.tls.cert -}}{{ include "taskyard.fullname" . }}-gateway-tls{{- else -}}{{ required "gateway.tls.cert/key or gateway.tls.existingSecret is required with gateway.tls.enabled" .Values.gateway.tls.existingSecret }}{{- end -}}
{{- end -}}

{{- define "taskyard.tokensSecret" -}}
{{- if .Values.gateway.auth.tokens -}}{{ include "taskyard.fullname" . }}-gateway-tokens{{- else -}}{{ required "gateway.auth.tokens or gateway.auth.existingSecret is required with gateway.auth.enabled" .Values.gateway.auth.existingSecret }}{{- end -}}
{{- end -}}
{{- define "taskyard.tokensKey" -}}
{{- if .Values.gateway.auth.tokens -}}tokens{{- else -}}{{ .Values.gateway.auth.existingSecretKey }}{{- end -}}
{{- end -}}

{{/* --- Ports (docs/operations.md, "Ports"): one place, used by containers, Services and policies. */}}
{{- define "taskyard.ports" -}}
{{- $b := int .Values.bus.basePort -}}
lane-critical: {{ $b }}
lane-high: {{ add $b 1 }}
lane-normal: {{ add $b 2 }}
lane-low: {{ add $b 3 }}
store: {{ add $b 4 }}
registration: {{ add $b 5 }}
survey: {{ add $b 6 }}
events: {{ add $b 7 }}
pool-stream: {{ add $b 8 }}
sched-stream: {{ add $b 9 }}
discovery: {{ int .Values.bus.discoveryPort }}
pair: {{ int .Values.workerPool.pairPort }}
grpc: {{ int .Values.gateway.grpcPort }}
health: {{ int .Values.gateway.healthPort }}
http: {{ int .Values.gateway.dashboard.port }}
metrics: {{ int .Values.metrics.port }}
{{- end -}}

{{/* One service's ports by name: the suite's, but the gateway's alone has "health"
     (grpc.health.v1, gateway.healthPort): the others' probes ask /livez and /readyz on
     their ops port, "metrics". Call with (dict "root" $ "component" "scheduler"). */}}
{{- define "taskyard.servicePorts" -}}
{{- $ports := include "taskyard.ports" .root | fromYaml -}}
{{- if ne .component "gateway" }}{{ $_ := unset $ports "health" }}{{ end -}}
{{- toYaml $ports -}}
{{- end -}}

{{/* The name of the port a service's probes ask: the gateway's gRPC "health", the
     others' ops port, "metrics". */}}
{{- define "taskyard.probePort" -}}
{{- if eq .component "gateway" }}health{{ else }}metrics{{ end -}}
{{- end -}}

{{/* Whether a service serves its ops port (TASKYARD_METRICS_PORT: /metrics, /livez,
     /readyz): the scheduler, the store and the pools always (their probes ask it), the
     gateway with metrics.enabled. "true" or "". */}}
{{- define "taskyard.servesOps" -}}
{{- if or .root.Values.metrics.enabled (ne .component "gateway") }}true{{ end -}}
{{- end -}}

{{/* The NNG ports each service listens on, by name. */}}
{{- define "taskyard.listeners" -}}
scheduler: [lane-critical, lane-high, lane-normal, lane-low, registration, survey, discovery]
result-store: [store, events, pool-stream, sched-stream]
worker-pool: [pair]
gateway: []
{{- end -}}

{{/* The NNG ports each service dials (docs/operations.md: who talks to whom), on every
     pod of the service dialed: the lists name each scheduler and each store, and only the
     leading scheduler listens (the leader's discovery peer dials every scheduler's hub,
     its own included). The NetworkPolicies allow exactly these, to and from every pod of
     a service alike, so a standby that takes over is reached at once. */}}
{{- define "taskyard.dials" -}}
gateway:
  scheduler: [lane-critical, lane-high, lane-normal, lane-low, discovery]
  result-store: [store, events]
scheduler:
  scheduler: [discovery]
  result-store: [store, sched-stream]
  worker-pool: [pair]
worker-pool:
  scheduler: [lane-critical, lane-high, lane-normal, lane-low, registration, survey, discovery]
  result-store: [store, pool-stream]
result-store: {}
{{- end -}}

{{/* The PodSecurityContext, volumes and common container fields. */}}
{{- define "taskyard.podSpecCommon" -}}
{{- $values := index .root.Values (include "taskyard.valuesKey" .component) -}}
serviceAccountName: {{ include "taskyard.serviceAccountName" .root }}
automountServiceAccountToken: {{ .root.Values.serviceAccount.automountServiceAccountToken }}
# Service links would put <SERVICE>_PORT=tcp://... variables in the environment, and
# TASKYARD_* names are the services' settings.
enableServiceLinks: false
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with $values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $values.topologySpreadConstraints }}
{{- $selector := dict "matchLabels" (include "taskyard.componentSelectorLabels" . | fromYaml) }}
{{- $constraints := list }}
{{- range $values.topologySpreadConstraints }}
{{- $constraints = append $constraints (merge (dict) . (dict "labelSelector" $selector)) }}
{{- end }}
topologySpreadConstraints:
  {{- toYaml $constraints | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Pod annotations: checksums roll a service's pods when the configuration or a secret
     the chart made for it changes (not the tokens file nor the TLS certificate: the
     gateway reloads them). */}}
{{- define "taskyard.podAnnotations" -}}
{{- $v := .root.Values -}}
{{- $values := index $v (include "taskyard.valuesKey" .component) -}}
checksum/config: {{ include (print .root.Template.BasePath "/configmap.yaml") .root | sha256sum }}
{{- if $v.bus.keys }}
checksum/bus-keys: {{ $v.bus.keys | sha256sum }}
{{- end }}
{{- if and $v.metrics.enabled $v.metrics.token }}
checksum/metrics-token: {{ $v.metrics.token | sha256sum }}
{{- end }}
{{- if and (eq .component "result-store") $v.database.url }}
checksum/database: {{ $v.database.url | sha256sum }}
{{- end }}
{{- with $values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "taskyard.containerSecurityContext" -}}
{{- $values := index .root.Values (include "taskyard.valuesKey" .component) -}}
{{- toYaml (merge (deepCopy ($values.containerSecurityContext | default dict)) .root.Values.containerSecurityContext) -}}
{{- end -}}

{{/* The environment every container gets besides the ConfigMap: the bus keys, the
     metrics token, the ops port (/metrics and the HTTP probes; the gateway's only with
     metrics.enabled: its probes are gRPC, so it is not in the ConfigMap), OTEL_SERVICE_NAME. */}}
{{- define "taskyard.commonEnv" -}}
- name: TASKYARD_BUS_KEYS
  valueFrom:
    secretKeyRef:
      {{- include "taskyard.busKeysRef" . | nindent 6 }}
{{- if .root.Values.metrics.enabled }}
- name: TASKYARD_METRICS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "taskyard.metricsSecret" .root }}
      key: {{ include "taskyard.metricsKey" .root }}
{{- end }}
{{- if include "taskyard.servesOps" . }}
- name: TASKYARD_METRICS_PORT
  value: {{ .root.Values.metrics.port | quote }}
# Off loopback: without metrics.enabled (no token) the port serves the probes only.
- name: TASKYARD_METRICS_HOST
  value: {{ .root.Values.bus.bindHost | quote }}
{{- end }}
{{- if .root.Values.otel.endpoint }}
- name: OTEL_SERVICE_NAME
  value: taskyard-{{ .component }}
{{- end }}
{{- end -}}

{{- define "taskyard.extraEnv" -}}
{{- range $name, $value := . }}
- name: {{ $name }}
  value: {{ toString $value | quote }}
{{- end }}
{{- end -}}

{{/* A probe: the chart's handler merged with the values' timings. */}}
{{- define "taskyard.probe" -}}
{{- toYaml (merge (deepCopy .handler) (.timings | default dict)) -}}
{{- end -}}

{{/* The probes of the scheduler, the result-store and the worker-pool, on their ops
     port, "metrics" (core/ops.py, answered from threads of its own): liveness asks
     /livez (the event loop runs a callback within 5 s, so a busy service passes and a
     wedged one does not), readiness /readyz (live, and the service said it is ready);
     a start-up probe, where the values give one, asks /livez too. */}}
{{- define "taskyard.httpProbes" -}}
{{- $values := index .root.Values (include "taskyard.valuesKey" .component) -}}
{{- $livez := dict "httpGet" (dict "path" "/livez" "port" "metrics") -}}
{{- with $values.startupProbe }}
startupProbe:
  {{- include "taskyard.probe" (dict "handler" $livez "timings" .) | nindent 2 }}
{{- end }}
readinessProbe:
  {{- include "taskyard.probe" (dict "handler" (dict "httpGet" (dict "path" "/readyz" "port" "metrics")) "timings" $values.readinessProbe) | nindent 2 }}
livenessProbe:
  {{- include "taskyard.probe" (dict "handler" $livez "timings" $values.livenessProbe) | nindent 2 }}
{{- end -}}

{{/* containerPort entries for the named ports of a service: call with (dict "root" $
     "component" "scheduler" "names" (list ...)). */}}
{{- define "taskyard.containerPorts" -}}
{{- $ports := include "taskyard.servicePorts" . | fromYaml -}}
{{- range .names }}
- name: {{ . }}
  containerPort: {{ index $ports . }}
  protocol: TCP
{{- end }}
{{- end -}}

{{- define "taskyard.pdb" -}}
{{- $values := index .root.Values (include "taskyard.valuesKey" .component) -}}
{{- if $values.pdb.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "taskyard.serviceName" . }}
  labels:
    {{- include "taskyard.componentLabels" . | nindent 4 }}
spec:
  {{- if not (eq (toString $values.pdb.minAvailable) "") }}
  minAvailable: {{ $values.pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ $values.pdb.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "taskyard.componentSelectorLabels" . | nindent 6 }}
{{- end }}
{{- end -}}
