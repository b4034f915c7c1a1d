package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func main() {
	endpoints := flag.String("endpoints", "http://127.0.0.1:2379", "etcd client URLs, comma-separated")
	n := flag.Int("n", 20000, "creates to send")
	conc := flag.Int("concurrency", 100, "creates in flight at once")
	size := flag.Int("value-bytes", 1800, "bytes per value (a stored pod with its managed fields is about 1.8 KB)")
	prefix := flag.String("prefix", "/etcdfloor/", "key prefix (the keys are left in etcd)")
	// etcdctl's flags and variables: kstep up prints the operator
	// certificate of a secure cluster's etcd as ETCDCTL_CACERT, _CERT, _KEY.
	cacert := flag.String("cacert", os.Getenv("ETCDCTL_CACERT"), "CA of the members' client URLs (https endpoints)")
	cert := flag.String("cert", os.Getenv("ETCDCTL_CERT"), "client certificate (https endpoints)")
	key := flag.String("key", os.Getenv("ETCDCTL_KEY"), "client certificate's key (https endpoints)")
	flag.Parse()
	if *n <= 0 || *conc <= 0 || *size < 0 {
		fmt.Fprintln(os.Stderr, "etcdfloor: -n and -concurrency must be positive, -value-bytes not negative")
		os.Exit(2)
	}
	cfg := clientv3.Config{Endpoints: strings.Split(*endpoints, ","), DialTimeout: 5 * time.Second}
	if strings.HasPrefix(*endpoints, "https://") {
		tc, err := (transport.TLSInfo{TrustedCAFile: *cacert, CertFile: *cert, KeyFile: *key}).ClientConfig()
		if err != nil {
			fmt.Fprintln(os.Stderr, "etcdfloor: TLS:", err)
			os.Exit(2)
		}
		cfg.TLS = tc
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcdfloor:", err)
		os.Exit(1)
	}
	defer cli.Close()
	val := strings.Repeat("x", *size)
	run := time.Now().UnixNano()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range *conc {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(*n) {
					return
				}
				key := fmt.Sprintf("%s%d/%d", *prefix, run, i)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
					Then(clientv3.OpPut(key, val)).Else(clientv3.OpGet(key)).Commit()
				cancel()
				if err != nil {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	fmt.Printf("%d creates of %d bytes, %d in flight, in %.2f s: %.0f creates/s, %d failed\n",
		*n, *size, *conc, d.Seconds(), float64(*n)/d.Seconds(), failed.Load())
	if failed.Load() > 0 {
		os.Exit(1)
	}
}
