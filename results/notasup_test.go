package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The report's header lists every setting in which the cluster is not as
// kstep up starts it, says when none is, and says nothing for a run that
// did not record them; run.json keeps an empty list apart from none.
func TestNotAsUpHeader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		list   []string
		want   []string
		absent bool
	}{
		{"not recorded", nil, nil, true},
		{"as kstep up", []string{}, []string{"cluster settings: as kstep up starts it (no setting differs from its defaults)"}, false},
		{"two settings", []string{"leaseTiming: upstream (kstep up: kstep)", "supervise: false, an actor that dies stays dead"},
			[]string{"cluster settings not as kstep up starts it: leaseTiming: upstream (kstep up: kstep); supervise: false, an actor that dies stays dead"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := goldenRun()
			r.Cluster.NotAsUp = tc.list
			md, html := Markdown(r), HTML(r)
			for _, w := range tc.want {
				if !strings.Contains(md, w) || !strings.Contains(html, w) {
					t.Errorf("header lacks %q:\n%s", w, md)
				}
			}
			if tc.absent && (strings.Contains(md, "cluster settings") || strings.Contains(html, "cluster settings")) {
				t.Errorf("a run without the record has a cluster settings line:\n%s", md)
			}
			dir := t.TempDir()
			if err := WriteRun(dir, r); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "run.json"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), `"not_as_up"`) == tc.absent {
				t.Errorf("run.json has not_as_up: %v, want %v", !tc.absent, !tc.absent)
			}
			back, err := ReadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			if (back.Cluster.NotAsUp == nil) != tc.absent || len(back.Cluster.NotAsUp) != len(tc.list) {
				t.Errorf("read back as %#v, want %#v", back.Cluster.NotAsUp, tc.list)
			}
		})
	}
}
