// Package images builds kstep's own container images and serves them from a
// local registry, so that image pull (step ⑦-a) is real and no image ever
// comes from the internet.
//
// It owns:
//
//   - the images: pause:v1 (bin/kstep-pause, the sandbox image), app:v1 and
//     app:v2 (bin/kstep-app; one program, two versions with distinct
//     digests) and app:v1-pad<N> (app:v1 with an N MiB layer of
//     incompressible bytes, so a pull can be sized). Each is one layer on an
//     empty image, assembled with go-containerregistry's mutate; building is
//     deterministic, so the same binaries always give the same digests.
//   - the Registry: go-containerregistry's in-memory pkg/registry on a
//     listener, plus /healthz, which answers 200 once the images are pushed.
//
// Users name the images registry.kstep.local/<repo>:<tag> (Ref); each node's
// containerd maps that host to the registry's 127.0.0.1 address
// (cluster/node writes the mapping). The registry itself only knows the
// repository paths "pause" and "app".
//
// It must not know about nodes, containerd or the cluster: it serves images
// to whoever asks. It does not compile the programs either; make build puts
// them in bin/.
package images
