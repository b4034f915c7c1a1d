// Package tiers is the tier table of docs/testing.md as code: which test
// runs in which of make test, make nightly and make chaos. The table is the
// one record of it: internal/testenv.Tier reads it when a test starts and
// skips what belongs to another tier, and hack/tiers -check holds it to the
// code. It owns the table's format and nothing else.
//
// Who may import it: internal/testenv and hack/tiers, from any file; other
// packages from their tests only. It must not import any kstep package
// (hack/importrules holds it to both).
package tiers
