package storage

// QueueCap is the capacity of w's queue (0 once it let a drained one go).
func (w *Watcher) QueueCap() int {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	return cap(w.q)
}
