package framework

import (
	"errors"
	"strings"
)

// Code is the outcome of running a plugin.
type Code int

const (
	// Success: the pod fits (Filter) or the step succeeded. A nil *Status
	// is Success too.
	Success Code = iota
	// Error: something went wrong that is not about the pod fitting; the
	// cycle is aborted and the pod retried with backoff.
	Error
	// Unschedulable: the pod does not fit the node now, but may after the
	// cluster changes (other pods leave, preemption).
	Unschedulable
	// UnschedulableAndUnresolvable: the pod does not fit the node and no
	// change to the node's pods would make it fit (taints, selectors).
	UnschedulableAndUnresolvable
	// Skip: from PreFilter, "my Filter has nothing to check for this pod";
	// from PreScore, "my Score has nothing to say"; from Bind, "not mine,
	// ask the next binder".
	Skip
)

var codeNames = [...]string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Skip"}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Unknown"
}

// Status is a plugin's result. The nil *Status means Success, so the hot
// path (a node that fits) allocates nothing.
type Status struct {
	code    Code
	reasons []string
	err     error
	plugin  string
}

// NewStatus returns a status with a code and the reasons shown to users
// ("Insufficient cpu"). A Success without reasons is nil.
func NewStatus(code Code, reasons ...string) *Status {
	if code == Success && len(reasons) == 0 {
		return nil
	}
	return &Status{code: code, reasons: reasons}
}

// AsStatus wraps an error as an Error status; nil stays nil (Success).
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, reasons: []string{err.Error()}, err: err}
}

// Code returns the status code; Success for nil.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// Reasons are the user-facing reasons.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	return s.reasons
}

// Message joins the reasons with ", ".
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.reasons, ", ")
}

// Plugin is the name of the plugin that produced the status (set by the
// Framework).
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin records which plugin produced the status and returns s.
func (s *Status) WithPlugin(name string) *Status {
	if s != nil {
		s.plugin = name
	}
	return s
}

// IsSuccess reports Success (or nil).
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsSkip reports Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsRejected reports whether the pod does not fit: Unschedulable or
// UnschedulableAndUnresolvable.
func (s *Status) IsRejected() bool {
	c := s.Code()
	return c == Unschedulable || c == UnschedulableAndUnresolvable
}

// AsError returns the status as an error: nil for Success and Skip.
func (s *Status) AsError() error {
	if s.IsSuccess() || s.IsSkip() {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errors.New(s.Message())
}

func (s *Status) String() string {
	if s == nil {
		return "Success"
	}
	if len(s.reasons) == 0 {
		return s.code.String()
	}
	return s.code.String() + ": " + s.Message()
}
