// Package st builds pods and nodes for the scheduler's tests, the way
// upstream's scheduler testing wrappers do: MakePod().Name("p").Req("cpu",
// "1").Obj().
//
// It is test support only; it must not be imported by non-test code.
package st
