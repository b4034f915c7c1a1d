// Package jsonctl is the client half of the small JSON-over-HTTP controls
// kstep's actors serve about themselves (cluster/netfault's links,
// cluster/kubelet/hollowctl's kubelets): one request, one JSON answer, and
// a 404 told apart from other failures. It owns nothing else and knows no
// control's document.
//
// Who may import it: any kstep package. Like everything under
// internal/util, it imports no other kstep package (hack/importrules
// holds it to that).
package jsonctl
