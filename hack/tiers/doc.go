// Command tiers reads the tier table of docs/testing.md, the one record of
// which test runs where, and answers for it:
//
//	go run ./hack/tiers -check          # the table against the code (exit 1 on a problem)
//	go run ./hack/tiers nightly         # per package, the -run pattern of a tier's tests
//
// The table's rows name a package, a test (a top-level test, or one of its
// subtests as TestX/sub) and a tier: test (make test), nightly (make
// nightly), chaos (make chaos). At run time internal/testenv.Tier reads
// the same table (package table), so a row moves a test, and `-check`
// (run by this package's own test, in make test) keeps the table true:
// every test it names exists, every test that starts a cluster (a
// provider's Up, or the kstep binary's up, bench or chaos) is in it, and
// every such test reaches testenv.Tier, where the table takes effect; in a
// package with lanes (test/e2e's inLane), every such test takes one.
//
// It owns no part of kstep and must not be imported by it.
package main
