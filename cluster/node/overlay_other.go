//go:build !linux

package node

import "errors"

func overlaySupported(string) error { return errors.New("overlayfs is Linux only") }
