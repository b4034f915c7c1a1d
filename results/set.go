package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// SetSchema is the version of set.json.
const SetSchema = "kstep.dev/set/v1"

// SetFile is the name of a set's summary in its directory.
const SetFile = "set.json"

// SetManifest is set.json: the runs of one `kstep bench --repeat N`, each on
// a fresh cluster, each a run directory below the set's (run-01, run-02,
// ...).
type SetManifest struct {
	Schema   string `json:"schema"`
	Profile  string `json:"profile"`
	Provider string `json:"provider"`
	Version  string `json:"version,omitempty"`
	// Binary is the kstep binary the clusters' actors ran when it was
	// not the one that ran the set (kstep bench --ab, --kstep-binary).
	Binary    string `json:"binary,omitempty"`
	StartedAt string `json:"started_at"`
	// Repeat is how many runs were asked for; Runs the directories of the
	// runs that produced a run.json, relative to the set's.
	Repeat int      `json:"repeat"`
	Runs   []string `json:"runs"`
	// Rows are each step across the runs (SetRows): the median, range
	// and run-to-run CV of the runs' p50 and p99. Written with the set's
	// report (WriteSetReport); ReadSet does not need them.
	Rows []SetRow `json:"rows,omitempty"`
}

// Set is runs of one build, profile and provider: a set directory, or a
// single run (a set of one).
type Set struct {
	// Dir is what was read: a set directory, a directory of run
	// directories, or one run directory.
	Dir  string
	Runs []*Run
	// Dirs are the run directories, one per run.
	Dirs []string
}

// RunDirName is the directory of the i-th run (from 1) of a set.
func RunDirName(i int) string { return fmt.Sprintf("run-%02d", i) }

// ReadSet reads path as a set: a run directory or run.json (a set of one),
// a set directory (set.json lists its runs), or any directory whose
// subdirectories hold run.json (e.g. results/runs), in name order.
func ReadSet(path string) (*Set, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("set: %w", err)
	}
	s := &Set{Dir: path}
	if !st.IsDir() || exists(filepath.Join(path, "run.json")) {
		r, err := ReadRun(path)
		if err != nil {
			return nil, err
		}
		s.Runs, s.Dirs = []*Run{r}, []string{path}
		return s, nil
	}
	var dirs []string
	if m, err := ReadSetManifest(path); err == nil {
		for _, d := range m.Runs {
			dirs = append(dirs, filepath.Join(path, d))
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("set: %w", err)
		}
		for _, e := range ents {
			if d := filepath.Join(path, e.Name()); e.IsDir() && exists(filepath.Join(d, "run.json")) {
				dirs = append(dirs, d)
			}
		}
		sort.Strings(dirs)
	} else {
		return nil, fmt.Errorf("set: %w", err)
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("set %s: no run.json in it or in its subdirectories", path)
	}
	for _, d := range dirs {
		r, err := ReadRun(d)
		if err != nil {
			return nil, err
		}
		s.Runs = append(s.Runs, r)
		s.Dirs = append(s.Dirs, d)
	}
	return s, nil
}

// ReadSetManifest reads dir/set.json; an error wrapping fs.ErrNotExist
// when there is none.
func ReadSetManifest(dir string) (*SetManifest, error) {
	return readSchemaFile(filepath.Join(dir, SetFile), "set", dir, SetSchema, func(m *SetManifest) string { return m.Schema })
}

// readSchemaFile reads the JSON file path, whose schema (as schema reads
// it) must be want. Its errors say "what: ..." when the file cannot be
// read, "what name: ..." when it is not such a file.
func readSchemaFile[T any](path, what, name, want string, schema func(*T) string) (*T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, name, err)
	}
	if got := schema(&v); got != want {
		return nil, fmt.Errorf("%s %s: schema %q, this kstep reads %q", what, name, got, want)
	}
	return &v, nil
}

// WriteSetManifest writes dir/set.json.
func WriteSetManifest(dir string, m *SetManifest) error {
	m.Schema = SetSchema
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, SetFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("set.json: %w", err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
