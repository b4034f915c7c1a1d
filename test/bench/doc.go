// Package bench holds the benchmarks that need a whole cluster of real
// processes (make bench-api). They are measurements, not tests: they assert
// nothing about speed and never run in CI.
package bench
