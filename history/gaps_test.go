package history

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestDecodeReaderShapes: io.Reader lets a reader return its last bytes
// together with io.EOF (iotest.DataErrReader does), or a byte at a time;
// the decoder's verdict on a history must not depend on how the bytes
// arrive. Every line then reaches the line splitter "at EOF", so a torn
// last line must still be told from a malformed line before it.
func TestDecodeReaderShapes(t *testing.T) {
	op := func(i int) string {
		return fmt.Sprintf(`{"index":%d,"time":%d,"process":0,"type":"invoke","f":"acquire","key":"k"}`, i, i)
	}
	readers := map[string]func(io.Reader) io.Reader{
		"plain":          func(r io.Reader) io.Reader { return r },
		"data with EOF":  iotest.DataErrReader,
		"one byte":       iotest.OneByteReader,
		"one byte + EOF": func(r io.Reader) io.Reader { return iotest.DataErrReader(iotest.OneByteReader(r)) },
		"half":           iotest.HalfReader,
	}
	tests := []struct {
		name  string
		input string
		ops   int    // ops decoded (Decode and DecodeTorn)
		torn  int    // DecodeTorn's torn line, 0 for none
		err   string // Decode's error ("" for none)
		tornE string // DecodeTorn's error ("" for none)
	}{
		{"terminated", op(0) + "\n" + op(1) + "\n", 2, 0, "", ""},
		{"last line without newline", op(0) + "\n" + op(1), 2, 0, "", ""},
		{"blank lines", "\n" + op(0) + "\n\n" + op(1) + "\n\n", 2, 0, "", ""},
		{"torn last line", op(0) + "\n" + op(1) + "\n" + op(2)[:20], 2, 3, "line 3: malformed op", ""},
		{"malformed line before an unterminated last", op(0) + "\n{oops\n" + op(2), 1, 0, "line 2: malformed op", "line 2: malformed op"},
		{"malformed terminated last line", op(0) + "\n{oops\n", 1, 0, "line 2: malformed op", "line 2: malformed op"},
		{"single unterminated line", op(0), 1, 0, "", ""},
		{"empty", "", 0, 0, "", ""},
	}
	for _, tt := range tests {
		for rname, wrap := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				h, err := Decode(wrap(strings.NewReader(tt.input)))
				if !matches(err, tt.err) {
					t.Fatalf("Decode: error %v, want %q", err, tt.err)
				}
				if err == nil && len(h) != tt.ops {
					t.Fatalf("Decode: %d ops, want %d", len(h), tt.ops)
				}
				h, torn, err := DecodeTorn(wrap(strings.NewReader(tt.input)))
				if !matches(err, tt.tornE) {
					t.Fatalf("DecodeTorn: error %v, want %q", err, tt.tornE)
				}
				if len(h) != tt.ops {
					t.Fatalf("DecodeTorn: %d ops, want %d", len(h), tt.ops)
				}
				switch {
				case tt.torn == 0 && torn != nil:
					t.Fatalf("DecodeTorn: torn %v, want none", torn)
				case tt.torn != 0 && (torn == nil || torn.Line != tt.torn):
					t.Fatalf("DecodeTorn: torn %v, want line %d", torn, tt.torn)
				}
				for i, o := range h {
					if o.Index != i {
						t.Fatalf("op %d has index %d", i, o.Index)
					}
				}
			})
		}
	}
}

// matches says err is nil when want is "", or contains want.
func matches(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return err != nil && strings.Contains(err.Error(), want)
}
