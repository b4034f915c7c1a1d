package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Manual is the tag of an example no tier runs; its reason is required.
const Manual = "manual"

// Block is one fenced sh block of a Markdown file.
type Block struct {
	File string // relative to the repository's root
	Line int    // of the opening fence
	Tier string // "" when untagged
	// Why is a manual block's reason.
	Why string
	// Exit is the status the block ends with when it works (0 unless the
	// tag says otherwise).
	Exit int
	Text string
}

func (b Block) String() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// Link is one Markdown link of a file, outside code.
type Link struct {
	File   string
	Line   int
	Target string
}

// Doc is one Markdown file.
type Doc struct {
	Path     string // relative to the repository's root
	Blocks   []Block
	Links    []Link
	Anchors  map[string]bool
	TagFault []string // tags that parse wrong or stand before no sh block
}

var (
	tagRE    = regexp.MustCompile(`^<!--\s*tier:\s*(.*?)\s*-->$`)
	exitRE   = regexp.MustCompile(`^exit\s+(\d+)$`)
	manualRE = regexp.MustCompile(`^manual\s+\((.+)\)$`)
	linkRE   = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	codeRE   = regexp.MustCompile("`[^`]*`")
)

// Files lists README.md and every Markdown file under docs/, relative to root.
func Files(root string) ([]string, error) {
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(files[1:])
	return files, err
}

// Parse reads one Markdown file: its sh blocks with their tags, its links
// and its headings' anchors.
func Parse(path, text string) Doc {
	d := Doc{Path: path, Anchors: map[string]bool{}}
	lines := strings.Split(text, "\n")
	fence, lastTag, tagLine := "", "", 0
	var cur *Block
	var body []string
	for i, line := range lines {
		n := i + 1
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`~") == "" {
				if cur != nil {
					cur.Text = strings.Join(body, "\n") + "\n"
					d.Blocks = append(d.Blocks, *cur)
					cur, body = nil, nil
				}
				fence = ""
			} else if cur != nil {
				body = append(body, line)
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			if strings.TrimSpace(trimmed[3:]) == "sh" {
				b := Block{File: path, Line: n}
				if lastTag != "" {
					b.Tier, b.Why, b.Exit = parseTag(lastTag, &d, path, tagLine)
				}
				cur = &b
			} else if lastTag != "" {
				d.TagFault = append(d.TagFault, fmt.Sprintf("%s:%d: a tier tag before a %q block, not an sh one", path, tagLine, trimmed))
			}
			lastTag = ""
			continue
		}
		if m := tagRE.FindStringSubmatch(trimmed); m != nil {
			if lastTag != "" {
				d.TagFault = append(d.TagFault, fmt.Sprintf("%s:%d: a tier tag before no sh block", path, tagLine))
			}
			lastTag, tagLine = m[1], n
			continue
		}
		if trimmed != "" && lastTag != "" {
			d.TagFault = append(d.TagFault, fmt.Sprintf("%s:%d: a tier tag before no sh block", path, tagLine))
			lastTag = ""
		}
		if strings.HasPrefix(trimmed, "#") {
			addAnchor(d.Anchors, strings.TrimSpace(strings.TrimLeft(trimmed, "#")))
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeRE.ReplaceAllString(line, ""), -1) {
			d.Links = append(d.Links, Link{File: path, Line: n, Target: m[1]})
		}
	}
	return d
}

// parseTag reads "TIER", "TIER, exit N" or "manual (why)".
func parseTag(tag string, d *Doc, path string, line int) (tier, why string, exit int) {
	if m := manualRE.FindStringSubmatch(tag); m != nil {
		return Manual, m[1], 0
	}
	parts := strings.Split(tag, ",")
	tier = strings.TrimSpace(parts[0])
	for _, p := range parts[1:] {
		m := exitRE.FindStringSubmatch(strings.TrimSpace(p))
		if m == nil {
			d.TagFault = append(d.TagFault, fmt.Sprintf("%s:%d: %q is not `exit N`", path, line, strings.TrimSpace(p)))
			continue
		}
		exit, _ = strconv.Atoi(m[1])
	}
	return tier, "", exit
}

// addAnchor adds heading's anchor as GitHub makes it: lower case, spaces
// as hyphens, punctuation dropped, a repeat numbered -1, -2, ...
func addAnchor(anchors map[string]bool, heading string) {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	a := b.String()
	for i, try := 1, a; ; i++ {
		if !anchors[try] {
			anchors[try] = true
			return
		}
		try = a + "-" + strconv.Itoa(i)
	}
}

// Commands is a block's commands: its lines without comments and blank
// lines, continuation lines joined.
func (b Block) Commands() []string {
	var out []string
	cont := false
	for _, line := range strings.Split(b.Text, "\n") {
		s := strings.TrimSpace(line)
		if i := strings.Index(s, " #"); i >= 0 {
			s = strings.TrimSpace(s[:i])
		}
		if strings.HasPrefix(s, "#") || s == "" {
			cont = false
			continue
		}
		next := strings.HasSuffix(s, `\`)
		s = strings.TrimSpace(strings.TrimSuffix(s, `\`))
		if cont {
			out[len(out)-1] += " " + s
		} else {
			out = append(out, s)
		}
		cont = next
	}
	return out
}

// TierCommand is the command a tier is: make test, make nightly, ...
func TierCommand(tier string) string { return "make " + tier }

// IsTier reports whether the block is its tier's own command, which that
// tier runs by being it.
func (b Block) IsTier() bool {
	cmds := b.Commands()
	return len(cmds) > 0 && !slices.ContainsFunc(cmds, func(c string) bool {
		return !strings.HasSuffix(c, TierCommand(b.Tier)) || strings.Contains(strings.TrimSuffix(c, TierCommand(b.Tier)), ";")
	})
}

// Resolve checks one link: nothing outside the repository, and a relative
// link's file (and heading, after #) must exist. docs maps each parsed
// file's path to it; root is the repository's root.
func Resolve(l Link, root string, docs map[string]Doc) error {
	t := l.Target
	if strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") || strings.HasPrefix(t, "//") {
		return fmt.Errorf("%s:%d: %s links outside the repository", l.File, l.Line, t)
	}
	file, anchor, _ := strings.Cut(t, "#")
	target := l.File
	if file != "" {
		if strings.HasPrefix(file, "/") {
			return fmt.Errorf("%s:%d: %s is absolute; links are relative to their file", l.File, l.Line, t)
		}
		target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(l.File), file)))
		if strings.HasPrefix(target, "../") {
			return fmt.Errorf("%s:%d: %s leaves the repository", l.File, l.Line, t)
		}
		if _, err := os.Stat(filepath.Join(root, target)); err != nil {
			return fmt.Errorf("%s:%d: %s: no such file %s", l.File, l.Line, t, target)
		}
	}
	if anchor == "" {
		return nil
	}
	d, ok := docs[target]
	if !ok {
		return fmt.Errorf("%s:%d: %s: an anchor into %s, which is not a Markdown file of README.md or docs/", l.File, l.Line, t, target)
	}
	if !d.Anchors[anchor] {
		return fmt.Errorf("%s:%d: %s: %s has no heading #%s", l.File, l.Line, t, target, anchor)
	}
	return nil
}
