// Package external is the provider of a cluster kstep does not run: any
// kubeconfig (kind in CI, a staging cluster, a cloud cluster, a kstep
// cluster brought up elsewhere). It registers as "external" like process
// and docker, and starts no actor.
//
// It owns:
//   - Up (provider.go): the kubeconfig's chosen context alone, flattened
//     into the state directory (what the harness's clients read, so the
//     other contexts of a user's kubeconfig are never reached), and the
//     check that the cluster answers (discovery's /version).
//   - The actor-level methods (Start, Stop, Pause, Signal, Partition,
//     Logs): provider.ErrUnsupported with the reason. Faults that need a
//     provider are refused; API-level faults go through the API.
//   - Clean (clean.go): deletes what carries provider.RunLabel, for one
//     run (Down, when the spec names a run) or for every run (kstep
//     clean), and nothing that does not carry it.
//
// What the harness records about the cluster (server version, nodes and
// their kinds) and the permission preflight are the harness's (package
// bench): they need the profile, which a provider does not know.
//
// It must not import the harness (bench, chaos, loadgen) or the actors'
// packages: its contract with the cluster is the Kubernetes API.
package external
