package loadgen

import (
	"io"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress shows created / bound / running / Ready counters with rates. A nil
// *progress shows nothing.
type progress struct {
	p                              *mpb.Progress
	created, bound, running, ready *mpb.Bar
}

func newProgress(w io.Writer, objects, pods int) *progress {
	p := mpb.New(mpb.WithOutput(w), mpb.WithWidth(40))
	bar := func(name string, total int) *mpb.Bar {
		return p.AddBar(int64(total),
			mpb.PrependDecorators(decor.Name(name, decor.WC{C: decor.DindentRight | decor.DextraSpace}), decor.CountersNoUnit("%d/%d", decor.WCSyncWidth)),
			mpb.AppendDecorators(decor.AverageSpeed(0, "%.1f/s", decor.WCSyncWidth), decor.Elapsed(decor.ET_STYLE_GO, decor.WC{C: decor.DSyncWidth | decor.DextraSpace})),
		)
	}
	return &progress{p: p, created: bar("created", objects), bound: bar("bound", pods), running: bar("running", pods), ready: bar("Ready", pods)}
}

func (p *progress) set(created, bound, running, ready int) {
	if p == nil {
		return
	}
	p.created.SetCurrent(int64(created))
	p.bound.SetCurrent(int64(bound))
	p.running.SetCurrent(int64(running))
	p.ready.SetCurrent(int64(ready))
}

// retarget changes the pod totals (after a scale).
func (p *progress) retarget(pods int) {
	if p == nil {
		return
	}
	for _, b := range []*mpb.Bar{p.bound, p.running, p.ready} {
		b.SetTotal(int64(pods), false)
	}
}

func (p *progress) stop() {
	if p == nil {
		return
	}
	for _, b := range []*mpb.Bar{p.created, p.bound, p.running, p.ready} {
		if !b.Completed() {
			b.Abort(false)
		}
	}
	p.p.Wait()
}
