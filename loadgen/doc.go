// Package loadgen is kstep's load generator: a LoadJob (YAML, kind LoadJob)
// says what to create, how fast and in which phases; Run drives it through
// client-go behind a token bucket and records what it did.
//
// It owns three records of a run, all on the host clock the actors share:
//   - the write log: every acknowledged write (kind, namespace, name, UID,
//     resourceVersion, send and ack times);
//   - its own step trace: client.rs.sent and client.rs.acked per ReplicaSet
//     (with the ReplicaSet's UID), and trace.PodReadyObserved the first time
//     its pod watch sees a pod Ready;
//   - the pod → ReplicaSet map (from ownerReferences), which is how the
//     harness joins a pod's steps to its ReplicaSet's.
//
// Creates are by name and idempotent: an object of the job that exists
// already counts as created (a rerun lists them first and creates only the
// missing ones), and an error that is not the apiserver's answer is tried
// again, so a client killed mid-run and run again (kstep load, the chaos
// client row) converges to exactly the job's objects.
//
// A job whose phases delete removes its objects, and waits for their pods
// to go, also after a ready or scale phase that failed (a capacity search's
// step past what the cluster sustains leaves nothing to the next one).
//
// The arrival schedule (Schedule) is a pure core: given qps, burst and an
// injected clock it yields send times. Goroutines live only in Run.
//
// It must not import the actors' packages; its contract with the cluster is
// the Kubernetes API.
package loadgen
