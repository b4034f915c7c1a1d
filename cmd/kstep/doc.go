// Command kstep is the one kstep binary: it brings clusters up and down,
// and each actor of a cluster (etcd member, apiserver, ...) is a subcommand
// of it, so a provider only ever needs this binary.
//
// Each subcommand lives in its own file as a newXxxCmd constructor; add it to
// newRootCmd's list.
//
// It owns command-line parsing and process signals; what each command does
// lives in the cluster/ packages, which must not import this one.
package main
