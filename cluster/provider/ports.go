package provider

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Ports are chosen below the kernel's ephemeral range: a port we pick is
// free now, but an actor binds it only later, and in between any process
// that binds port 0 (a test's embedded etcd, an outgoing connection) could
// be handed it if it were ephemeral. Below the range only another explicit
// choice can collide.
const (
	portLow  = 20000
	portHigh = 32767 // exclusive upper bound when the range starts above it
)

// FreePorts returns n distinct free TCP ports on 127.0.0.1 from
// [portLow, start of the ephemeral range). Every listener stays open until
// all are chosen; another program may still take one before its actor binds
// it, and the actor's readiness wait then fails naming the port.
func FreePorts(n int) ([]int, error) {
	hi := portHigh
	if lo := ephemeralLow(); lo > portLow+n*4 && lo-1 < hi {
		hi = lo - 1
	}
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	seen := map[int]bool{}
	for tries := 0; len(ports) < n; tries++ {
		if tries > 50*n+100 {
			return nil, fmt.Errorf("reserve %d ports on 127.0.0.1 in [%d, %d]: only %d free", n, portLow, hi, len(ports))
		}
		port := portLow + rand.IntN(hi-portLow+1)
		if seen[port] {
			continue
		}
		seen[port] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // taken
		}
		listeners = append(listeners, l)
		ports = append(ports, port)
	}
	return ports, nil
}

// ephemeralLow is the first port of Linux's ephemeral range, 0 when unknown.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	lo, _ := strconv.Atoi(f[0])
	return lo
}
