package apiserver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"

	"github.com/kstep-dev/kstep/cluster/storage"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Service cluster IPs come from 10.96.0.0/16; each allocated IP is a key
// created on absence, so two apiservers never hand out the same one.
const serviceCIDRBase = 10<<24 | 96<<16

func ipKey(ip string) string { return "/registry/serviceips/" + ip }

var servicesGR = corev1.Resource("services")

// maxIPDraws bounds the random cluster IPs a Service's write tries.
const maxIPDraws = 64

// createService stores a new Service that needs a cluster IP (encoded by
// encode, once its IP is set) together with its IP's key, in one etcd
// transaction: the IP is held if and only if the Service is stored, so a
// create that fails (etcd, a name taken) never leaks an IP, and a Service
// costs one Raft commit, not two.
func (s *Server) createService(ctx context.Context, key string, svc *corev1.Service, encode func() ([]byte, error)) (int64, error) {
	var rev int64
	err := withClusterIP(svc, encode, func(val []byte, ip storage.KV) (err error) {
		rev, err = s.store.CreateWith(ctx, key, val, ip)
		return err
	})
	return rev, err
}

// updateService stores an update of a Service read at modRev, taking a
// cluster IP (one asked for, or drawn) when it needs one it does not hold
// (ExternalName turned ClusterIP) and giving up the one old held when it
// holds it no more (turned ExternalName), in the update's own transaction.
func (s *Server) updateService(ctx context.Context, key string, svc, old *corev1.Service, modRev int64, encode func() ([]byte, error)) (int64, storage.KV, error) {
	var gone []string
	oldIP := heldIP(old)
	if oldIP != "" && heldIP(svc) != oldIP {
		gone = []string{ipKey(oldIP)}
	}
	if !needsClusterIP(svc) || (oldIP != "" && svc.Spec.ClusterIP == oldIP) {
		val, err := encode()
		if err != nil {
			return 0, storage.KV{}, apierrors.NewInternalError(err)
		}
		return s.store.UpdateWith(ctx, key, val, modRev, nil, gone)
	}
	var rev int64
	var cur storage.KV
	err := withClusterIP(svc, encode, func(val []byte, ip storage.KV) (err error) {
		rev, cur, err = s.store.UpdateWith(ctx, key, val, modRev, []storage.KV{ip}, gone)
		return err
	})
	return rev, cur, err
}

// withClusterIP runs write with svc's cluster IP set and svc encoded, and
// the IP's key to write beside it: the IP asked for in spec.clusterIP
// (held by another Service: Invalid), or free IPs of 10.96.0.0/16 drawn
// at random until write does not find the one drawn held.
func withClusterIP(svc *corev1.Service, encode func() ([]byte, error), write func(val []byte, ip storage.KV) error) error {
	asked := svc.Spec.ClusterIP != ""
	if asked {
		if _, err := netip.ParseAddr(svc.Spec.ClusterIP); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("spec.clusterIP %q is not an IP address", svc.Spec.ClusterIP))
		}
	}
	holder := []byte(svc.Namespace + "/" + svc.Name)
	for range maxIPDraws {
		if !asked {
			var b [4]byte
			binary.BigEndian.PutUint32(b[:], uint32(serviceCIDRBase|(2+rand.IntN(65532))))
			svc.Spec.ClusterIP = netip.AddrFrom4(b).String()
		}
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
		val, err := encode()
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		err = write(val, storage.KV{Key: ipKey(svc.Spec.ClusterIP), Value: holder})
		switch {
		case !errors.Is(err, storage.ErrSideExists):
			return err
		case asked:
			return newInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "clusterIP"), svc.Spec.ClusterIP, "provided IP is already allocated")})
		}
	}
	return apierrors.NewInternalError(errors.New("no free service cluster IP in 10.96.0.0/16"))
}

// needsClusterIP: a Service of a type that has a cluster IP, not headless.
func needsClusterIP(svc *corev1.Service) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.ClusterIP != corev1.ClusterIPNone
}

// heldIP is the cluster IP whose key a stored Service holds, "" if none.
func heldIP(svc *corev1.Service) string {
	if !needsClusterIP(svc) {
		return ""
	}
	return svc.Spec.ClusterIP
}

// serviceIPKeys are the keys a Service's delete removes with it: its
// cluster IP's, when it holds one.
func serviceIPKeys(obj runtime.Object) []string {
	if svc, ok := obj.(*corev1.Service); ok && heldIP(svc) != "" {
		return []string{ipKey(svc.Spec.ClusterIP)}
	}
	return nil
}
