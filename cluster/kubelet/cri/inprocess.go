package cri

import (
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// InProcess adapts CRI servers to the gRPC client interfaces, so a runtime
// implemented in this process (the hollow node's simruntime) is driven
// through exactly the interfaces a real runtime's gRPC connection gives.
//
// It is a direct call, not a loopback gRPC connection: no serialization,
// no connection, no goroutines, which is what lets hundreds of hollow nodes
// share one process (BenchmarkHollowNodeHeap measures it beside bufconn).
// The servers must therefore not keep the request messages they are handed
// nor hand out messages they keep: simruntime builds every response afresh
// and copies what it stores. Streaming methods answer Unimplemented.
func InProcess(rs runtimeapi.RuntimeServiceServer, is runtimeapi.ImageServiceServer) (runtimeapi.RuntimeServiceClient, runtimeapi.ImageServiceClient) {
	return runtimeClient{rs}, imageClient{is}
}

type runtimeClient struct {
	s runtimeapi.RuntimeServiceServer
}

type imageClient struct{ s runtimeapi.ImageServiceServer }

var (
	_ runtimeapi.RuntimeServiceClient = runtimeClient{}
	_ runtimeapi.ImageServiceClient   = imageClient{}
)
