// Command testtimes reads the event stream of `go test -json` and prints
// where the time went: the N slowest tests (top-level and subtests, each
// with its package) and every package's wall time, slowest first, with the
// sum. `make test-times` runs the suite through it; `docs/testing.md` says
// how to use it when a tier nears its budget.
//
//	go test -json ./... > /tmp/t.json; go run ./hack/testtimes -n 30 /tmp/t.json
//
// It owns no part of kstep and reads nothing but its input.
package main
