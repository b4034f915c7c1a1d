// Package manager runs the controllers of the controller-manager under
// leader election: while this process leads, it builds fresh informers,
// starts every enabled controller on them, and the moment leadership is
// lost it stops them all before campaigning again.
//
// It owns the registry of controllers (registry.go) and their lifecycle.
// It must not contain reconcile logic.
package manager
