package clidocs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Prefix starts the name of every page Write renders: kstep.md for the
// root, kstep_up.md for `kstep up`, kstep_a_b.md for `kstep a b`.
const Prefix = "kstep"

// Options shape a rendering.
type Options struct {
	// Default rewrites a flag's default as the page shows it; nil leaves it.
	// Defaults that come from the machine (the home directory, the host
	// name, the binary's directory) must be made the same everywhere, or
	// the pages would differ between machines.
	Default func(string) string
	// Regenerate is the command that rewrites the pages, named in each
	// page's header.
	Regenerate string
}

// Render returns the pages of root's tree, file name → content: one per
// available command (hidden ones, cobra's help and completion left out).
func Render(root *cobra.Command, o Options) map[string][]byte {
	pages := map[string][]byte{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		pages[FileName(c)] = page(c, o)
		for _, sub := range available(c) {
			walk(sub)
		}
	}
	walk(root)
	return pages
}

// FileName is the page of c: its command path joined by underscores.
func FileName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

// available is c's subcommands a user can run, in cobra's (sorted) order.
func available(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() && sub.Name() != "completion" {
			out = append(out, sub)
		}
	}
	return out
}

func page(c *cobra.Command, o Options) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!-- Generated from `%s --help`; do not edit: change the command, then run\n     %s -->\n", c.CommandPath(), o.Regenerate)
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", c.CommandPath(), strings.TrimSpace(c.Short))
	block(&b, "", c.UseLine())
	if long := strings.TrimSpace(c.Long); long != "" && long != strings.TrimSpace(c.Short) {
		block(&b, "", long)
	}
	if ex := strings.TrimSpace(c.Example); ex != "" {
		block(&b, "Examples", c.Example)
	}
	if subs := available(c); len(subs) > 0 {
		b.WriteString("## Commands\n\n| command | what it does |\n|---|---|\n")
		for _, sub := range subs {
			fmt.Fprintf(&b, "| [%s](%s) | %s |\n", sub.CommandPath(), FileName(sub), strings.ReplaceAll(sub.Short, "|", `\|`))
		}
		b.WriteString("\n")
	}
	block(&b, "Flags", usages(c.NonInheritedFlags(), o))
	block(&b, "Global flags", usages(c.InheritedFlags(), o))
	b.WriteString("See also: ")
	if p := c.Parent(); p != nil {
		fmt.Fprintf(&b, "[%s](%s), ", p.CommandPath(), FileName(p))
	}
	b.WriteString("[exit codes of every command](exit-codes.md).\n")
	return b.Bytes()
}

// usages is what --help prints for fs, with o's defaults. The flags are
// copied so the tree is left as it was.
func usages(fs *pflag.FlagSet, o Options) string {
	out := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.VisitAll(func(f *pflag.Flag) {
		cp := *f
		if o.Default != nil {
			cp.DefValue = o.Default(cp.DefValue)
		}
		out.AddFlag(&cp)
	})
	return out.FlagUsagesWrapped(0)
}

// block writes text as a fenced text block under an optional heading.
func block(b *bytes.Buffer, heading, text string) {
	text = strings.TrimRight(text, "\n")
	if strings.TrimSpace(text) == "" {
		return
	}
	if heading != "" {
		fmt.Fprintf(b, "## %s\n\n", heading)
	}
	fmt.Fprintf(b, "```text\n%s\n```\n\n", text)
}

// Write replaces the rendered pages in dir: every page of pages is
// written, and every other file named Prefix*.md is removed.
func Write(dir string, pages map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := existing(dir)
	if err != nil {
		return err
	}
	for name := range old {
		if _, ok := pages[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	for name, content := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Diff names the pages in which dir differs from want: missing, extra
// (a Prefix*.md file want has not) or with other content. Empty: the same.
func Diff(want, dir string) ([]string, error) {
	w, err := existing(want)
	if err != nil {
		return nil, err
	}
	got, err := existing(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for name, content := range w {
		g, ok := got[name]
		switch {
		case !ok:
			out = append(out, name+" (missing)")
		case !bytes.Equal(g, content):
			out = append(out, name+" (differs)")
		}
	}
	for name := range got {
		if _, ok := w[name]; !ok {
			out = append(out, name+" (no such command)")
		}
	}
	slices.Sort(out)
	return out, nil
}

// existing reads dir's Prefix*.md files; a missing dir has none.
func existing(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return files, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, Prefix) || !strings.HasSuffix(name, ".md") {
			continue
		}
		content, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		files[name] = content
	}
	return files, nil
}
