package queue

import "container/heap"

// keyedHeap is a heap whose items can be found, updated and removed by
// key.
type keyedHeap struct {
	items []*QueuedPodInfo
	index map[string]int
	less  func(a, b *QueuedPodInfo) bool
}

func newHeap(less func(a, b *QueuedPodInfo) bool) *keyedHeap {
	return &keyedHeap{index: map[string]int{}, less: less}
}

// heap.Interface, on the items.
type heapImpl keyedHeap

func (h *heapImpl) Len() int           { return len(h.items) }
func (h *heapImpl) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *heapImpl) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[h.items[i].key] = i
	h.index[h.items[j].key] = j
}
func (h *heapImpl) Push(x any) {
	p := x.(*QueuedPodInfo)
	h.index[p.key] = len(h.items)
	h.items = append(h.items, p)
}
func (h *heapImpl) Pop() any {
	n := len(h.items) - 1
	p := h.items[n]
	h.items[n] = nil
	h.items = h.items[:n]
	delete(h.index, p.key)
	return p
}

func (h *keyedHeap) Len() int { return len(h.items) }

// AddOrUpdate inserts p, or replaces the item with p's key.
func (h *keyedHeap) AddOrUpdate(p *QueuedPodInfo) {
	if i, ok := h.index[p.key]; ok {
		h.items[i] = p
		heap.Fix((*heapImpl)(h), i)
		return
	}
	heap.Push((*heapImpl)(h), p)
}

func (h *keyedHeap) Get(key string) *QueuedPodInfo {
	if i, ok := h.index[key]; ok {
		return h.items[i]
	}
	return nil
}

func (h *keyedHeap) Delete(key string) *QueuedPodInfo {
	i, ok := h.index[key]
	if !ok {
		return nil
	}
	return heap.Remove((*heapImpl)(h), i).(*QueuedPodInfo)
}

func (h *keyedHeap) Peek() *QueuedPodInfo {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0]
}

func (h *keyedHeap) Pop() *QueuedPodInfo {
	if len(h.items) == 0 {
		return nil
	}
	return heap.Pop((*heapImpl)(h)).(*QueuedPodInfo)
}
