// Package importrules holds one test, TestImportRules: every rule a
// package's doc.go states about what must never be imported ("must not
// import", "imports nothing of kstep", "never import it") is a row of its
// table, checked against `go list -json ./...`, so that a rule that is
// stated is a rule that holds. A row names the doc.go and the words that
// state the rule; the test fails when a package breaks a rule (naming the
// package, the forbidden import and the doc.go line) and when a doc.go no
// longer states a rule the table encodes (the row goes with the words).
//
// It owns no part of kstep and must not be imported by it.
package importrules
