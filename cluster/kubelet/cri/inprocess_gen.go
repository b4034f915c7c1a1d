// Code generated from k8s.io/cri-api v0.37.2's client interfaces; DO NOT EDIT by hand
// beyond regenerating (see inprocess.go).

package cri

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func (c runtimeClient) Version(ctx context.Context, in *runtimeapi.VersionRequest, _ ...grpc.CallOption) (*runtimeapi.VersionResponse, error) {
	return c.s.Version(ctx, in)
}

func (c runtimeClient) RunPodSandbox(ctx context.Context, in *runtimeapi.RunPodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.RunPodSandboxResponse, error) {
	return c.s.RunPodSandbox(ctx, in)
}

func (c runtimeClient) StopPodSandbox(ctx context.Context, in *runtimeapi.StopPodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.StopPodSandboxResponse, error) {
	return c.s.StopPodSandbox(ctx, in)
}

func (c runtimeClient) RemovePodSandbox(ctx context.Context, in *runtimeapi.RemovePodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.RemovePodSandboxResponse, error) {
	return c.s.RemovePodSandbox(ctx, in)
}

func (c runtimeClient) PodSandboxStatus(ctx context.Context, in *runtimeapi.PodSandboxStatusRequest, _ ...grpc.CallOption) (*runtimeapi.PodSandboxStatusResponse, error) {
	return c.s.PodSandboxStatus(ctx, in)
}

func (c runtimeClient) ListPodSandbox(ctx context.Context, in *runtimeapi.ListPodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error) {
	return c.s.ListPodSandbox(ctx, in)
}

func (c runtimeClient) StreamPodSandboxes(context.Context, *runtimeapi.StreamPodSandboxesRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[runtimeapi.StreamPodSandboxesResponse], error) {
	return nil, status.Error(codes.Unimplemented, "StreamPodSandboxes: streaming is not served in-process")
}

func (c runtimeClient) CreateContainer(ctx context.Context, in *runtimeapi.CreateContainerRequest, _ ...grpc.CallOption) (*runtimeapi.CreateContainerResponse, error) {
	return c.s.CreateContainer(ctx, in)
}

func (c runtimeClient) StartContainer(ctx context.Context, in *runtimeapi.StartContainerRequest, _ ...grpc.CallOption) (*runtimeapi.StartContainerResponse, error) {
	return c.s.StartContainer(ctx, in)
}

func (c runtimeClient) StopContainer(ctx context.Context, in *runtimeapi.StopContainerRequest, _ ...grpc.CallOption) (*runtimeapi.StopContainerResponse, error) {
	return c.s.StopContainer(ctx, in)
}

func (c runtimeClient) RemoveContainer(ctx context.Context, in *runtimeapi.RemoveContainerRequest, _ ...grpc.CallOption) (*runtimeapi.RemoveContainerResponse, error) {
	return c.s.RemoveContainer(ctx, in)
}

func (c runtimeClient) ListContainers(ctx context.Context, in *runtimeapi.ListContainersRequest, _ ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error) {
	return c.s.ListContainers(ctx, in)
}

func (c runtimeClient) StreamContainers(context.Context, *runtimeapi.StreamContainersRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[runtimeapi.StreamContainersResponse], error) {
	return nil, status.Error(codes.Unimplemented, "StreamContainers: streaming is not served in-process")
}

func (c runtimeClient) ContainerStatus(ctx context.Context, in *runtimeapi.ContainerStatusRequest, _ ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error) {
	return c.s.ContainerStatus(ctx, in)
}

func (c runtimeClient) UpdateContainerResources(ctx context.Context, in *runtimeapi.UpdateContainerResourcesRequest, _ ...grpc.CallOption) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	return c.s.UpdateContainerResources(ctx, in)
}

func (c runtimeClient) ReopenContainerLog(ctx context.Context, in *runtimeapi.ReopenContainerLogRequest, _ ...grpc.CallOption) (*runtimeapi.ReopenContainerLogResponse, error) {
	return c.s.ReopenContainerLog(ctx, in)
}

func (c runtimeClient) ExecSync(ctx context.Context, in *runtimeapi.ExecSyncRequest, _ ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error) {
	return c.s.ExecSync(ctx, in)
}

func (c runtimeClient) Exec(ctx context.Context, in *runtimeapi.ExecRequest, _ ...grpc.CallOption) (*runtimeapi.ExecResponse, error) {
	return c.s.Exec(ctx, in)
}

func (c runtimeClient) Attach(ctx context.Context, in *runtimeapi.AttachRequest, _ ...grpc.CallOption) (*runtimeapi.AttachResponse, error) {
	return c.s.Attach(ctx, in)
}

func (c runtimeClient) PortForward(ctx context.Context, in *runtimeapi.PortForwardRequest, _ ...grpc.CallOption) (*runtimeapi.PortForwardResponse, error) {
	return c.s.PortForward(ctx, in)
}

func (c runtimeClient) ContainerStats(ctx context.Context, in *runtimeapi.ContainerStatsRequest, _ ...grpc.CallOption) (*runtimeapi.ContainerStatsResponse, error) {
	return c.s.ContainerStats(ctx, in)
}

func (c runtimeClient) ListContainerStats(ctx context.Context, in *runtimeapi.ListContainerStatsRequest, _ ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error) {
	return c.s.ListContainerStats(ctx, in)
}

func (c runtimeClient) StreamContainerStats(context.Context, *runtimeapi.StreamContainerStatsRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[runtimeapi.StreamContainerStatsResponse], error) {
	return nil, status.Error(codes.Unimplemented, "StreamContainerStats: streaming is not served in-process")
}

func (c runtimeClient) PodSandboxStats(ctx context.Context, in *runtimeapi.PodSandboxStatsRequest, _ ...grpc.CallOption) (*runtimeapi.PodSandboxStatsResponse, error) {
	return c.s.PodSandboxStats(ctx, in)
}

func (c runtimeClient) ListPodSandboxStats(ctx context.Context, in *runtimeapi.ListPodSandboxStatsRequest, _ ...grpc.CallOption) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	return c.s.ListPodSandboxStats(ctx, in)
}

func (c runtimeClient) StreamPodSandboxStats(context.Context, *runtimeapi.StreamPodSandboxStatsRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[runtimeapi.StreamPodSandboxStatsResponse], error) {
	return nil, status.Error(codes.Unimplemented, "StreamPodSandboxStats: streaming is not served in-process")
}

func (c runtimeClient) UpdateRuntimeConfig(ctx context.Context, in *runtimeapi.UpdateRuntimeConfigRequest, _ ...grpc.CallOption) (*runtimeapi.UpdateRuntimeConfigResponse, error) {
	return c.s.UpdateRuntimeConfig(ctx, in)
}

func (c runtimeClient) Status(ctx context.Context, in *runtimeapi.StatusRequest, _ ...grpc.CallOption) (*runtimeapi.StatusResponse, error) {
	return c.s.Status(ctx, in)
}

func (c runtimeClient) CheckpointContainer(ctx context.Context, in *runtimeapi.CheckpointContainerRequest, _ ...grpc.CallOption) (*runtimeapi.CheckpointContainerResponse, error) {
	return c.s.CheckpointContainer(ctx, in)
}

func (c runtimeClient) CheckpointPod(ctx context.Context, in *runtimeapi.CheckpointPodRequest, _ ...grpc.CallOption) (*runtimeapi.CheckpointPodResponse, error) {
	return c.s.CheckpointPod(ctx, in)
}

func (c runtimeClient) RestorePod(ctx context.Context, in *runtimeapi.RestorePodRequest, _ ...grpc.CallOption) (*runtimeapi.RestorePodResponse, error) {
	return c.s.RestorePod(ctx, in)
}

func (c runtimeClient) GetContainerEvents(context.Context, *runtimeapi.GetEventsRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[runtimeapi.ContainerEventResponse], error) {
	return nil, status.Error(codes.Unimplemented, "GetContainerEvents: streaming is not served in-process")
}

func (c runtimeClient) ListMetricDescriptors(ctx context.Context, in *runtimeapi.ListMetricDescriptorsRequest, _ ...grpc.CallOption) (*runtimeapi.ListMetricDescriptorsResponse, error) {
	return c.s.ListMetricDescriptors(ctx, in)
}

func (c runtimeClient) ListPodSandboxMetrics(ctx context.Context, in *runtimeapi.ListPodSandboxMetricsRequest, _ ...grpc.CallOption) (*runtimeapi.ListPodSandboxMetricsResponse, error) {
	return c.s.ListPodSandboxMetrics(ctx, in)
}

func (c runtimeClient) StreamPodSandboxMetrics(context.Context, *runtimeapi.StreamPodSandboxMetricsRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[runtimeapi.StreamPodSandboxMetricsResponse], error) {
	return nil, status.Error(codes.Unimplemented, "StreamPodSandboxMetrics: streaming is not served in-process")
}

func (c runtimeClient) RuntimeConfig(ctx context.Context, in *runtimeapi.RuntimeConfigRequest, _ ...grpc.CallOption) (*runtimeapi.RuntimeConfigResponse, error) {
	return c.s.RuntimeConfig(ctx, in)
}

func (c runtimeClient) UpdatePodSandboxResources(ctx context.Context, in *runtimeapi.UpdatePodSandboxResourcesRequest, _ ...grpc.CallOption) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	return c.s.UpdatePodSandboxResources(ctx, in)
}

func (c imageClient) ListImages(ctx context.Context, in *runtimeapi.ListImagesRequest, _ ...grpc.CallOption) (*runtimeapi.ListImagesResponse, error) {
	return c.s.ListImages(ctx, in)
}

func (c imageClient) StreamImages(context.Context, *runtimeapi.StreamImagesRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[runtimeapi.StreamImagesResponse], error) {
	return nil, status.Error(codes.Unimplemented, "StreamImages: streaming is not served in-process")
}

func (c imageClient) ImageStatus(ctx context.Context, in *runtimeapi.ImageStatusRequest, _ ...grpc.CallOption) (*runtimeapi.ImageStatusResponse, error) {
	return c.s.ImageStatus(ctx, in)
}

func (c imageClient) PullImage(ctx context.Context, in *runtimeapi.PullImageRequest, _ ...grpc.CallOption) (*runtimeapi.PullImageResponse, error) {
	return c.s.PullImage(ctx, in)
}

func (c imageClient) RemoveImage(ctx context.Context, in *runtimeapi.RemoveImageRequest, _ ...grpc.CallOption) (*runtimeapi.RemoveImageResponse, error) {
	return c.s.RemoveImage(ctx, in)
}

func (c imageClient) ImageFsInfo(ctx context.Context, in *runtimeapi.ImageFsInfoRequest, _ ...grpc.CallOption) (*runtimeapi.ImageFsInfoResponse, error) {
	return c.s.ImageFsInfo(ctx, in)
}
