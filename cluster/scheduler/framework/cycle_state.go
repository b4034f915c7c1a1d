package framework

// StateKey names a plugin's entry in a CycleState.
type StateKey string

// StateData is a plugin's per-cycle data.
type StateData any

// CycleState carries data between the extension points of one scheduling
// cycle of one pod. It is written only by PreFilter, PreScore and Reserve
// (which run on the scheduling goroutine) and read by Filter and Score
// (which run concurrently): no lock is needed under that discipline.
//
// Filter and Score read it once per node per plugin, so it is a short
// slice scanned linearly — keys are constants, compared by pointer first —
// rather than a map.
type CycleState struct {
	data []stateEntry
	// filters and scores are the plugins whose PreFilter/PreScore did not
	// Skip for this pod; set by the framework. Before PreFilter/PreScore
	// ran (set false) every plugin runs.
	filters               []FilterPlugin
	scores                []int
	filtersSet, scoresSet bool
}

type stateEntry struct {
	key  StateKey
	data StateData
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState {
	return &CycleState{data: make([]stateEntry, 0, 8)}
}

// Read returns the data under key, or nil.
func (c *CycleState) Read(key StateKey) StateData {
	for i := range c.data {
		if c.data[i].key == key {
			return c.data[i].data
		}
	}
	return nil
}

// Write stores data under key. Only from PreFilter, PreScore or Reserve.
func (c *CycleState) Write(key StateKey, data StateData) {
	for i := range c.data {
		if c.data[i].key == key {
			c.data[i].data = data
			return
		}
	}
	c.data = append(c.data, stateEntry{key, data})
}
