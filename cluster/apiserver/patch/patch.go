package patch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxJSONPatchOps is upstream's limit on the operations of one JSON patch.
const MaxJSONPatchOps = 10000

// MaxDepth bounds how deeply a patch document nests objects and arrays.
// The deepest object kstep serves, a Deployment or ReplicaSet, nests 14
// levels (spec.template.spec.affinity.podAffinity....matchExpressions[].values[]),
// and a patch that also carries managedFields nests about 20: 32 leaves room
// for every patch of a served kind (TestPatchDepthCoversServedKinds checks
// it against the Go types) while a hostile document is refused before any
// parsing. The limit applies to merge and strategic merge patches and to the
// values inside a JSON patch (whose array and operation objects take two
// of the levels).
const MaxDepth = 32

// patchDepth returns how deeply data nests objects and arrays, scanning it
// once without decoding; it stops as soon as the depth passes max.
func patchDepth(data []byte, max int) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > max {
					return deepest
				}
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// CheckDepth refuses a patch nested deeper than MaxDepth.
func CheckDepth(patch []byte) error {
	if d := patchDepth(patch, MaxDepth); d > MaxDepth {
		return Invalid(fmt.Sprintf("the patch nests objects and arrays more than %d levels deep", MaxDepth))
	}
	return nil
}

// Invalid is the 422 of a patch that cannot be applied. (apierrors'
// generic constructor would replace the message of a 422 with a stock one.)
func Invalid(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity,
		Reason: metav1.StatusReasonInvalid, Message: "the patch cannot be applied: " + msg}}
}

func badRequest(format string, a ...any) error {
	return apierrors.NewBadRequest(fmt.Sprintf(format, a...))
}

// decodeDoc decodes a JSON document into nil, bool, json.Number, string,
// []any and map[string]any.
func decodeDoc(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("unexpected data after the document")
	}
	return v, nil
}

// encodeDoc encodes a decoded document as compact JSON, without the HTML
// escaping that would grow '<' six times (the object's decoder accepts
// either).
func encodeDoc(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// encodedSize is the length encodeDoc gives v, or more: strings count their
// escapes at the widest (a control character as \u00XX).
func encodedSize(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 4
	case bool:
		if x {
			return 4
		}
		return 5
	case json.Number:
		return int64(len(x))
	case string:
		return quotedSize(x)
	case []any:
		n := int64(2)
		for i, e := range x {
			if i > 0 {
				n++
			}
			n += encodedSize(e)
		}
		return n
	case map[string]any:
		n := int64(2)
		first := true
		for k, e := range x {
			if !first {
				n++
			}
			first = false
			n += quotedSize(k) + 1 + encodedSize(e)
		}
		return n
	}
	return 0
}

// quotedSize bounds the length of s as a JSON string.
func quotedSize(s string) int64 {
	n := int64(2)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 || r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += int64(w)
		}
		i += w
	}
	return n
}

// deepCopyDoc copies a decoded document.
func deepCopyDoc(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyDoc(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopyDoc(e)
		}
		return out
	}
	return v // scalars are immutable
}

// equalDoc is JSON equality of two decoded documents; numbers compare as
// written. Its cost is bounded by the smaller side.
func equalDoc(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalDoc(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, ye := range y {
			xe, ok := x[k]
			if !ok || !equalDoc(xe, ye) {
				return false
			}
		}
		return true
	}
	return a == b // nil, bool, json.Number, string
}

// jsonPatchOp is one RFC 6902 operation as sent; its members are checked
// when it is applied.
type jsonPatchOp struct {
	op, path, from any
	value          any
	hasValue       bool
}

// decodeOps decodes a JSON patch: an array of operation objects.
func decodeOps(patch []byte) ([]jsonPatchOp, error) {
	doc, err := decodeDoc(patch)
	if err != nil {
		return nil, badRequest("the JSON patch is not valid JSON: %v", err)
	}
	list, ok := doc.([]any)
	if !ok {
		return nil, badRequest("the JSON patch is not a JSON array of operations")
	}
	if len(list) > MaxJSONPatchOps {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", MaxJSONPatchOps, len(list)))
	}
	ops := make([]jsonPatchOp, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, badRequest("the JSON patch's operation %d is not an object", i)
		}
		ops[i] = jsonPatchOp{op: m["op"], path: m["path"], from: m["from"]}
		ops[i].value, ops[i].hasValue = m["value"]
	}
	return ops, nil
}

// jsonPatcher applies the operations of one JSON patch to one document.
type jsonPatcher struct {
	root any
	// size is encodeDoc(root)'s length, or more.
	size int64
	// maxSize bounds size; copyLeft is what copy operations may still copy.
	maxSize  int64
	copyLeft int64
	// shiftLeft is how many array elements inserts and removes may still
	// move: each is a memmove of the array's tail.
	shiftLeft int64
}

// maxShiftsPerByte bounds the array elements one JSON patch may move, per
// byte of its size limit: 16 per byte is 25 million for 1.5 MiB, about
// 60 ms of memmove, while 10,000 inserts into the front of a
// 100,000-element array (a billion moves, 2.3 s) are refused.
const maxShiftsPerByte = 16

// JSON applies an RFC 6902 patch to the JSON document doc. The
// document never grows past maxBytes and copies copy at most maxBytes.
func JSON(ctx context.Context, doc, patch []byte, maxBytes int64) ([]byte, error) {
	if err := CheckDepth(patch); err != nil {
		return nil, err
	}
	ops, err := decodeOps(patch)
	if err != nil {
		return nil, err
	}
	root, err := decodeDoc(doc)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("the object to patch does not decode: %w", err))
	}
	p := &jsonPatcher{root: root, size: encodedSize(root), maxSize: maxBytes, copyLeft: maxBytes, shiftLeft: maxShiftsPerByte * maxBytes}
	for i := range ops {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := p.apply(&ops[i]); err != nil {
			name, _ := ops[i].op.(string)
			return nil, Invalid(fmt.Sprintf("operation %d (%s): %v", i, name, err))
		}
		ops[i] = jsonPatchOp{} // its value is the document's now, or garbage
	}
	out, err := encodeDoc(p.root)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// pointer reads an operation's "path" or "from".
func pointer(v any, member string) ([]string, error) {
	if v == nil {
		return nil, fmt.Errorf("no %q", member)
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("%q is not a string", member)
	}
	return parsePointer(s)
}

func (p *jsonPatcher) apply(op *jsonPatchOp) error {
	kind, ok := op.op.(string)
	if !ok {
		return errors.New(`no "op", or not a string`)
	}
	path, err := pointer(op.path, "path")
	if err != nil {
		return err
	}
	var from []string
	if kind == "move" || kind == "copy" {
		if from, err = pointer(op.from, "from"); err != nil {
			return err
		}
	}
	if (kind == "add" || kind == "replace" || kind == "test") && !op.hasValue {
		return errors.New(`no "value"`)
	}
	value := op.value
	switch kind {
	case "add":
		return p.add(path, value, encodedSize(value))
	case "remove":
		_, err := p.remove(path, true)
		return err
	case "replace":
		return p.replace(path, value, encodedSize(value))
	case "move":
		if pointerPrefix(from, path) {
			if len(from) == len(path) {
				return nil
			}
			return errors.New(`"from" is a parent of "path": a value cannot move into itself`)
		}
		v, err := p.remove(from, false)
		if err != nil {
			return err
		}
		return p.add(path, v, -1)
	case "copy":
		v, err := p.get(from)
		if err != nil {
			return err
		}
		n := encodedSize(v)
		if p.size+n > p.maxSize {
			return p.tooLarge(n)
		}
		if n > p.copyLeft {
			return fmt.Errorf("copying %d more bytes passes the limit of %d bytes that the copies of one patch may copy", n, p.maxSize)
		}
		p.copyLeft -= n
		return p.add(path, deepCopyDoc(v), n)
	case "test":
		v, err := p.get(path)
		if err != nil {
			return err
		}
		if !equalDoc(v, value) {
			return fmt.Errorf("the value at %q is not the one given", op.path)
		}
		return nil
	}
	return fmt.Errorf("unknown operation %q", kind)
}

func (p *jsonPatcher) tooLarge(growth int64) error {
	return fmt.Errorf("the object would grow past %d bytes, the request size limit (it is %d bytes, the operation adds %d)", p.maxSize, p.size, growth)
}

// shift charges moving n array elements to make or close a gap.
func (p *jsonPatcher) shift(n int) error {
	if int64(n) > p.shiftLeft {
		return fmt.Errorf("inserting into and removing from arrays would move more than %d elements, the most one patch may move", maxShiftsPerByte*p.maxSize)
	}
	p.shiftLeft -= int64(n)
	return nil
}

// parsePointer splits an RFC 6901 JSON pointer; "" is the whole document.
func parsePointer(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	if s[0] != '/' {
		return nil, fmt.Errorf("path %q does not start with /", s)
	}
	parts := strings.Split(s[1:], "/")
	for i, t := range parts {
		if strings.Contains(t, "~") {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
		}
	}
	return parts, nil
}

func pointerPrefix(prefix, path []string) bool {
	if len(prefix) > len(path) {
		return false
	}
	for i := range prefix {
		if prefix[i] != path[i] {
			return false
		}
	}
	return true
}

// parent resolves everything but the last token of path.
func (p *jsonPatcher) parent(path []string) (any, error) {
	cur := p.root
	for i, t := range path[:len(path)-1] {
		next, err := child(cur, t)
		if err != nil {
			return nil, fmt.Errorf("/%s: %v", strings.Join(path[:i+1], "/"), err)
		}
		cur = next
	}
	return cur, nil
}

func child(cur any, t string) (any, error) {
	switch c := cur.(type) {
	case map[string]any:
		v, ok := c[t]
		if !ok {
			return nil, errors.New("no such key")
		}
		return v, nil
	case []any:
		i, err := arrayIndex(t, len(c))
		if err != nil {
			return nil, err
		}
		return c[i], nil
	}
	return nil, errors.New("not an object or array")
}

// arrayIndex reads an existing element's index; as upstream's library, a
// negative index counts from the end.
func arrayIndex(t string, n int) (int, error) {
	i, err := strconv.Atoi(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not an array index", t)
	}
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return 0, fmt.Errorf("index %s is out of range (%d elements)", t, n)
	}
	return i, nil
}

func (p *jsonPatcher) get(path []string) (any, error) {
	if len(path) == 0 {
		return p.root, nil
	}
	par, err := p.parent(path)
	if err != nil {
		return nil, err
	}
	v, err := child(par, path[len(path)-1])
	if err != nil {
		return nil, fmt.Errorf("/%s: %v", strings.Join(path, "/"), err)
	}
	return v, nil
}

func (p *jsonPatcher) add(path []string, v any, size int64) error {
	if len(path) == 0 {
		if size < 0 {
			size = encodedSize(v)
		}
		if size > p.maxSize {
			return p.tooLarge(size - p.size)
		}
		p.root, p.size = v, size
		return nil
	}
	par, err := p.parent(path)
	if err != nil {
		return err
	}
	if size < 0 {
		size = 0 // still counted: remove(.., false) took out only its slot
	}
	key := path[len(path)-1]
	switch c := par.(type) {
	case map[string]any:
		growth := size
		if old, ok := c[key]; ok {
			growth -= encodedSize(old)
		} else {
			growth += quotedSize(key) + 1
			if len(c) > 0 {
				growth++
			}
		}
		if p.size+growth > p.maxSize {
			return p.tooLarge(growth)
		}
		c[key] = v
		p.size += growth
	case []any:
		i := len(c)
		if key != "-" {
			n, err := strconv.Atoi(key)
			if err != nil {
				return fmt.Errorf("%q is not an array index", key)
			}
			if n < 0 {
				n += len(c) + 1
			}
			if n < 0 || n > len(c) {
				return fmt.Errorf("index %s is out of range (%d elements)", key, len(c))
			}
			i = n
		}
		growth := size
		if len(c) > 0 {
			growth++
		}
		if p.size+growth > p.maxSize {
			return p.tooLarge(growth)
		}
		if err := p.shift(len(c) - i); err != nil {
			return err
		}
		c = append(c, nil)
		copy(c[i+1:], c[i:])
		c[i] = v
		p.size += growth
		if err := p.replaceChild(path, c); err != nil {
			return err
		}
	default:
		return fmt.Errorf("/%s: the parent is not an object or array", strings.Join(path, "/"))
	}
	return nil
}

// remove takes the value at path out of the document. sized=false (a
// move): the value is about to come back, so only its slot is uncounted.
func (p *jsonPatcher) remove(path []string, sized bool) (any, error) {
	if len(path) == 0 {
		return nil, errors.New("the whole document cannot be removed")
	}
	par, err := p.parent(path)
	if err != nil {
		return nil, err
	}
	key := path[len(path)-1]
	var v any
	var slot int64
	switch c := par.(type) {
	case map[string]any:
		old, ok := c[key]
		if !ok {
			return nil, fmt.Errorf("/%s: no such key", strings.Join(path, "/"))
		}
		v, slot = old, quotedSize(key)+1
		if len(c) > 1 {
			slot++
		}
		delete(c, key)
	case []any:
		i, err := arrayIndex(key, len(c))
		if err != nil {
			return nil, fmt.Errorf("/%s: %v", strings.Join(path, "/"), err)
		}
		v = c[i]
		if len(c) > 1 {
			slot = 1
		}
		if err := p.shift(len(c) - i - 1); err != nil {
			return nil, err
		}
		copy(c[i:], c[i+1:])
		c[len(c)-1] = nil
		if err := p.replaceChild(path, c[:len(c)-1]); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("/%s: the parent is not an object or array", strings.Join(path, "/"))
	}
	p.size -= slot
	if sized {
		p.size -= encodedSize(v)
	}
	return v, nil
}

// replace puts v where a value is (RFC 6902 requires one).
func (p *jsonPatcher) replace(path []string, v any, size int64) error {
	if len(path) == 0 {
		return p.add(path, v, size)
	}
	par, err := p.parent(path)
	if err != nil {
		return err
	}
	key := path[len(path)-1]
	switch c := par.(type) {
	case map[string]any:
		old, ok := c[key]
		if !ok {
			return fmt.Errorf("/%s: no such key", strings.Join(path, "/"))
		}
		growth := size - encodedSize(old)
		if p.size+growth > p.maxSize {
			return p.tooLarge(growth)
		}
		c[key] = v
		p.size += growth
	case []any:
		i, err := arrayIndex(key, len(c))
		if err != nil {
			return fmt.Errorf("/%s: %v", strings.Join(path, "/"), err)
		}
		growth := size - encodedSize(c[i])
		if p.size+growth > p.maxSize {
			return p.tooLarge(growth)
		}
		c[i] = v
		p.size += growth
	default:
		return fmt.Errorf("/%s: the parent is not an object or array", strings.Join(path, "/"))
	}
	return nil
}

// replaceChild stores a resized array back where it lives: slices are
// values, so their holder must see the new header.
func (p *jsonPatcher) replaceChild(path []string, arr []any) error {
	parentPath := path[:len(path)-1]
	if len(parentPath) == 0 {
		p.root = arr
		return nil
	}
	holder, err := p.parent(parentPath)
	if err != nil {
		return err
	}
	key := parentPath[len(parentPath)-1]
	switch h := holder.(type) {
	case map[string]any:
		h[key] = arr
	case []any:
		i, err := arrayIndex(key, len(h))
		if err != nil {
			return err
		}
		h[i] = arr
	}
	return nil
}

// Merge applies an RFC 7386 merge patch to the JSON document doc
// in one pass over the patch.
func Merge(doc, patch []byte) ([]byte, error) {
	if err := CheckDepth(patch); err != nil {
		return nil, err
	}
	p, err := decodeDoc(patch)
	if err != nil {
		return nil, badRequest("the merge patch is not valid JSON: %v", err)
	}
	target, err := decodeDoc(doc)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("the object to patch does not decode: %w", err))
	}
	out, err := encodeDoc(mergeDoc(target, p))
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// mergeDoc is RFC 7386's MergePatch(Target, Patch).
func mergeDoc(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = make(map[string]any, len(pm))
	}
	for k, v := range pm {
		if v == nil {
			delete(tm, k)
			continue
		}
		tm[k] = mergeDoc(tm[k], v)
	}
	return tm
}
