package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/kstep-dev/kstep/cluster/storage"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The default/kubernetes Service and its endpoints (upstream's bootstrap
// controller and lease endpoint reconciler): every apiserver holds a key
// under masterLeasePrefix on an etcd lease of Options.EndpointLeaseTTL, and
// every apiserver rewrites the Service's Endpoints and EndpointSlice
// whenever the set of live keys changes. A killed apiserver's key expires
// with its lease, so it leaves the endpoints within the TTL; a stopped one
// revokes its lease and leaves at once; one that returns writes its key and
// is back as soon as a reconciler sees it.
const (
	// ReconcilerLease and ReconcilerNone are --endpoint-reconciler-type's
	// values, as upstream's.
	ReconcilerLease = "lease"
	ReconcilerNone  = "none"

	kubernetesService = "kubernetes"
	masterLeasePrefix = "/registry/masterleases/"
	// kubernetesServiceIP is the first address of the service range
	// (services.go), kept for this Service: random allocation starts at .2.
	kubernetesServiceIP = "10.96.0.1"
	// skipMirrorLabel keeps the EndpointSlice mirroring controller off the
	// Endpoints this file writes: the apiserver writes the slice itself.
	skipMirrorLabel = "endpointslice.kubernetes.io/skip-mirror"
)

// masterLease is the value of one apiserver's key.
type masterLease struct {
	Name string `json:"name"`
	IP   string `json:"ip"`
	Port int32  `json:"port"`
}

// advertised is where the other actors reach this apiserver: the
// configured address, or the address ln is bound to, or (when ln is bound
// to every address) the host's first non-loopback IPv4 address; the
// configured port, or the link proxy's, or ln's.
func (s *Server) advertised(ln net.Addr) (masterLease, error) {
	host, port, err := net.SplitHostPort(ln.String())
	if err != nil {
		return masterLease{}, err
	}
	ip := s.opts.AdvertiseAddress
	if ip == "" {
		if a, err := netip.ParseAddr(host); err == nil && !a.IsUnspecified() {
			ip = a.String()
		} else {
			ip = firstHostIPv4()
		}
	}
	if a, err := netip.ParseAddr(ip); err != nil || !a.Is4() {
		return masterLease{}, fmt.Errorf("advertise address %q is not an IPv4 address", ip)
	}
	p := s.opts.AdvertisePort
	if p == 0 {
		n, err := strconv.Atoi(port)
		if err != nil {
			return masterLease{}, err
		}
		p = int32(n)
	}
	return masterLease{Name: s.opts.Name, IP: ip, Port: p}, nil
}

// firstHostIPv4 is the first non-loopback IPv4 address of an interface
// that is up (a container's own address), or 127.0.0.1.
func firstHostIPv4() string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "127.0.0.1"
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
				return n.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

// runEndpointReconciler holds this apiserver's lease once it is ready and
// reconciles the Service's endpoints on every change of the leases, and
// every resync as a guard against other writers, until ctx ends.
func (s *Server) runEndpointReconciler(ctx context.Context, self masterLease) {
	if s.opts.EndpointReconcilerType == ReconcilerNone {
		return
	}
	// Endpoints are served traffic: join them only once this apiserver
	// serves, as upstream's post-start hook does.
	for _, c := range s.cachers {
		select {
		case <-c.Ready():
		case <-ctx.Done():
			return
		}
	}
	val, _ := json.Marshal(self)
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		s.store.KeepKey(ctx, masterLeasePrefix+self.IP+":"+strconv.Itoa(int(self.Port)), val, s.opts.EndpointLeaseTTL)
	}()
	defer func() { <-kept }() // the lease revoked
	changes := s.store.Changes(ctx, masterLeasePrefix)
	resync := time.NewTicker(max(s.opts.EndpointLeaseTTL, time.Second))
	defer resync.Stop()
	failed := false
	for {
		if !failed {
			select {
			case <-ctx.Done():
				return
			case <-changes:
			case <-resync.C:
			}
		}
		err := s.reconcileKubernetesService(ctx, self)
		if failed = err != nil && ctx.Err() == nil; failed {
			// A conflict with another apiserver's write is normal: look again.
			s.log.Warn("reconciling the kubernetes service's endpoints", "err", err)
			sleep(ctx, 200*time.Millisecond)
		}
	}
}

// reconcileKubernetesService makes the Service exist and its Endpoints and
// EndpointSlices list exactly the apiservers whose leases are live.
func (s *Server) reconcileKubernetesService(ctx context.Context, self masterLease) error {
	if err := s.ensureKubernetesService(ctx, self); err != nil {
		return err
	}
	res, err := s.store.List(ctx, masterLeasePrefix, "", 0, 0)
	if err != nil {
		return err
	}
	var live []masterLease
	for _, kv := range res.KVs {
		var l masterLease
		if err := json.Unmarshal(kv.Value, &l); err == nil && l.IP != "" && l.Port > 0 {
			live = append(live, l)
		}
	}
	ep, eps := kubernetesEndpoints(live)
	if err := s.reconcileObject(ctx, s.resources[corev1.SchemeGroupVersion.WithResource("endpoints")], ep); err != nil {
		return err
	}
	eslices := s.resources[discoveryv1.SchemeGroupVersion.WithResource("endpointslices")]
	want := map[string]bool{}
	for _, sl := range eps {
		want[sl.Name] = true
		if err := s.reconcileObject(ctx, eslices, sl); err != nil {
			return err
		}
	}
	// Slices of ports no apiserver serves on any more: found in the watch
	// cache (this runs on every resync of every apiserver; a range over
	// etcd would read every slice of the default namespace each time).
	// A cache entry behind etcd conflicts, and the next pass looks again.
	mine := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: kubernetesService, discoveryv1.LabelManagedBy: managedByAPIServer})
	old, _, err := s.cacher(eslices).List(ctx, 0, storage.Filter{Namespace: metav1.NamespaceDefault, Label: mine})
	if err != nil {
		return err
	}
	for _, e := range old {
		if want[objectMeta(e.Object()).Name] {
			continue
		}
		if _, _, err := s.store.Delete(ctx, e.Key, e.RV); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
	}
	return nil
}

// managedByAPIServer marks the slices this file writes, so that it removes
// only its own.
const managedByAPIServer = "kstep-apiserver"

// kubernetesEndpoints is what the Service's endpoints hold for the live
// apiservers. Addresses that share a port share a subset and a slice; the
// process provider binds every apiserver on 127.0.0.1 with a port of its
// own, so there each apiserver is a subset (and a slice) of its own, with a
// loopback address that only a same-host client can use (ordinary writers
// may not write loopback endpoints; the apiserver writes these itself).
func kubernetesEndpoints(live []masterLease) (*corev1.Endpoints, []*discoveryv1.EndpointSlice) {
	byPort := map[int32][]string{}
	for _, l := range live {
		if !slices.Contains(byPort[l.Port], l.IP) {
			byPort[l.Port] = append(byPort[l.Port], l.IP)
		}
	}
	ports := make([]int32, 0, len(byPort))
	for p := range byPort {
		ports = append(ports, p)
	}
	slices.Sort(ports)
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: kubernetesService, Namespace: metav1.NamespaceDefault,
		Labels: map[string]string{skipMirrorLabel: "true"}}}
	var eps []*discoveryv1.EndpointSlice
	name, tcp, yes := "https", corev1.ProtocolTCP, true
	for i, p := range ports {
		ips := byPort[p]
		slices.Sort(ips)
		sub := corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Name: name, Port: p, Protocol: tcp}}}
		sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: kubernetesService, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{discoveryv1.LabelServiceName: kubernetesService, discoveryv1.LabelManagedBy: managedByAPIServer}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &p, Protocol: &tcp}}}
		if i > 0 {
			sl.Name = kubernetesService + "-" + strconv.Itoa(int(p))
		}
		for _, ip := range ips {
			sub.Addresses = append(sub.Addresses, corev1.EndpointAddress{IP: ip})
			sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip},
				Conditions: discoveryv1.EndpointConditions{Ready: &yes}})
		}
		ep.Subsets = append(ep.Subsets, sub)
		eps = append(eps, sl)
	}
	return ep, eps
}

// ensureKubernetesService creates default/kubernetes if absent, with the
// service range's first address, port 443 to this apiserver's port.
func (s *Server) ensureKubernetesService(ctx context.Context, self masterLease) error {
	svcs := s.resources[corev1.SchemeGroupVersion.WithResource("services")]
	key := svcs.key(metav1.NamespaceDefault, kubernetesService)
	if _, ok := s.cacher(svcs).Get(key); ok {
		return nil
	}
	single := corev1.IPFamilyPolicySingleStack
	local := corev1.ServiceInternalTrafficPolicyCluster
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesService, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: corev1.ServiceSpec{
			Type:                  corev1.ServiceTypeClusterIP,
			ClusterIP:             kubernetesServiceIP,
			ClusterIPs:            []string{kubernetesServiceIP},
			IPFamilies:            []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy:        &single,
			SessionAffinity:       corev1.ServiceAffinityNone,
			InternalTrafficPolicy: &local,
			Ports: []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443,
				TargetPort: intstr.FromInt32(self.Port)}},
		},
	}
	if _, err := s.store.Create(ctx, ipKey(kubernetesServiceIP), []byte(metav1.NamespaceDefault+"/"+kubernetesService)); err != nil && !errors.Is(err, storage.ErrExists) {
		return err
	}
	prepareForCreate(svcs, svc, metav1.NewTime(s.now()))
	val, err := encodeStored(svcs, svc)
	if err != nil {
		return err
	}
	if _, err := s.store.Create(ctx, key, val); err != nil && !errors.Is(err, storage.ErrExists) {
		return err
	}
	return nil
}

// reconcileObject creates want if absent and rewrites it if what is stored
// holds other labels, subsets, endpoints or ports; the write is conditional
// on what was read, so racing apiservers never lose each other's writes.
func (s *Server) reconcileObject(ctx context.Context, r *resource, want runtime.Object) error {
	wm := objectMeta(want)
	key := r.key(wm.Namespace, wm.Name)
	kv, err := s.store.Get(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		prepareForCreate(r, want, metav1.NewTime(s.now()))
		val, err := encodeStored(r, want)
		if err != nil {
			return err
		}
		if _, err = s.store.Create(ctx, key, val); errors.Is(err, storage.ErrExists) {
			return nil // another apiserver's: the watch brings us back
		}
		return err
	}
	if err != nil {
		return err
	}
	obj, err := decodeStored(r, kv.Value, kv.ModRev)
	if err != nil {
		return err
	}
	cur := objectMeta(obj)
	if cur.DeletionTimestamp != nil {
		return nil // going; recreated once gone
	}
	same := equality.Semantic.DeepEqual(cur.Labels, wm.Labels)
	switch c := obj.(type) {
	case *corev1.Endpoints:
		w := want.(*corev1.Endpoints)
		same = same && equality.Semantic.DeepEqual(c.Subsets, w.Subsets)
		c.Subsets = w.Subsets
	case *discoveryv1.EndpointSlice:
		w := want.(*discoveryv1.EndpointSlice)
		same = same && c.AddressType == w.AddressType && equality.Semantic.DeepEqual(c.Endpoints, w.Endpoints) &&
			equality.Semantic.DeepEqual(c.Ports, w.Ports)
		c.Endpoints, c.Ports = w.Endpoints, w.Ports
	}
	if same {
		return nil
	}
	cur.Labels = wm.Labels
	val, err := encodeStored(r, obj)
	if err != nil {
		return err
	}
	_, _, err = s.store.Update(ctx, key, val, kv.ModRev)
	return err
}
