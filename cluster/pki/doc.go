// Package pki issues the cluster's certificates: self-signed CAs (the
// cluster's, and etcd's own two, as upstream keeps etcd's trust apart), a
// serving certificate for the apiservers, serving-and-dialing certificates
// for etcd members (PeerCert) and a client certificate per
// identity (the subject's CommonName is the user, its Organizations the
// groups, as upstream's x509 authenticator reads them). Keys are ECDSA
// P-256: a cluster's worth is generated in milliseconds.
//
// It owns the key material's shape and the names of kstep's built-in
// identities (Admin, ControllerManager, Scheduler, Node). It does not decide
// what an identity may do (cluster/apiserver's authorizers do) nor where
// files live (the provider decides).
package pki
