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

// maxIPDraws bounds the random cluster IPs a Service's create tries.
const maxIPDraws = 64

// createService stores a new Service (encoded by encode, once its cluster
// IP is set) together with its cluster IP's key, in one etcd transaction:
// the IP is held if and only if the Service is stored, so a create that
// fails (quota, etcd, a name taken) never leaks an IP, and a Service costs
// one Raft commit, not two. An IP asked for in spec.clusterIP that another
// Service holds is Invalid; without one, free IPs of 10.96.0.0/16 are
// drawn at random until one is not held.
func (s *Server) createService(ctx context.Context, key string, svc *corev1.Service, encode func() ([]byte, error)) (int64, error) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		val, err := encode()
		if err != nil {
			return 0, apierrors.NewInternalError(err)
		}
		return s.store.Create(ctx, key, val)
	}
	asked := svc.Spec.ClusterIP != ""
	if asked {
		if _, err := netip.ParseAddr(svc.Spec.ClusterIP); err != nil {
			return 0, apierrors.NewBadRequest(fmt.Sprintf("spec.clusterIP %q is not an IP address", svc.Spec.ClusterIP))
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
			return 0, apierrors.NewInternalError(err)
		}
		rev, err := s.store.CreateWith(ctx, key, val, storage.KV{Key: ipKey(svc.Spec.ClusterIP), Value: holder})
		switch {
		case !errors.Is(err, storage.ErrSideExists):
			return rev, err
		case asked:
			return 0, newInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "clusterIP"), svc.Spec.ClusterIP, "provided IP is already allocated")})
		}
	}
	return 0, apierrors.NewInternalError(errors.New("no free service cluster IP in 10.96.0.0/16"))
}

// serviceIPKeys are the keys a Service's delete removes with it: its
// cluster IP's, when it holds one.
func serviceIPKeys(obj runtime.Object) []string {
	svc, ok := obj.(*corev1.Service)
	if !ok || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return nil
	}
	return []string{ipKey(svc.Spec.ClusterIP)}
}
