// Package rootcacertpublisher is the root CA publisher (upstream's
// root-ca-cert-publisher, since 1.20): every active namespace, existing or
// new, has the ConfigMap `kube-root-ca.crt` whose `ca.crt` is the CA that
// signed the apiservers' serving certificates, so that a pod can verify
// kubernetes.default.svc. It is created when a namespace appears, put back
// when it is deleted, and rewritten when its data or description differ
// from what the publisher holds (a CA rotated by restarting the
// controller-manager with a new one is in every namespace at once).
//
// The CA is controller.Context.RootCA: the controller-manager's
// --root-ca-file, or the CA of its own kubeconfig. Without one (a cluster
// served over plain HTTP) the controller publishes nothing and says so.
//
// It owns the `kube-root-ca.crt` ConfigMaps and nothing else. It must not
// touch other ConfigMaps nor namespaces, and writes only through the
// apiserver. A terminating namespace gets none: the namespace controller
// is emptying it.
package rootcacertpublisher
