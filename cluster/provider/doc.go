// Package provider defines where a kstep cluster runs: the Provider interface
// that brings a cluster up and down and starts, stops and signals its actors
// one at a time, and the Actor record that names them.
//
// It owns only the contract. Implementations live in subpackages
// (provider/process today; docker and external later). The chaos engine and
// the harness program against this interface and must not depend on how an
// implementation runs its actors.
//
// It must not import an implementation, and it must not know what an actor
// does: etcd, the apiserver and the other actors are opaque processes here.
package provider
