package provider

import (
	"net"
	"strconv"
	"testing"
)

// Ports are distinct, free, and below the ephemeral range (where a process
// binding port 0 could be handed one before its actor binds it).
func TestFreePortsAvoidTheEphemeralRange(t *testing.T) {
	ports, err := FreePorts(40)
	if err != nil {
		t.Fatal(err)
	}
	lo := ephemeralLow()
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d twice", p)
		}
		seen[p] = true
		if p < portLow || (lo > portLow+160 && p >= lo) {
			t.Errorf("port %d outside [%d, %d)", p, portLow, lo)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Errorf("port %d not free: %v", p, err)
			continue
		}
		l.Close()
	}
}
