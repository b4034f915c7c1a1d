package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kstep-dev/kstep/cluster/pki"
)

// Authorization: what an authenticated user may do. --authorization-mode
// lists authorizers (AlwaysAllow, Node, RBAC); the first to allow a request
// decides, and a request none allows is a 403. Members of system:masters
// are allowed everything before any authorizer is asked, as upstream.

// The authorization modes.
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeNode        = "Node"
	ModeRBAC        = "RBAC"
)

// decision is an authorizer's answer. noOpinion leaves the request to the
// next authorizer.
type decision int

const (
	noOpinion decision = iota
	allowed
)

// decider is one authorizer of the union.
type decider interface {
	decide(ctx context.Context, a *Attributes) (decision, string)
}

// unionAuthz asks each decider in turn.
type unionAuthz []decider

func (u unionAuthz) Authorize(ctx context.Context, a Attributes) error {
	var reasons []string
	for _, d := range u {
		dec, why := d.decide(ctx, &a)
		if dec == allowed {
			return nil
		}
		if why != "" {
			reasons = append(reasons, why)
		}
	}
	if len(reasons) == 0 {
		return errors.New("no authorizer allows it")
	}
	return errors.New(strings.Join(reasons, "; "))
}

// privilegedGroup allows every request of system:masters.
type privilegedGroup struct{}

func (privilegedGroup) decide(_ context.Context, a *Attributes) (decision, string) {
	if contains(a.User.Groups, pki.MastersGroup) {
		return allowed, ""
	}
	return noOpinion, ""
}

type alwaysAllow struct{}

func (alwaysAllow) decide(context.Context, *Attributes) (decision, string) { return allowed, "" }

// newAuthorizer builds the union for modes.
func (s *Server) newAuthorizer(modes []string) (Authorizer, error) {
	u := unionAuthz{privilegedGroup{}}
	seen := map[string]bool{}
	for _, m := range modes {
		if seen[m] {
			return nil, fmt.Errorf("authorization mode %q given twice", m)
		}
		seen[m] = true
		switch m {
		case ModeAlwaysAllow:
			u = append(u, alwaysAllow{})
		case ModeNode:
			u = append(u, s.newNodeAuthorizer())
		case ModeRBAC:
			u = append(u, s.newRBAC())
		default:
			return nil, fmt.Errorf("unknown authorization mode %q: want %s, %s or %s", m, ModeAlwaysAllow, ModeNode, ModeRBAC)
		}
	}
	return u, nil
}

// describe names the request in a denial, as upstream's messages do.
func (a *Attributes) describe() string {
	if a.Path != "" {
		return fmt.Sprintf("%s %s", a.Verb, a.Path)
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	if a.APIGroup != "" {
		res += "." + a.APIGroup
	}
	s := a.Verb + " " + res
	if a.Name != "" {
		s += " " + a.Name
	}
	if a.Namespace != "" {
		s += " in namespace " + a.Namespace
	}
	return s
}
