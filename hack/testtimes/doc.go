// Command testtimes reads the event stream of `go test -json` and prints
// where the time went: the N slowest tests (top-level and subtests, each
// with its package) by their own time, a test/e2e lane's wait taken out
// (the "lane: NAME (waited D)" line inLane logs); each lane's own times
// summed; and every package's wall time, slowest first, with when it ran
// and the sum. `make test-times` runs the suite through it;
// `docs/testing.md` says how to use it when a tier nears its budget.
//
//	go test -json ./... > /tmp/t.json; go run ./hack/testtimes -n 30 /tmp/t.json
//
// It owns no part of kstep and reads nothing but its input.
package main
