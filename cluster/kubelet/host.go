package kubelet

import (
	"bufio"
	"net"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// HostCapacity is this machine's cpu and memory, a real node's default
// capacity.
func HostCapacity() corev1.ResourceList {
	rl := corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(int64(goruntime.NumCPU()), resource.DecimalSI)}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			fs := strings.Fields(s.Text())
			if len(fs) >= 2 && fs[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(fs[1], 10, 64); err == nil {
					rl[corev1.ResourceMemory] = *resource.NewQuantity(kb*1024, resource.BinarySI)
				}
			}
		}
	}
	return rl
}

// HostIP is the first non-loopback IPv4 address of this machine, or
// 127.0.0.1.
func HostIP() string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				return n.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

// ParseTaints reads --register-with-taints: "key=value:Effect" or
// "key:Effect", comma separated.
func ParseTaints(specs []string) ([]corev1.Taint, error) {
	var out []corev1.Taint
	for _, s := range specs {
		kv, effect, ok := strings.Cut(s, ":")
		if !ok {
			return nil, &taintError{s}
		}
		key, value, _ := strings.Cut(kv, "=")
		e := corev1.TaintEffect(effect)
		switch e {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return nil, &taintError{s}
		}
		if key == "" {
			return nil, &taintError{s}
		}
		out = append(out, corev1.Taint{Key: key, Value: value, Effect: e})
	}
	return out, nil
}

type taintError struct{ spec string }

func (e *taintError) Error() string {
	return "taint " + strconv.Quote(e.spec) + ": want key[=value]:NoSchedule|PreferNoSchedule|NoExecute"
}
