package simruntime

import (
	"fmt"
	"hash/fnv"
	"math/bits"
	"net/netip"
)

// ipam hands out a node's pod IPs: every host address of its range but the
// first, which is the node's own (as a CNI bridge's gateway would be).
type ipam struct {
	prefix  netip.Prefix
	gateway netip.Addr
	used    []uint64 // bit i: host i of the range is taken
	size    int
	next    int
}

func newIPAM(p netip.Prefix) (*ipam, error) {
	if !p.IsValid() || !p.Addr().Is4() {
		return nil, fmt.Errorf("pod CIDR %v: an IPv4 prefix is required", p)
	}
	host := 32 - p.Bits()
	if host < 2 || host > 16 {
		return nil, fmt.Errorf("pod CIDR %v: between /16 and /30", p)
	}
	p = p.Masked()
	size := 1 << host
	a := &ipam{prefix: p, gateway: p.Addr().Next(), used: make([]uint64, (size+63)/64), size: size, next: 2}
	a.mark(0)        // network
	a.mark(1)        // the node
	a.mark(size - 1) // broadcast
	return a, nil
}

func (a *ipam) mark(i int)       { a.used[i/64] |= 1 << (i % 64) }
func (a *ipam) taken(i int) bool { return a.used[i/64]&(1<<(i%64)) != 0 }
func (a *ipam) clearBit(i int)   { a.used[i/64] &^= 1 << (i % 64) }
func (a *ipam) addr(i int) netip.Addr {
	b := a.prefix.Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(i)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// allocate returns a free address, round-robin so a released address is
// not reused at once (as host-local does).
func (a *ipam) allocate() (netip.Addr, error) {
	for n := 0; n < a.size; n++ {
		i := (a.next + n) % a.size
		if !a.taken(i) {
			a.mark(i)
			a.next = i + 1
			return a.addr(i), nil
		}
	}
	return netip.Addr{}, fmt.Errorf("pod CIDR %v is exhausted", a.prefix)
}

func (a *ipam) release(ip netip.Addr) {
	if !a.prefix.Contains(ip) {
		return
	}
	x, y := ip.As4(), a.prefix.Addr().As4()
	i := int((uint32(x[2])<<8 | uint32(x[3])) - (uint32(y[2])<<8 | uint32(y[3])))
	if i > 1 && i < a.size-1 {
		a.clearBit(i)
	}
}

// free counts the addresses left.
func (a *ipam) free() int {
	n := 0
	for _, w := range a.used {
		n += 64 - bits.OnesCount64(w)
	}
	return n - (len(a.used)*64 - a.size)
}

// HollowRange is where hollow pod IPs come from: 240.0.0.0/4, reserved
// ("future use") and routed nowhere, so a hollow pod's address can never
// reach a real host even if something dialled it.
var HollowRange = netip.MustParsePrefix("240.0.0.0/4")

// NodeCIDR returns the /24 of HollowRange for hollow node number i
// (0 ≤ i < 2^20).
func NodeCIDR(i int) netip.Prefix {
	v := uint32(240)<<24 | uint32(i&0xfffff)<<8
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), 0}), 24)
}

// NodeCIDRFor picks a /24 of HollowRange from a node's name, for a hollow
// kubelet started alone (hollow-nodes numbers its nodes instead).
func NodeCIDRFor(name string) netip.Prefix {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return NodeCIDR(int(h.Sum32()))
}
