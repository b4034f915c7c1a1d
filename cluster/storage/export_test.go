package storage

// QueueCap is the capacity of w's queue (0 once it let a drained one go).
func (w *Watcher) QueueCap() int {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	return cap(w.q)
}

// Decoded says whether e holds its decoded object (not compacted).
func (e *Entry) Decoded() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.obj != nil
}
