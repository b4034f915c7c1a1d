// Package apiclient is how every client of the apiservers reaches them: the
// kubelets, the hollow nodes, the controller-manager, the scheduler, the
// load generator and the chaos engine. It builds a client-go rest.Config
// from a kubeconfig whose contexts name every apiserver (the current
// context's is the preferred one) and gives it a dialer that fails over
// between them, in the manner of k3s's agent load balancer but inside the
// client, with no extra hop on the request path:
//
//   - A connection goes to the active apiserver; when it cannot be reached
//     the dial moves on to the next one at once, so a request never fails
//     because one apiserver is dead while another is up.
//   - A prober reads every apiserver's /readyz. An active apiserver that
//     stops answering it (hung, partitioned, cut off from etcd) while
//     another is ready is left: its connections are closed, so watches and
//     requests move to a ready one.
//   - When the preferred apiserver is ready again the client returns to it
//     and closes its connections to the others, so the load spreads again
//     the way the plan laid it out (client i prefers apiserver i mod N).
//
// Every apiserver serves one certificate valid for every apiserver's name
// (see cluster/provider/pki.go), so TLS verifies whichever one answers.
//
// It owns only the choice of connection; it must not know what the client
// does with it, nor retry requests (client-go and the actors' level-
// triggered loops do that).
package apiclient
