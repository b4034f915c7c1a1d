// Package imagelocality is the ImageLocality score: prefer nodes that
// already hold the pod's images (node.status.images), weighted by image
// size and scaled down for images that are on many nodes anyway.
//
// It owns the score; it must not keep state across cycles or touch the
// apiserver.
package imagelocality
