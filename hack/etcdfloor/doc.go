// Command etcdfloor measures what etcd alone can do on this machine: it
// sends creates (a transaction on the key's absence with a put, the
// apiserver's create) of values the size of a stored pod to the members
// it is given, from many goroutines at once, and prints creates per
// second. hack/etcd-floor.sh runs it against the three etcd members of a
// `kstep up` cluster without apiservers (behind TLS with client
// certificates, as every secure cluster's: it connects with the operator
// certificate kstep up prints, -cacert -cert -key or ETCDCTL_*) and reads
// the members' CPU from /proc: the floor under any kstep (or upstream)
// write path on the same etcd, since the apiserver cannot make etcd's own
// work per write smaller.
//
// It is a developer's measurement, not part of kstep: nothing builds or
// runs it in make or CI. It talks to the endpoints given and nothing else.
package main
