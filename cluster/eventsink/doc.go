// Package eventsink is how every actor writes Kubernetes Events: a client-go
// record.EventBroadcaster (its correlator, aggregation and spam filter, as
// upstream's components have them) recording to Sink, which writes the
// Events off the actor's path and in batches.
//
// An Event describes a step another write performs: "SuccessfulCreate"
// beside the pod's create, "Scheduled" beside the binding, "Started"
// beside the status. Written at once, each lands in the same few
// milliseconds as the write it describes and competes with it for the
// apiserver and for etcd's Raft log, one commit each. Sink hands the
// broadcaster back at once and holds the Event until its actor has been
// quiet for Options.Quiet (or the oldest has waited Options.MaxHold), then
// writes the batch concurrently, so etcd commits them together; an
// aggregation patch of an Event still waiting is folded into it, so an
// Event seen five times in a burst is one create with count 5. The
// broadcaster never blocks on a slow apiserver, so a burst is not dropped
// by its full queue; Sink bounds what waits (Options.MaxPending) and
// counts what it drops (kstep_events_dropped_total).
//
// It owns only the writing of Events. It must not decide which Events an
// actor records (the actors do), nor touch any other resource.
package eventsink
