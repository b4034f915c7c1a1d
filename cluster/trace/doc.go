// Package trace is the step tracer: every actor stamps the step it performs
// (shared/DESIGN.md §2) at the moment it performs it, and the harness joins
// the stamps by object UID.
//
// It owns the event record, the step names and the per-process JSONL sink.
// Emit is on every actor's hot path, so it never blocks and never does I/O:
// it puts a fixed-size record in a bounded buffer, and one goroutine writes.
// When the buffer is full the event is dropped and counted; any drop makes
// a run invalid. A nil *Tracer is valid and records nothing.
//
// It also reads a trace file back (read.go: Read, ReadFile, the one parser
// of the format for every reader: bench and chaos). It must
// not know what an actor does with an object, nor what a run makes of the
// events it reads back (that is the harness's job).
package trace
