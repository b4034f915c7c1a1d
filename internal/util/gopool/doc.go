// Package gopool runs short functions on goroutines that outlive them, so
// that the stack one function grew is already there for the next.
//
// A new goroutine starts with a small stack (the runtime's average of all
// goroutines' stacks, a few KB in a process whose goroutines mostly wait on
// watches) and doubles it, copying every frame, each time a call goes
// deeper: an apiserver's write (handler chain, decode, the field manager's
// reflective walk, the etcd client) grows its stack three or four times.
// net/http starts a goroutine per request and the storage layer one per etcd
// attempt, so in a saturation profile stack growth (runtime.newstack and
// copystack) was 6-11 % of an apiserver's CPU. A Pool's idle workers keep
// their grown stacks between functions (the garbage collector halves an idle
// stack at most once per cycle), so a function handed to one starts on a
// stack that is already deep enough.
//
// It owns only the scheduling of functions onto goroutines: what they do, and
// their contexts, deadlines and cancellation, are the caller's. A function
// must not wait for a goroutine of the pool that it started itself, and a
// Pool must not run functions that live as long as a stream (a watch holds
// its goroutine for its lifetime and would pin a worker): callers send only
// work that ends.
//
// Who may import it: any kstep package, the actors first (cluster/apiserver
// and cluster/storage run on it). Like everything under internal/util, it
// imports no other kstep package, so that an actor importing it imports
// nothing else of kstep's (hack/importrules holds both to it).
package gopool
