// Package serviceaccount is the ServiceAccount controller: every active
// namespace, existing or new, has a `default` ServiceAccount. It is created
// when a namespace appears, and again whenever it is deleted while its
// namespace is active. A terminating namespace gets none: the namespace
// controller is emptying it, and the apiserver refuses content in it.
//
// It owns the creation of the `default` ServiceAccount and nothing else.
// It must not update or delete ServiceAccounts (tokens, secrets and
// imagePullSecrets on them are their users'), nor touch namespaces.
package serviceaccount
