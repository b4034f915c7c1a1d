package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver/admission"
	"github.com/kstep-dev/kstep/cluster/apiserver/defaults"
	"github.com/kstep-dev/kstep/cluster/apiserver/validation"
	"github.com/kstep-dev/kstep/cluster/storage"
	jsonpatchv4 "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Fuzz targets for the apiserver's decode path: what a hostile client
// controls (bodies in JSON, YAML and protobuf, patches of the three kinds,
// label and field selectors) goes through the same functions the handlers
// use, then through defaulting, validation, admission and the storage
// encoding. Any panic is a bug. `make fuzz` runs each for FUZZTIME;
// .ci/fuzz runs each for 60 s in `make test`.

const seedPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","labels":{"app":"web"},"annotations":{"a":"b"}},
"spec":{"initContainers":[{"name":"init","image":"i","resources":{"requests":{"cpu":"2"}}}],
"containers":[{"name":"app","image":"registry.kstep.local/app:v1","ports":[{"containerPort":8080}],
"resources":{"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"cpu":"1"}},"env":[{"name":"A","value":"1"}]}],
"tolerations":[{"key":"k","operator":"Exists"}],"nodeSelector":{"zone":"a"}}}`

var fuzzResources = func() []*resource {
	return resources()
}()

func fuzzRequest(query string, res *resource) *request {
	return &request{s: &Server{opts: DefaultOptions()}, w: httptest.NewRecorder(), r: httptest.NewRequest("POST", "/?"+query, nil), res: res}
}

var fuzzLimitRange = &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
	{Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("2")},
		Min:                  corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("10m")},
		Default:              corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("1"), corev1.ResourceMemory: apiresource.MustParse("1Gi")},
		DefaultRequest:       corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("100m")},
		MaxLimitRequestRatio: corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("4")}},
	{Type: corev1.LimitTypePod, Max: corev1.ResourceList{corev1.ResourceMemory: apiresource.MustParse("4Gi")}},
}}}

var fuzzQuota = corev1.ResourceList{corev1.ResourcePods: apiresource.MustParse("10"), corev1.ResourceRequestsCPU: apiresource.MustParse("4"),
	corev1.ResourceLimitsMemory: apiresource.MustParse("8Gi"), "count/pods": apiresource.MustParse("10"),
	corev1.ResourceServicesNodePorts: apiresource.MustParse("2"), corev1.ResourceConfigMaps: apiresource.MustParse("1"),
	"count/replicasets.apps": apiresource.MustParse("1")}

// slowInput crashes the fuzz worker when one input takes over 10 s, so the
// engine saves it: go test -fuzz has no per-input timeout, and an input
// that hangs a decoder is a denial of service.
func slowInput(data any) func() {
	timer := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("one input took over 10s: %q", data)) })
	return func() { timer.Stop() }
}

// exercise runs a decoded object through the rest of the write chain that
// does not need etcd: defaulting, admission, validation, storage encoding.
func exercise(t *testing.T, res *resource, obj runtime.Object) {
	defaults.Apply(obj)
	if pod, ok := obj.(*corev1.Pod); ok {
		admission.DefaultTolerations(pod, 10, 300)
		admission.ApplyLimitRangeDefaults(pod, []*corev1.LimitRange{fuzzLimitRange})
		_ = admission.ValidateLimitRanges(pod, []*corev1.LimitRange{fuzzLimitRange})
	}
	gr := res.gvr.GroupResource()
	used := admission.Usage(gr, []runtime.Object{obj, obj}, fuzzQuota)
	_ = admission.Constraints("q", fuzzQuota, obj)
	_, _ = admission.Charge("q", fuzzQuota, used, admission.Requested(gr, obj, fuzzQuota))
	_ = validation.ValidateCreate(obj)
	_ = validation.ValidateUpdate(obj, obj.DeepCopyObject())
	if objectMeta(obj).Name == "" {
		objectMeta(obj).Name = "x"
	}
	for _, proto := range []bool{false, true} { // both storage media types
		r := *res
		r.storeProtobuf = proto && storesProtobuf(res)
		val, err := encodeStored(&r, obj)
		if err != nil {
			t.Fatalf("encode %s (protobuf %v): %v", res.kind, r.storeProtobuf, err)
		}
		back, err := decodeStored(&r, val, 7)
		if err != nil {
			t.Fatalf("a stored %s (protobuf %v) does not decode: %v\n%q", res.kind, r.storeProtobuf, err, val)
		}
		_ = attrsOf(&r, back)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	f.Add(uint8(1), []byte(seedPod))
	f.Add(uint8(0), []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","labels":{"a":"b"}}}`))
	f.Add(uint8(10), []byte(`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"r"},"spec":{"replicas":3,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`))
	f.Add(uint8(3), []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80,"targetPort":"http"}],"type":"NodePort"}}`))
	f.Add(uint8(6), []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"},"binaryData":{"b":"AAE="}}`))
	f.Add(uint8(1), []byte(`{"metadata":{"name":"p","bogus":1},"metadata":{"name":"q"}}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		defer slowInput(data)()
		res := fuzzResources[int(which)%len(fuzzResources)]
		for _, mode := range []string{"fieldValidation=Strict", ""} {
			obj := res.newObj()
			if err := fuzzRequest(mode, res).decodeInto(data, obj, res.gvk()); err != nil {
				if statusOf(err).Code != 400 {
					t.Fatalf("decode error is not a 400: %v", err)
				}
				continue
			}
			exercise(t, res, obj)
		}
	})
}

func FuzzDecodeYAML(f *testing.F) {
	y, _ := yaml.JSONToYAML([]byte(seedPod))
	f.Add(y)
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: &n p\n  labels: {a: *n}\nspec:\n  containers: [{name: c, image: i}]\n"))
	f.Add([]byte("a: &a [1,2]\nb: [*a,*a]\n"))
	f.Add([]byte("metadata: {name: x}\n---\nkind: Pod\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer slowInput(data)()
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return
		}
		res := fuzzResources[1] // pods
		obj := res.newObj()
		if err := fuzzRequest("", res).decodeInto(j, obj, res.gvk()); err != nil {
			return
		}
		exercise(t, res, obj)
	})
}

func FuzzDecodeProtobuf(f *testing.F) {
	f.Add([]byte("k8s\x00\x0a\x09\x0a\x02v1\x12\x03Pod\x12\x00"))
	f.Add([]byte("k8s\x00\x0a\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer slowInput(data)()
		res := fuzzResources[1]
		obj := res.newObj()
		if _, _, err := protobufCodec.Decode(data, nil, obj); err != nil {
			return
		}
		if checkKind(obj, res.gvk()) != nil {
			return
		}
		exercise(t, res, obj)
	})
}

// fuzzPatchLimit is the request size limit FuzzApplyPatch patches under:
// small, so that the budget of an input is tight and an input that spends
// its whole allowance is quick.
const fuzzPatchLimit = 16 << 10

// patchAllocBudget is what applying one patch may allocate: a constant
// factor of what the client controls (the patch), what it patches (the
// object) and what it may grow the object to (the limit, once as the
// document and once as copies), plus a fixed slack. Decoding JSON into Go
// maps and interfaces costs up to ~40 bytes per byte (measured on the
// corpus); 64 leaves room without hiding an amplification, which is a
// multiple of the input (the evanphx merge patch nested 9,990 deep
// allocated 40,000 times its 60 KB; 30 copies, 2^30 times).
func patchAllocBudget(patch, object []byte, limit int64) uint64 {
	return 64*(uint64(len(patch))+uint64(len(object))+2*uint64(limit)) + 256<<10
}

// heapAllocs is the bytes this process has allocated so far.
// ReadMemStats flushes the per-P caches (runtime/metrics lags by them).
func heapAllocs() uint64 {
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.TotalAlloc
}

// FuzzApplyPatch's oracle is work as well as panics: applying a patch must
// allocate within patchAllocBudget of its input (a patch that makes the
// server copy, re-parse or reallocate more than its input fails), finish
// within slowInput's 10 s, and refuse with 400, 413 or 422 only.
func FuzzApplyPatch(f *testing.F) {
	f.Add(uint8(0), []byte(`[{"op":"add","path":"/metadata/labels/j","value":"1"},{"op":"remove","path":"/spec/tolerations/0"}]`))
	f.Add(uint8(0), []byte(`[{"op":"move","from":"/spec/containers/0","path":"/spec/containers/-"},{"op":"copy","from":"/metadata","path":"/metadata/labels/x"},{"op":"test","path":"/a","value":1}]`))
	f.Add(uint8(0), []byte(copyBomb(30)))
	f.Add(uint8(0), []byte(`[{"op":"add","path":"/spec/a","value":[]},`+strings.Repeat(`{"op":"add","path":"/spec/a/0","value":1},`, 200)+`{"op":"test","path":"/spec/a/-1","value":1}]`))
	f.Add(uint8(1), []byte(`{"metadata":{"labels":{"app":null,"m":"1"}},"spec":{"containers":null}}`))
	f.Add(uint8(1), []byte(strings.Repeat(`{"a":`, 30)+"1"+strings.Repeat("}", 30)))
	f.Add(uint8(2), []byte(`{"spec":{"containers":[{"name":"app","image":"x"},{"$patch":"delete","name":"gone"}],"$setElementOrder/containers":[{"name":"app"}]}}`))
	f.Add(uint8(2), []byte(`{"metadata":{"$patch":"replace"},"$retainKeys":["spec"],"spec":{"$deleteFromPrimitiveList/finalizers":["a"]}}`))
	types := []string{jsonPatchType, mergePatchType, strategicPatchType}
	f.Fuzz(func(t *testing.T, kind uint8, patch []byte) {
		defer slowInput(patch)()
		res := fuzzResources[1]
		pt := types[int(kind)%len(types)]
		before := heapAllocs()
		patched, err := applyPatch(context.Background(), pt, []byte(seedPod), patch, res.newObj(), fuzzPatchLimit)
		if used, budget := heapAllocs()-before, patchAllocBudget(patch, []byte(seedPod), fuzzPatchLimit); used > budget {
			t.Fatalf("a %d-byte %s allocated %d bytes, over its budget of %d", len(patch), pt, used, budget)
		}
		if err != nil {
			if c := statusOf(err).Code; c != 400 && c != 413 && c != 422 {
				t.Fatalf("patch error is a %d: %v", c, err)
			}
			return
		}
		if len(patched) > fuzzPatchLimit {
			t.Fatalf("a %s produced %d bytes, over the %d-byte limit", pt, len(patched), fuzzPatchLimit)
		}
		obj := res.newObj()
		if err := fuzzRequest("", res).decodeInto(patched, obj, res.gvk()); err != nil {
			return
		}
		exercise(t, res, obj)
	})
}

// The budget is an oracle that fails: upstream's merge patch library, which
// re-parses every level, spends it on a patch 1,000 deep, and this
// apiserver's own does not (that patch is under the nesting limit's 422;
// 30 levels, the most it applies, are checked instead).
func TestPatchAllocBudgetCatchesAmplification(t *testing.T) {
	deep := func(n int) []byte { return []byte(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)) }
	p := deep(1000)
	before := heapAllocs()
	if _, err := jsonpatchv4.MergePatch([]byte(seedPod), p); err != nil {
		t.Fatal(err)
	}
	if used, budget := heapAllocs()-before, patchAllocBudget(p, []byte(seedPod), fuzzPatchLimit); used <= budget {
		t.Fatalf("upstream's merge patch 1,000 deep allocated %d bytes, within the budget of %d: the oracle cannot see a quadratic patch", used, budget)
	}
	p = deep(30)
	before = heapAllocs()
	if _, err := applyPatch(context.Background(), mergePatchType, []byte(seedPod), p, fuzzResources[1].newObj(), fuzzPatchLimit); err != nil {
		t.Fatal(err)
	}
	if used, budget := heapAllocs()-before, patchAllocBudget(p, []byte(seedPod), fuzzPatchLimit); used > budget {
		t.Fatalf("a merge patch 30 deep allocated %d bytes, over its budget of %d", used, budget)
	}
}

// copyBomb is a JSON patch of n operations each copying the whole spec
// into itself: the document doubles with each.
func copyBomb(n int) string {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = fmt.Sprintf(`{"op":"copy","from":"/spec","path":"/spec/c%d"}`, i)
	}
	return "[" + strings.Join(ops, ",") + "]"
}

func FuzzSelectors(f *testing.F) {
	f.Add("app=web,tier!=db,env in (a,b),!gone,x notin (y)", "spec.nodeName=n1,status.phase!=Running")
	f.Add("a==b", "metadata.name=x")
	f.Add("k in (", "spec.nodeName==")
	f.Add("a.b/c-d=e_f.g", `metadata.namespace=a\,b`)
	attrs := storage.Attrs{Namespace: "default", Labels: storage.PairsOf(map[string]string{"app": "web", "tier": "fe"}),
		Fields: storage.PairsOf(map[string]string{"metadata.name": "p", "spec.nodeName": "n1", "status.phase": "Running"})}
	f.Fuzz(func(t *testing.T, label, field string) {
		defer slowInput(label + " | " + field)()
		q := url.Values{"labelSelector": {label}, "fieldSelector": {field}, "resourceVersion": {label}, "limit": {field}}
		res := fuzzResources[1]
		p, err := parseListParams(q, res, "default")
		if err != nil {
			if statusOf(err).Code != 400 {
				t.Fatalf("selector error is not a 400: %v", err)
			}
			return
		}
		_ = p.filter.Matches(attrs)
		if p.filter.Label != nil {
			// What a selector prints parses back to the same selector.
			again, err := labels.Parse(p.filter.Label.String())
			if err != nil {
				t.Fatalf("label selector %q prints as %q, which does not parse: %v", label, p.filter.Label.String(), err)
			}
			_ = again.Matches(attrs.Labels)
		}
		if p.filter.Field != nil {
			if _, err := fields.ParseSelector(p.filter.Field.String()); err != nil {
				t.Fatalf("field selector %q prints as %q, which does not parse: %v", field, p.filter.Field.String(), err)
			}
		}
		_, _ = json.Marshal(p.filter.Namespace)
	})
}
