// Package config is the scheduler's configuration file: a subset of
// upstream's KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)
// — parallelism, percentageOfNodesToScore, pod backoff, and profiles whose
// plugins are enabled, disabled and weighted per extension point — read
// from YAML, defaulted and validated.
//
// It owns the file format only: which plugins exist and which are on by
// default belong to the plugins package, and building a profile's plugins
// to the framework. It must not touch the apiserver or any actor.
package config
