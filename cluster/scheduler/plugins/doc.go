// Package plugins is the in-tree plugin registry — one map literal from
// plugin name to factory — and the default plugin set with its score
// weights. Each plugin lives in its own subpackage.
//
// It owns which plugins exist and which are on by default; it must not run
// them (the framework does) nor touch the apiserver.
package plugins
