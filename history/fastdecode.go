package history

import (
	"bytes"
	"time"
)

// fastOp parses a line of the shape the Recorder writes for the ops a long
// run is made of (acquire, cs, release and server-release), without
// reflection: the top-level fields, and a value with only token, owner,
// read, wrote, released, nodes and a release with only how. It returns
// false for anything else (another field, a duplicate field, whitespace, an
// escape in a string, a number that is not a plain integer, null), and the
// caller then parses the line with encoding/json, so what it accepts it
// reads exactly as encoding/json does and every error is encoding/json's.
// A long history is millions of such lines: this is several times faster
// than encoding/json, and the strings the ops share (type, f, key, node
// names) are interned rather than allocated per op.
func fastOp(b []byte, in *arena) (Op, bool) {
	p := fastParser{b: b, in: in}
	var op Op
	var seen uint
	if !p.byte('{') {
		return Op{}, false
	}
	if p.peek() == '}' {
		return Op{}, false // {}: encoding/json's zero op, invalid anyway
	}
	for {
		name, ok := p.name()
		if !ok {
			return Op{}, false
		}
		bit := uint(0)
		switch string(name) { // no allocation: the conversion is the switch's
		case "index":
			bit = 1
			op.Index, ok = p.int()
		case "time":
			bit = 2
			var t int
			t, ok = p.int()
			op.Time = time.Duration(t)
		case "process":
			bit = 4
			op.Process, ok = p.int()
		case "type":
			bit = 8
			var s string
			s, ok = p.str(true)
			op.Type = Type(s)
		case "f":
			bit = 16
			op.F, ok = p.str(true)
		case "key":
			bit = 32
			op.Key, ok = p.str(true)
		case "error":
			bit = 64
			op.Error, ok = p.str(false)
		case "value":
			bit = 128
			op.Value, ok = p.value()
		}
		if bit == 0 || !ok || seen&bit != 0 {
			return Op{}, false
		}
		seen |= bit
		if p.byte('}') {
			break
		}
		if !p.byte(',') {
			return Op{}, false
		}
	}
	return op, p.i == len(p.b)
}

// value parses an op's value object (after its name).
func (p *fastParser) value() (*Value, bool) {
	if !p.byte('{') || p.peek() == '}' {
		return nil, false
	}
	v := p.in.value()
	var seen uint
	for {
		name, ok := p.name()
		if !ok {
			return nil, false
		}
		bit := uint(0)
		switch string(name) {
		case "token":
			bit = 1
			var n int
			n, ok = p.int()
			v.Token = int64(n)
		case "owner":
			bit = 2
			v.Owner, ok = p.str(false)
		case "read":
			bit = 4
			var n int
			n, ok = p.int()
			v.Read = p.in.int64(int64(n))
		case "wrote":
			bit = 8
			var n int
			n, ok = p.int()
			v.Wrote = p.in.int64(int64(n))
		case "released":
			bit = 16
			var t bool
			t, ok = p.bool()
			v.Released = p.in.bool(t)
		case "nodes":
			bit = 32
			v.Mut().Nodes, ok = p.strings()
		case "release":
			bit = 64
			v.Mut().Release, ok = p.release()
		}
		if bit == 0 || !ok || seen&bit != 0 {
			return nil, false
		}
		seen |= bit
		if p.byte('}') {
			return v, true
		}
		if !p.byte(',') {
			return nil, false
		}
	}
}

// release parses a release object whose only field is how.
func (p *fastParser) release() (*Release, bool) {
	if !p.byte('{') {
		return nil, false
	}
	name, ok := p.name()
	if !ok || string(name) != "how" {
		return nil, false
	}
	how, ok := p.str(true)
	if !ok || !p.byte('}') {
		return nil, false
	}
	return &Release{How: how}, true
}

// fastParser reads one line from position i on.
type fastParser struct {
	b  []byte
	i  int
	in *arena
}

// peek returns the next byte, 0 at the end.
func (p *fastParser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// byte consumes c if it comes next.
func (p *fastParser) byte(c byte) bool {
	if p.peek() != c {
		return false
	}
	p.i++
	return true
}

// name reads a field name and its colon. It returns the name's bytes:
// the callers compare them in a switch on string(name), which the compiler
// does without allocating (a string returned from here would be a copy
// per field of every line).
func (p *fastParser) name() ([]byte, bool) {
	b, ok := p.strBytes()
	if !ok || !p.byte(':') {
		return nil, false
	}
	return b, true
}

// strBytes reads a string of printable ASCII with no escape and returns its
// bytes; anything else (an escape, a control or non-ASCII byte, whose
// encoding/json reading this parser does not repeat) is refused.
func (p *fastParser) strBytes() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			p.i++
			return p.b[start : p.i-1], true
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// str reads a string; shared strings are interned.
func (p *fastParser) str(shared bool) (string, bool) {
	b, ok := p.strBytes()
	if !ok {
		return "", false
	}
	if shared {
		return p.in.intern(b), true
	}
	return string(b), true
}

// strings reads a non-empty array of strings, interned.
func (p *fastParser) strings() ([]string, bool) {
	if !p.byte('[') || p.peek() == ']' {
		return nil, false
	}
	var out []string
	for {
		s, ok := p.str(true)
		if !ok {
			return nil, false
		}
		out = append(out, s)
		if p.byte(']') {
			return out, true
		}
		if !p.byte(',') {
			return nil, false
		}
	}
}

// int reads an integer as JSON writes one: an optional minus, then 0 or a
// digit 1-9 and more digits, within 18 digits (so it cannot overflow).
func (p *fastParser) int() (int, bool) {
	neg := p.byte('-')
	start := p.i
	n := 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		n = n*10 + int(p.b[p.i]-'0')
		p.i++
	}
	digits := p.i - start
	if digits == 0 || digits > 18 || (digits > 1 && p.b[start] == '0') {
		return 0, false
	}
	if c := p.peek(); c == '.' || c == 'e' || c == 'E' {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// bool reads true or false.
func (p *fastParser) bool() (bool, bool) {
	// Ifs, not the cases of a switch, so that coverage (and gremlins)
	// sees each condition run.
	rest := p.b[p.i:]
	if bytes.HasPrefix(rest, []byte("true")) {
		p.i += 4
		return true, true
	}
	if bytes.HasPrefix(rest, []byte("false")) {
		p.i += 5
		return false, true
	}
	return false, false
}

// arena is what one decoding goroutine shares among its ops: the strings
// many ops repeat (type, f, key, node names, how a server released),
// interned, and slabs that values and their numbers are cut from. The
// interning is bounded: past maxInterned distinct strings it allocates, so
// a history of unique keys costs no more than before. A slab is one
// allocation for slabLen values (a long run's million values were a
// million allocations, each also a size class above a Value's size).
type arena struct {
	m      map[string]string
	values []Value
	ints   []int64
	bools  []bool
}

// bool returns a pointer to t (from a slab unless in is nil).
func (in *arena) bool(t bool) *bool {
	if in == nil {
		return Bool(t)
	}
	p := take(&in.bools)
	*p = t
	return p
}

// maxInterned bounds an arena's strings.
const maxInterned = 4096

// slabLen is how many values or numbers one slab holds.
const slabLen = 256

// intern returns b as a string, shared with earlier equal ones (none when
// in is nil).
func (in *arena) intern(b []byte) string {
	if in == nil {
		return string(b)
	}
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if in.m == nil {
		in.m = make(map[string]string)
	}
	if len(in.m) < maxInterned {
		in.m[s] = s
	}
	return s
}

// value returns a new zero Value (from a slab unless in is nil).
func (in *arena) value() *Value {
	if in == nil {
		return &Value{}
	}
	return take(&in.values)
}

// int64 returns a pointer to n (from a slab unless in is nil).
func (in *arena) int64(n int64) *int64 {
	if in == nil {
		return Int64(n)
	}
	p := take(&in.ints)
	*p = n
	return p
}

// take cuts the next element off *slab, a new slab of slabLen when it is
// used up.
func take[T any](slab *[]T) *T {
	if len(*slab) == 0 {
		*slab = make([]T, slabLen)
	}
	p := &(*slab)[0]
	*slab = (*slab)[1:]
	return p
}
