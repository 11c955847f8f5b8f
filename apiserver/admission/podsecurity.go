package admission

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// The namespace labels that set a namespace's Pod Security levels.
const (
	EnforceLevelLabel   = "pod-security.kubernetes.io/enforce"
	EnforceVersionLabel = "pod-security.kubernetes.io/enforce-version"
	AuditLevelLabel     = "pod-security.kubernetes.io/audit"
	AuditVersionLabel   = "pod-security.kubernetes.io/audit-version"
	WarnLevelLabel      = "pod-security.kubernetes.io/warn"
	WarnVersionLabel    = "pod-security.kubernetes.io/warn-version"
)

// Level is a Pod Security Standards level.
type Level string

// The levels, from the least to the most strict.
const (
	LevelPrivileged Level = "privileged"
	LevelBaseline   Level = "baseline"
	LevelRestricted Level = "restricted"
)

func (l Level) strictness() int {
	switch l {
	case LevelPrivileged:
		return 0
	case LevelBaseline:
		return 1
	}
	return 2
}

// LevelVersion is a level at a version of the standards ("latest" or
// "v1.N"). kapi evaluates every version with v1.37's checks (see
// EvaluatePod).
type LevelVersion struct {
	Level   Level
	Version string
}

// String is "restricted:latest", as the plugin's messages name a policy.
func (lv LevelVersion) String() string { return string(lv.Level) + ":" + lv.Version }

// PodSecurityPolicy is a namespace's policy: what is enforced, audited and
// warned about.
type PodSecurityPolicy struct {
	Enforce, Audit, Warn LevelVersion
}

// FullyPrivileged reports whether no mode checks anything.
func (p PodSecurityPolicy) FullyPrivileged() bool {
	return p.Enforce.Level == LevelPrivileged && p.Audit.Level == LevelPrivileged && p.Warn.Level == LevelPrivileged
}

var psVersion = regexp.MustCompile(`^v1\.(0|[1-9][0-9]*)$`)

// PolicyFromLabels is the policy a namespace's labels set (kube-apiserver's
// default policy, privileged:latest for every mode, where they set
// nothing), with the errors of labels that do not parse, each at
// metadata.labels[<label>] as kube-apiserver reports them. A bad enforce
// level enforces restricted; a bad audit or warn level checks nothing; a
// bad version is latest. A warn level left out follows a stricter enforce
// level.
func PolicyFromLabels(labels map[string]string) (PodSecurityPolicy, metav1.FieldErrors) {
	latest := LevelVersion{LevelPrivileged, "latest"}
	p := PodSecurityPolicy{latest, latest, latest}
	var errs metav1.FieldErrors
	level := func(label string, dst *Level, onError Level) bool {
		v, ok := labels[label]
		if !ok {
			return false
		}
		switch Level(v) {
		case LevelPrivileged, LevelBaseline, LevelRestricted:
			*dst = Level(v)
			return true
		}
		*dst = onError
		errs = append(errs, metav1.FieldInvalid("metadata.labels["+label+"]", v, "must be one of privileged, baseline, restricted"))
		return false
	}
	version := func(label string, dst *string) bool {
		v, ok := labels[label]
		if !ok {
			return false
		}
		if v == "latest" || psVersion.MatchString(v) {
			*dst = v
		} else {
			*dst = "latest"
			errs = append(errs, metav1.FieldInvalid("metadata.labels["+label+"]", v, `must be "latest" or "v1.x"`))
		}
		return true
	}
	hasEnforce := level(EnforceLevelLabel, &p.Enforce.Level, LevelRestricted)
	version(EnforceVersionLabel, &p.Enforce.Version)
	level(AuditLevelLabel, &p.Audit.Level, LevelPrivileged)
	version(AuditVersionLabel, &p.Audit.Version)
	_, hasWarn := labels[WarnLevelLabel]
	level(WarnLevelLabel, &p.Warn.Level, LevelPrivileged)
	hasWarnVersion := version(WarnVersionLabel, &p.Warn.Version)
	if !hasWarn && hasEnforce && p.Enforce.Level.strictness() > p.Warn.Level.strictness() {
		p.Warn.Level = p.Enforce.Level
		if !hasWarnVersion {
			p.Warn.Version = p.Enforce.Version
		}
	}
	return p, errs
}

// PodSecurityViolation is one failed check: its reason and, when there is
// one, its detail.
type PodSecurityViolation struct{ Reason, Detail string }

// PodSecurityViolations are the failed checks of a pod, in the order
// kube-apiserver reports them.
type PodSecurityViolations []PodSecurityViolation

// String is "reason (detail), reason (detail)", as the plugin's messages
// list violations.
func (vs PodSecurityViolations) String() string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.Reason)
		if v.Detail != "" {
			b.WriteString(" (" + v.Detail + ")")
		}
	}
	return b.String()
}

// Reasons is the reasons alone, "reason, reason".
func (vs PodSecurityViolations) Reasons() string {
	r := make([]string, len(vs))
	for i, v := range vs {
		r[i] = v.Reason
	}
	return strings.Join(r, ", ")
}

type psCheck func(meta *metav1.ObjectMeta, spec *corev1.PodSpec) (reason, detail string)

// The checks in kube-apiserver's order: the baseline ones by their ID,
// then the restricted ones by theirs; a restricted check that replaces a
// baseline one (capabilities, hostPath volumes, seccomp, procMount) leaves
// it out of the restricted level.
var (
	baselineChecks = []struct {
		id    string
		check psCheck
	}{
		{"appArmorProfile", checkAppArmor},
		{"capabilities_baseline", checkCapabilitiesBaseline},
		{"hostNamespaces", checkHostNamespaces},
		{"hostPathVolumes", checkHostPathVolumes},
		{"hostPorts", checkHostPorts},
		{"hostProbesAndHostLifecycle", checkHostProbes},
		{"privileged", checkPrivileged},
		{"procMount", checkProcMountBaseline},
		{"seLinuxOptions", checkSELinux},
		{"seccompProfile_baseline", checkSeccompBaseline},
		{"sysctls", checkSysctls},
		{"windowsHostProcess", checkWindowsHostProcess},
	}
	restrictedChecks = []struct {
		id        string
		check     psCheck
		overrides string
	}{
		{"allowPrivilegeEscalation", checkAllowPrivilegeEscalation, ""},
		{"capabilities_restricted", checkCapabilitiesRestricted, "capabilities_baseline"},
		{"procMount_restricted", checkProcMount, "procMount"},
		{"restrictedVolumes", checkRestrictedVolumes, "hostPathVolumes"},
		{"runAsNonRoot", checkRunAsNonRoot, ""},
		{"runAsUser", checkRunAsUser, ""},
		{"seccompProfile_restricted", checkSeccompRestricted, "seccompProfile_baseline"},
	}
)

// EvaluatePod runs the checks of level on a pod (or a pod template's
// metadata and spec) and returns the violations, none for privileged.
// Every version is evaluated with the checks of v1.37 (kube-apiserver
// evaluates an older version with that version's checks).
func EvaluatePod(level Level, meta *metav1.ObjectMeta, spec *corev1.PodSpec) PodSecurityViolations {
	if level == LevelPrivileged {
		return nil
	}
	var out PodSecurityViolations
	add := func(reason, detail string) {
		if reason != "" {
			out = append(out, PodSecurityViolation{reason, detail})
		}
	}
	overridden := map[string]bool{}
	if level == LevelRestricted {
		for _, c := range restrictedChecks {
			if c.overrides != "" {
				overridden[c.overrides] = true
			}
		}
	}
	for _, c := range baselineChecks {
		if !overridden[c.id] {
			add(c.check(meta, spec))
		}
	}
	if level == LevelRestricted {
		for _, c := range restrictedChecks {
			add(c.check(meta, spec))
		}
	}
	return out
}

// visitContainers calls f for the init, regular and ephemeral containers.
func visitContainers(spec *corev1.PodSpec, f func(name string, sc *corev1.SecurityContext, c *corev1.Container)) {
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		f(c.Name, c.SecurityContext, c)
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		f(c.Name, c.SecurityContext, c)
	}
	for i := range spec.EphemeralContainers {
		e := &spec.EphemeralContainers[i].EphemeralContainerCommon
		c := &corev1.Container{Name: e.Name, Ports: e.Ports, LivenessProbe: e.LivenessProbe, ReadinessProbe: e.ReadinessProbe,
			StartupProbe: e.StartupProbe, Lifecycle: e.Lifecycle, SecurityContext: e.SecurityContext}
		f(e.Name, e.SecurityContext, c)
	}
}

func quoteJoin(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return `"` + strings.Join(items, `", "`) + `"`
}

func plural(one, many string, n int) string {
	if n == 1 {
		return one
	}
	return many
}

func containersPhrase(names []string) string {
	return plural("container", "containers", len(names)) + " " + quoteJoin(names)
}

// sortedSet is the sorted distinct values of s.
func sortedSet(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

func isWindows(spec *corev1.PodSpec) bool { return spec.OS != nil && spec.OS.Name == corev1.Windows }

func userNamespaced(spec *corev1.PodSpec) bool { return spec.HostUsers != nil && !*spec.HostUsers }

func checkAppArmor(meta *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	allowed := func(t corev1.AppArmorProfileType) bool {
		return t == corev1.AppArmorProfileTypeRuntimeDefault || t == corev1.AppArmorProfileTypeLocalhost
	}
	var setters, values, bad []string
	if sc := spec.SecurityContext; sc != nil && sc.AppArmorProfile != nil && !allowed(sc.AppArmorProfile.Type) {
		setters = append(setters, "pod")
		values = append(values, string(sc.AppArmorProfile.Type))
	}
	visitContainers(spec, func(name string, sc *corev1.SecurityContext, _ *corev1.Container) {
		if sc != nil && sc.AppArmorProfile != nil && !allowed(sc.AppArmorProfile.Type) {
			bad = append(bad, name)
			values = append(values, string(sc.AppArmorProfile.Type))
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersPhrase(bad))
	}
	values = sortedSet(values)
	var annotations []string
	for k, v := range meta.Annotations {
		if strings.HasPrefix(k, "container.apparmor.security.beta.kubernetes.io/") &&
			v != "" && v != "runtime/default" && !strings.HasPrefix(v, "localhost/") {
			annotations = append(annotations, fmt.Sprintf("%s=%q", k, v))
		}
	}
	if len(annotations) > 0 {
		slices.Sort(annotations)
		values = append(values, annotations...)
		setters = append(setters, plural("annotation", "annotations", len(annotations)))
	}
	if len(setters) == 0 {
		return "", ""
	}
	return plural("forbidden AppArmor profile", "forbidden AppArmor profiles", len(values)),
		fmt.Sprintf("%s must not set AppArmor profile type to %s", strings.Join(setters, " and "), quoteJoin(values))
}

var baselineCapabilities = []string{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

func checkCapabilitiesBaseline(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	var bad, caps []string
	visitContainers(spec, func(name string, sc *corev1.SecurityContext, _ *corev1.Container) {
		if sc == nil || sc.Capabilities == nil {
			return
		}
		valid := true
		for _, c := range sc.Capabilities.Add {
			if !slices.Contains(baselineCapabilities, string(c)) {
				valid = false
				caps = append(caps, string(c))
			}
		}
		if !valid {
			bad = append(bad, name)
		}
	})
	if len(bad) == 0 {
		return "", ""
	}
	return "non-default capabilities", fmt.Sprintf("%s must not include %s in securityContext.capabilities.add", containersPhrase(bad), quoteJoin(sortedSet(caps)))
}

func checkHostNamespaces(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	var ns []string
	if spec.HostNetwork {
		ns = append(ns, "hostNetwork=true")
	}
	if spec.HostPID {
		ns = append(ns, "hostPID=true")
	}
	if spec.HostIPC {
		ns = append(ns, "hostIPC=true")
	}
	if len(ns) == 0 {
		return "", ""
	}
	return "host namespaces", strings.Join(ns, ", ")
}

func checkHostPathVolumes(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	var vols []string
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			vols = append(vols, v.Name)
		}
	}
	if len(vols) == 0 {
		return "", ""
	}
	return "hostPath volumes", plural("volume", "volumes", len(vols)) + " " + quoteJoin(vols)
}

func checkHostPorts(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	var bad []string
	var ports []int
	visitContainers(spec, func(name string, _ *corev1.SecurityContext, c *corev1.Container) {
		valid := true
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				valid = false
				ports = append(ports, int(p.HostPort))
			}
		}
		if !valid {
			bad = append(bad, name)
		}
	})
	if len(bad) == 0 {
		return "", ""
	}
	// kube-apiserver sorts the ports as strings.
	strs := make([]string, len(ports))
	for i, p := range ports {
		strs[i] = strconv.Itoa(p)
	}
	strs = sortedSet(strs)
	return "hostPort", fmt.Sprintf("%s %s %s %s", containersPhrase(bad), plural("uses", "use", len(bad)),
		plural("hostPort", "hostPorts", len(strs)), strings.Join(strs, ", "))
}

func checkHostProbes(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	var bad, hosts []string
	probe := func(p *corev1.Probe) (h []string) {
		if p == nil {
			return nil
		}
		if p.HTTPGet != nil && p.HTTPGet.Host != "" {
			h = append(h, p.HTTPGet.Host)
		}
		if p.TCPSocket != nil && p.TCPSocket.Host != "" {
			h = append(h, p.TCPSocket.Host)
		}
		return h
	}
	handler := func(l *corev1.LifecycleHandler) (h []string) {
		if l == nil {
			return nil
		}
		if l.HTTPGet != nil && l.HTTPGet.Host != "" {
			h = append(h, l.HTTPGet.Host)
		}
		if l.TCPSocket != nil && l.TCPSocket.Host != "" {
			h = append(h, l.TCPSocket.Host)
		}
		return h
	}
	visitContainers(spec, func(name string, _ *corev1.SecurityContext, c *corev1.Container) {
		var h []string
		h = append(h, probe(c.LivenessProbe)...)
		h = append(h, probe(c.ReadinessProbe)...)
		h = append(h, probe(c.StartupProbe)...)
		if c.Lifecycle != nil {
			h = append(h, handler(c.Lifecycle.PostStart)...)
			h = append(h, handler(c.Lifecycle.PreStop)...)
		}
		if len(h) > 0 {
			bad = append(bad, name)
			hosts = append(hosts, h...)
		}
	})
	if len(bad) == 0 {
		return "", ""
	}
	bad, hosts = sortedSet(bad), sortedSet(hosts)
	return "probe or lifecycle host", fmt.Sprintf("%s %s %s %s", containersPhrase(bad), plural("uses", "use", len(bad)),
		plural("probe or lifecycle host", "probe or lifecycle hosts", len(hosts)), quoteJoin(hosts))
}

func checkPrivileged(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	var bad []string
	visitContainers(spec, func(name string, sc *corev1.SecurityContext, _ *corev1.Container) {
		if sc != nil && sc.Privileged != nil && *sc.Privileged {
			bad = append(bad, name)
		}
	})
	if len(bad) == 0 {
		return "", ""
	}
	return "privileged", containersPhrase(bad) + " must not set securityContext.privileged=true"
}

func checkProcMount(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	var bad, types []string
	visitContainers(spec, func(name string, sc *corev1.SecurityContext, _ *corev1.Container) {
		if sc != nil && sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
			bad = append(bad, name)
			types = append(types, string(*sc.ProcMount))
		}
	})
	if len(bad) == 0 {
		return "", ""
	}
	return "procMount", fmt.Sprintf("%s must not set securityContext.procMount to %s", containersPhrase(bad), quoteJoin(sortedSet(types)))
}

func checkProcMountBaseline(meta *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	if userNamespaced(spec) {
		return "", ""
	}
	return checkProcMount(meta, spec)
}

var seLinuxTypes = []string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}

func checkSELinux(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	var setters, bad, types []string
	setUser, setRole := false, false
	valid := func(o *corev1.SELinuxOptions) bool {
		ok := true
		if !slices.Contains(seLinuxTypes, o.Type) {
			ok = false
			types = append(types, o.Type)
		}
		if o.User != "" {
			ok, setUser = false, true
		}
		if o.Role != "" {
			ok, setRole = false, true
		}
		return ok
	}
	if sc := spec.SecurityContext; sc != nil && sc.SELinuxOptions != nil && !valid(sc.SELinuxOptions) {
		setters = append(setters, "pod")
	}
	visitContainers(spec, func(name string, sc *corev1.SecurityContext, _ *corev1.Container) {
		if sc != nil && sc.SELinuxOptions != nil && !valid(sc.SELinuxOptions) {
			bad = append(bad, name)
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersPhrase(bad))
	}
	if len(setters) == 0 {
		return "", ""
	}
	var data []string
	if types = sortedSet(types); len(types) > 0 {
		data = append(data, plural("type", "types", len(types))+" "+quoteJoin(types))
	}
	if setUser {
		data = append(data, "user may not be set")
	}
	if setRole {
		data = append(data, "role may not be set")
	}
	return "seLinuxOptions", fmt.Sprintf("%s set forbidden securityContext.seLinuxOptions: %s", strings.Join(setters, " and "), strings.Join(data, "; "))
}

func validSeccomp(t corev1.SeccompProfileType) bool {
	return t == corev1.SeccompProfileTypeLocalhost || t == corev1.SeccompProfileTypeRuntimeDefault
}

func checkSeccompBaseline(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	var setters, bad, values []string
	if sc := spec.SecurityContext; sc != nil && sc.SeccompProfile != nil && !validSeccomp(sc.SeccompProfile.Type) {
		setters = append(setters, "pod")
		values = append(values, string(sc.SeccompProfile.Type))
	}
	visitContainers(spec, func(name string, sc *corev1.SecurityContext, _ *corev1.Container) {
		if sc != nil && sc.SeccompProfile != nil && !validSeccomp(sc.SeccompProfile.Type) {
			bad = append(bad, name)
			values = append(values, string(sc.SeccompProfile.Type))
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersPhrase(bad))
	}
	if len(setters) == 0 {
		return "", ""
	}
	return "seccompProfile", fmt.Sprintf("%s must not set securityContext.seccompProfile.type to %s", strings.Join(setters, " and "), quoteJoin(sortedSet(values)))
}

func checkSeccompRestricted(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	if isWindows(spec) {
		return "", ""
	}
	var setters, bad, implicit, values []string
	podSet := false
	if sc := spec.SecurityContext; sc != nil && sc.SeccompProfile != nil {
		if !validSeccomp(sc.SeccompProfile.Type) {
			setters = append(setters, "pod")
			values = append(values, string(sc.SeccompProfile.Type))
		} else {
			podSet = true
		}
	}
	visitContainers(spec, func(name string, sc *corev1.SecurityContext, _ *corev1.Container) {
		switch {
		case sc != nil && sc.SeccompProfile != nil:
			if !validSeccomp(sc.SeccompProfile.Type) {
				bad = append(bad, name)
				values = append(values, string(sc.SeccompProfile.Type))
			}
		case !podSet:
			implicit = append(implicit, name)
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersPhrase(bad))
	}
	if len(setters) > 0 {
		return "seccompProfile", fmt.Sprintf("%s must not set securityContext.seccompProfile.type to %s", strings.Join(setters, " and "), quoteJoin(sortedSet(values)))
	}
	if len(implicit) > 0 {
		return "seccompProfile", fmt.Sprintf(`pod or %s must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`, containersPhrase(implicit))
	}
	return "", ""
}

var allowedSysctls = []string{
	"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
	"net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
	"net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem", "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat",
}

func checkSysctls(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	var bad []string
	if spec.SecurityContext != nil {
		for _, s := range spec.SecurityContext.Sysctls {
			if !slices.Contains(allowedSysctls, s.Name) {
				bad = append(bad, s.Name)
			}
		}
	}
	if len(bad) == 0 {
		return "", ""
	}
	return "forbidden sysctls", strings.Join(bad, ", ")
}

func checkWindowsHostProcess(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	hostProcess := func(w *corev1.WindowsSecurityContextOptions) bool {
		return w != nil && w.HostProcess != nil && *w.HostProcess
	}
	var setters, bad []string
	if spec.SecurityContext != nil && hostProcess(spec.SecurityContext.WindowsOptions) {
		setters = append(setters, "pod")
	}
	visitContainers(spec, func(name string, sc *corev1.SecurityContext, _ *corev1.Container) {
		if sc != nil && hostProcess(sc.WindowsOptions) {
			bad = append(bad, name)
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersPhrase(bad))
	}
	if len(setters) == 0 {
		return "", ""
	}
	return "hostProcess", strings.Join(setters, " and ") + " must not set securityContext.windowsOptions.hostProcess=true"
}

func checkAllowPrivilegeEscalation(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	if isWindows(spec) {
		return "", ""
	}
	var bad []string
	visitContainers(spec, func(name string, sc *corev1.SecurityContext, _ *corev1.Container) {
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			bad = append(bad, name)
		}
	})
	if len(bad) == 0 {
		return "", ""
	}
	return "allowPrivilegeEscalation != false", containersPhrase(bad) + " must set securityContext.allowPrivilegeEscalation=false"
}

func checkCapabilitiesRestricted(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	if isWindows(spec) {
		return "", ""
	}
	var missingDrop, adding, caps []string
	visitContainers(spec, func(name string, sc *corev1.SecurityContext, _ *corev1.Container) {
		if sc == nil || sc.Capabilities == nil {
			missingDrop = append(missingDrop, name)
			return
		}
		if !slices.Contains(sc.Capabilities.Drop, "ALL") {
			missingDrop = append(missingDrop, name)
		}
		added := false
		for _, c := range sc.Capabilities.Add {
			if c != "NET_BIND_SERVICE" {
				added = true
				caps = append(caps, string(c))
			}
		}
		if added {
			adding = append(adding, name)
		}
	})
	var details []string
	if len(missingDrop) > 0 {
		details = append(details, containersPhrase(missingDrop)+` must set securityContext.capabilities.drop=["ALL"]`)
	}
	if len(adding) > 0 {
		details = append(details, fmt.Sprintf("%s must not include %s in securityContext.capabilities.add", containersPhrase(adding), quoteJoin(sortedSet(caps))))
	}
	if len(details) == 0 {
		return "", ""
	}
	return "unrestricted capabilities", strings.Join(details, "; ")
}

func checkRestrictedVolumes(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	var bad, types []string
	for _, v := range spec.Volumes {
		s := v.VolumeSource
		if s.ConfigMap != nil || s.CSI != nil || s.DownwardAPI != nil || s.EmptyDir != nil || s.Ephemeral != nil ||
			s.Image != nil || s.PersistentVolumeClaim != nil || s.Projected != nil || s.Secret != nil {
			continue
		}
		bad = append(bad, v.Name)
		types = append(types, volumeType(s))
	}
	if len(bad) == 0 {
		return "", ""
	}
	types = sortedSet(types)
	return "restricted volume types", fmt.Sprintf("%s %s %s %s %s", plural("volume", "volumes", len(bad)), quoteJoin(bad),
		plural("uses", "use", len(bad)), plural("restricted volume type", "restricted volume types", len(types)), quoteJoin(types))
}

// volumeType names a volume source the restricted level refuses.
func volumeType(s corev1.VolumeSource) string {
	switch {
	case s.HostPath != nil:
		return "hostPath"
	case s.GCEPersistentDisk != nil:
		return "gcePersistentDisk"
	case s.AWSElasticBlockStore != nil:
		return "awsElasticBlockStore"
	case s.GitRepo != nil:
		return "gitRepo"
	case s.NFS != nil:
		return "nfs"
	case s.ISCSI != nil:
		return "iscsi"
	case s.Glusterfs != nil:
		return "glusterfs"
	case s.RBD != nil:
		return "rbd"
	case s.FlexVolume != nil:
		return "flexVolume"
	case s.Cinder != nil:
		return "cinder"
	case s.CephFS != nil:
		return "cephfs"
	case s.Flocker != nil:
		return "flocker"
	case s.FC != nil:
		return "fc"
	case s.AzureFile != nil:
		return "azureFile"
	case s.VsphereVolume != nil:
		return "vsphereVolume"
	case s.Quobyte != nil:
		return "quobyte"
	case s.AzureDisk != nil:
		return "azureDisk"
	case s.PhotonPersistentDisk != nil:
		return "photonPersistentDisk"
	case s.PortworxVolume != nil:
		return "portworxVolume"
	case s.ScaleIO != nil:
		return "scaleIO"
	case s.StorageOS != nil:
		return "storageos"
	}
	return "unknown"
}

func checkRunAsNonRoot(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	if userNamespaced(spec) {
		return "", ""
	}
	var setters, explicit, implicit []string
	podNonRoot := false
	if sc := spec.SecurityContext; sc != nil && sc.RunAsNonRoot != nil {
		if !*sc.RunAsNonRoot {
			setters = append(setters, "pod")
		} else {
			podNonRoot = true
		}
	}
	visitContainers(spec, func(name string, sc *corev1.SecurityContext, _ *corev1.Container) {
		switch {
		case sc != nil && sc.RunAsNonRoot != nil:
			if !*sc.RunAsNonRoot {
				explicit = append(explicit, name)
			}
		case !podNonRoot:
			implicit = append(implicit, name)
		}
	})
	if len(explicit) > 0 {
		setters = append(setters, containersPhrase(explicit))
	}
	if len(setters) > 0 {
		return "runAsNonRoot != true", strings.Join(setters, " and ") + " must not set securityContext.runAsNonRoot=false"
	}
	if len(implicit) > 0 {
		return "runAsNonRoot != true", "pod or " + containersPhrase(implicit) + " must set securityContext.runAsNonRoot=true"
	}
	return "", ""
}

func checkRunAsUser(_ *metav1.ObjectMeta, spec *corev1.PodSpec) (string, string) {
	if userNamespaced(spec) {
		return "", ""
	}
	var setters, bad []string
	if sc := spec.SecurityContext; sc != nil && sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		setters = append(setters, "pod")
	}
	visitContainers(spec, func(name string, sc *corev1.SecurityContext, _ *corev1.Container) {
		if sc != nil && sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			bad = append(bad, name)
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersPhrase(bad))
	}
	if len(setters) == 0 {
		return "", ""
	}
	return "runAsUser=0", strings.Join(setters, " and ") + " must not set runAsUser=0"
}

// SignificantPodUpdate reports whether a pod update is one the plugin
// evaluates: containers added or removed, or an image changed (the only
// changes of a pod's spec that can alter its security).
func SignificantPodUpdate(pod, old *corev1.Pod) bool {
	if len(pod.Spec.Containers) != len(old.Spec.Containers) || len(pod.Spec.InitContainers) != len(old.Spec.InitContainers) {
		return true
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Image != old.Spec.Containers[i].Image {
			return true
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Image != old.Spec.InitContainers[i].Image {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		i := slices.IndexFunc(old.Spec.EphemeralContainers, func(o corev1.EphemeralContainer) bool { return o.Name == c.Name })
		if i < 0 || old.Spec.EphemeralContainers[i].Image != c.Image {
			return true
		}
	}
	return false
}

// Stricter reports whether level a is stricter than b.
func Stricter(a, b Level) bool { return a.strictness() > b.strictness() }

// NamespacePodWarnings are the warnings of a namespace update that makes
// enforce its enforced level: one saying that existing pods violate it,
// then, for each distinct set of violations, the first pod by name (and
// how many others) with the reasons, sorted.
func NamespacePodWarnings(ns string, enforce LevelVersion, pods []*corev1.Pod) []string {
	type count struct {
		first string
		n     int
	}
	counts := map[string]*count{}
	var order []string
	for _, p := range pods {
		v := EvaluatePod(enforce.Level, &p.ObjectMeta, &p.Spec)
		if len(v) == 0 {
			continue
		}
		r := v.Reasons()
		c, ok := counts[r]
		if !ok {
			c = &count{first: p.Name}
			counts[r] = c
			order = append(order, r)
		} else if p.Name < c.first {
			c.first = p.Name
		}
		c.n++
	}
	if len(order) == 0 {
		return nil
	}
	warnings := make([]string, 0, len(order))
	for _, r := range order {
		c := counts[r]
		switch c.n {
		case 1:
			warnings = append(warnings, fmt.Sprintf("%s: %s", c.first, r))
		case 2:
			warnings = append(warnings, fmt.Sprintf("%s (and 1 other pod): %s", c.first, r))
		default:
			warnings = append(warnings, fmt.Sprintf("%s (and %d other pods): %s", c.first, c.n-1, r))
		}
	}
	slices.Sort(warnings)
	return append([]string{fmt.Sprintf("existing pods in namespace %q violate the new PodSecurity enforce level %q", ns, enforce.String())}, warnings...)
}
