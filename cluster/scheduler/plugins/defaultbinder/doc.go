// Package defaultbinder is the DefaultBinder: it makes a scheduling decision
// durable by creating the pod's pods/binding subresource on the apiserver.
//
// It owns that one write. It must not touch the scheduler's cache or queue
// (the scheduler confirms or forgets the assumed pod from the result), nor
// etcd, nor any other actor.
package defaultbinder
