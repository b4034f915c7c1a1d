// Command kstep is the one kstep binary: it brings clusters up and down,
// and each actor of a cluster (etcd member, apiserver, ...) is a subcommand
// of it, so a provider only ever needs this binary.
//
// Each subcommand lives in its own file as a newXxxCmd constructor; add it to
// newRootCmd's list.
//
// It owns command-line parsing and process signals; what each command does
// lives in the library packages, which must not import this one: the
// actors and the providers under cluster/, the harness at the top level
// (bench, chaos, loadgen, preflight, results). A command file holds the
// wiring of its flags to them, and at most an operator's small procedure
// over one of them (etcdrecover.go: cluster/etcdadmin.Recover).
package main
