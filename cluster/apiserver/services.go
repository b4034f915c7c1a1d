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
)

// Service cluster IPs come from 10.96.0.0/16; each allocated IP is a key
// created on absence, so two apiservers never hand out the same one.
const serviceCIDRBase = 10<<24 | 96<<16

func ipKey(ip string) string { return "/registry/serviceips/" + ip }

var servicesGR = corev1.Resource("services")

func (s *Server) allocateClusterIP(ctx context.Context, svc *corev1.Service) error {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return nil
	}
	if svc.Spec.ClusterIP != "" {
		if _, err := netip.ParseAddr(svc.Spec.ClusterIP); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("spec.clusterIP %q is not an IP address", svc.Spec.ClusterIP))
		}
		_, err := s.store.Create(ctx, ipKey(svc.Spec.ClusterIP), []byte(svc.Namespace+"/"+svc.Name))
		if errors.Is(err, storage.ErrExists) {
			return newInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, nil)
		}
		if err == nil {
			svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
		}
		return storageError(sideWrite(err), servicesGR, svc.Name)
	}
	for range 64 {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(serviceCIDRBase|(2+rand.IntN(65532))))
		ip := netip.AddrFrom4(b).String()
		_, err := s.store.Create(ctx, ipKey(ip), []byte(svc.Namespace+"/"+svc.Name))
		if err == nil {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip, []string{ip}
			return nil
		}
		if !errors.Is(err, storage.ErrExists) {
			// An etcd that did not answer is a 504 with a Retry-After
			// (clients retry it), not a 500.
			return storageError(sideWrite(err), servicesGR, svc.Name)
		}
	}
	return apierrors.NewInternalError(errors.New("no free service cluster IP in 10.96.0.0/16"))
}

// sideWrite is the error of a write the request made before its object's:
// whether that one applied or not, the object was not written, so a client
// may send the request again (a leaked IP key is the only cost).
func sideWrite(err error) error {
	if errors.Is(err, storage.ErrOutcomeUnknown) {
		return fmt.Errorf("%v: %w", err, storage.ErrUnavailable)
	}
	return err
}

func (s *Server) releaseClusterIP(ctx context.Context, svc *corev1.Service) {
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return
	}
	_ = s.store.Remove(ctx, ipKey(svc.Spec.ClusterIP))
}
