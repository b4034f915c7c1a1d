package storage

import (
	"testing"
	"unsafe"
)

// Every version the watch cache holds is an Entry (about 50,000 of them
// at 10,000 pods): it stays in the 192-byte size class.
func TestEntryStaysIn192Bytes(t *testing.T) {
	if n := unsafe.Sizeof(Entry{}); n > 192 {
		t.Errorf("an Entry is %d bytes: a field added to it costs every version the cache holds (move what only fresh entries need behind a pointer)", n)
	}
}
