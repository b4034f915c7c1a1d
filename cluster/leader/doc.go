// Package leader runs an actor's work only while it holds a Lease, using
// client-go's tools/leaderelection.
//
// It owns the campaign loop: campaign, lead (run the work with a context
// that ends the moment leadership is lost), stop the work completely, and
// campaign again. Upstream's controller-manager and scheduler exit when
// they lose the lease and need a supervisor to come back; kstep's actors
// rejoin the election by themselves. A graceful stop releases the lease so
// a standby takes over at once.
//
// It must not know what the work is.
package leader
