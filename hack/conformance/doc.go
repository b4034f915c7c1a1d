// Command conformance is the verdict of `make conformance` (issue 46):
// upstream Kubernetes' [Conformance] specs, run by upstream's e2e.test
// against a kstep cluster, held against a checked-in list of known
// failures, each with its reason.
//
//	go run ./hack/conformance skip -skips test/conformance/skips.txt
//	go run ./hack/conformance compare -known test/conformance/known-failures.txt report.json
//
// skip prints the --ginkgo.skip regexp of the skip list (the specs that
// need what kstep's nodes cannot give, never run). compare reads the
// ginkgo JSON report e2e.test wrote (--ginkgo.json-report), sorts every
// [Conformance] spec into passed, failed-known, failed-new,
// known-now-passing and skipped, prints the summary and exits 1 when a
// spec failed that the list does not name, when a listed spec passed (the
// list only shrinks) or when the list names a spec the suite does not
// have; 2 when a list does not parse; 3 when the report holds no verdict
// (missing, unreadable, or the suite's setup failed before any spec ran).
// With -draft FILE it also writes the failed-new specs in the list's
// format, grouped under their failure's first line: the start of a list
// entry, whose reason a person then writes (why kstep fails the spec: an
// API it does not serve, a container it does not run).
//
// The lists' format (test/conformance/*.txt): a line "## reason" gives
// the reason of the entries below it, up to the next "## "; every entry
// must have one. Lines starting with a single "#" are comments; blank
// lines are ignored. An entry of the known-failures list is a spec's full
// name as ginkgo prints it; an entry of the skip list is a regexp.
//
// It owns no part of kstep and must not be imported by it; it reads its
// inputs and writes its summary and the files its flags name, nothing else.
package main
