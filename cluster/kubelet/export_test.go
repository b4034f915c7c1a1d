package kubelet

// PhaseOf exposes the periodic loops' phase to the external tests.
var PhaseOf = phaseOf
