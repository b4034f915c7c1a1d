// Package clidocs renders a cobra command tree as Markdown, one page per
// command, from what each command's --help prints (its usage line, long
// description, examples and flags), so docs/reference cannot drift from
// the binary: cmd/kstep's TestCLIReferenceMatchesHelp renders kstep's tree
// into a temporary directory and fails when docs/reference differs, and
//
//	go test ./cmd/kstep -run TestCLIReferenceMatchesHelp -update-reference
//
// rewrites docs/reference/kstep*.md.
//
// It owns the pages' format and nothing else: it must not import any kstep
// package (the tree is handed to it), and kstep's binary must not import it.
package clidocs
