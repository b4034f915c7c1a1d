package scheduler

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func prometheusRegistry() *prometheus.Registry { return prometheus.NewRegistry() }

func value(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		panic(err)
	}
	if d.Gauge != nil {
		return d.Gauge.GetValue()
	}
	return d.Counter.GetValue()
}

func gauge(g prometheus.Gauge) float64 { return value(g) }

func bindings(m *Metrics) float64 { return value(m.bindings.WithLabelValues("success")) }
