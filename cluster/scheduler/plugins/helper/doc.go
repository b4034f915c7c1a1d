// Package helper holds what several plugins share: taint/toleration
// matching, parsed node selectors and node affinity, and upstream's default
// score normalization.
//
// It owns pure functions only; it must not keep state or touch the
// apiserver.
package helper
