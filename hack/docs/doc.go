// Package docs holds README.md and docs/ to the repository: its tests
// check that every fenced sh block names the tier of docs/testing.md it
// runs in (an HTML comment before it, `<!-- tier: test -->`, optionally
// `<!-- tier: test, exit 2 -->` for an example that shows a usage error),
// run the blocks of make test's tier and, in make nightly, the nightly ones,
// and check that every relative link points at a file and heading that
// exist and that no link leaves the repository.
//
// A block tagged with a tier whose own command it is (`make test` in test,
// `make nightly` in nightly) is that tier, not run by it; a block tagged
// chaos or conformance must be `make chaos` or `make conformance`, which
// those tiers are. `<!-- tier: manual (why) -->` marks an example no tier
// can run (three hosts, a Pushgateway), and says why.
//
// It owns no part of kstep and must not be imported by it.
package docs
