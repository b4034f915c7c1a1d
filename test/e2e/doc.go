// Package e2e runs kstep the way its users do: the built binary (KSTEP_BIN)
// brings a cluster up as real processes, and the installed kubectl and
// client-go talk to it. It owns no production code and must not reach into
// a running actor except through its API, its signals and its files.
package e2e
