package apiserver

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// events.k8s.io/v1 Events are stored as core/v1 Events, as upstream does, so
// both APIs see one set of events. These are the field mappings of upstream's
// conversion between the two.

func eventToCore(obj runtime.Object) runtime.Object {
	e := obj.(*eventsv1.Event)
	out := &corev1.Event{
		TypeMeta:            corev1TypeMeta("Event"),
		ObjectMeta:          e.ObjectMeta,
		EventTime:           e.EventTime,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
		Action:              e.Action,
		Reason:              e.Reason,
		InvolvedObject:      e.Regarding,
		Related:             e.Related,
		Message:             e.Note,
		Type:                e.Type,
		Source:              e.DeprecatedSource,
		FirstTimestamp:      e.DeprecatedFirstTimestamp,
		LastTimestamp:       e.DeprecatedLastTimestamp,
		Count:               e.DeprecatedCount,
	}
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

func eventFromCore(obj runtime.Object) runtime.Object {
	e := obj.(*corev1.Event)
	out := &eventsv1.Event{
		TypeMeta:                 eventsv1TypeMeta(),
		ObjectMeta:               e.ObjectMeta,
		EventTime:                e.EventTime,
		ReportingController:      e.ReportingController,
		ReportingInstance:        e.ReportingInstance,
		Action:                   e.Action,
		Reason:                   e.Reason,
		Regarding:                e.InvolvedObject,
		Related:                  e.Related,
		Note:                     e.Message,
		Type:                     e.Type,
		DeprecatedSource:         e.Source,
		DeprecatedFirstTimestamp: e.FirstTimestamp,
		DeprecatedLastTimestamp:  e.LastTimestamp,
		DeprecatedCount:          e.Count,
	}
	if e.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}
