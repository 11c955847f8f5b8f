package registry

import (
	"regexp"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
)

// Image references, as kube-apiserver reads them to default a container's
// imagePullPolicy. The grammar is the container image reference grammar of
// github.com/distribution/reference, which Kubernetes parses with; it is
// restated here as one regular expression because the module would be a
// dependency for a dozen lines.
var (
	imageNameComponent = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
	imageDomain        = `(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?`
	imageRefRe         = regexp.MustCompile(`^((?:` + imageDomain + `/)?` + imageNameComponent + `(?:/` + imageNameComponent + `)*)` +
		`(?::([\w][\w.-]{0,127}))?` +
		`(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`)
	imageHexIDRe = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// imageNameMaxLength is the longest repository name a reference may have.
const imageNameMaxLength = 255

// defaultPullPolicy is the imagePullPolicy kube-apiserver gives a container
// (or an image volume) that has none: Always when the image's tag is
// "latest" or it has neither tag nor digest, IfNotPresent otherwise, and
// IfNotPresent for a reference it cannot parse (validation reports those).
func defaultPullPolicy(image string) corev1.PullPolicy {
	if imageTag(image) == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// imageTag returns the tag of an image reference: the one written, "latest"
// when there is neither tag nor digest, "" when there is only a digest or
// the reference does not parse.
func imageTag(image string) string {
	m := imageRefRe.FindStringSubmatch(image)
	if m == nil || len(m[1]) > imageNameMaxLength || imageHexIDRe.MatchString(image) {
		return ""
	}
	tag, digest := m[2], m[3]
	if tag == "" && digest == "" {
		return "latest"
	}
	return tag
}
