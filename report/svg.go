package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// svgBuf accumulates SVG markup. Inline SVG in HTML needs no xmlns, so the
// markup names no URL at all.
type svgBuf struct{ strings.Builder }

// f appends formatted markup.
func (b *svgBuf) f(format string, args ...any) { fmt.Fprintf(&b.Builder, format, args...) }

// title appends a <title> child (a hover tooltip) holding text, escaped.
func (b *svgBuf) title(text string) {
	b.WriteString("<title>")
	b.WriteString(html.EscapeString(text))
	b.WriteString("</title>")
}

// num formats x with at most two decimals and no trailing zeros: the
// coordinates of a 60 s timeline in milliseconds keep 10 µs resolution.
func num(x float64) string {
	s := strconv.FormatFloat(x, 'f', 2, 64)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

// ms converts d to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// msNum formats d in milliseconds for a coordinate or a data attribute.
func msNum(d time.Duration) string { return num(ms(d)) }

// niceStep returns a step of 1, 2 or 5 times a power of ten that cuts span
// into at most about n parts.
func niceStep(span float64, n int) float64 {
	if span <= 0 || n <= 0 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// tickLabel renders a time tick t (seconds) with as many decimals as the
// step (seconds) needs.
func tickLabel(t, step float64) string {
	d := 0
	if step < 1 {
		d = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	return strconv.FormatFloat(t, 'f', d, 64) + " s"
}

// latencyLabel renders a latency in milliseconds: "0.1 ms", "10 ms", "1 s".
func latencyLabel(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v/1000, 'g', 4, 64) + " s"
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " ms"
}

// faultClass returns the CSS class suffix of the fault started by op f: its
// registered class (history.ClassOf).
func faultClass(f string) string { return history.ClassOf(f) }

// relPath accumulates one SVG path of many short pieces in relative
// commands: each piece starts with a move from where the last one ended,
// and numbers drop their leading zero, which halves a long run's marks.
// The position is tracked in the rounded values written, so the error does
// not add up.
type relPath struct {
	svgBuf
	x, y float64
}

// move starts a piece at (x, y).
func (p *relPath) move(x, y float64) {
	dx, dy := round2(x-p.x), round2(y-p.y)
	p.WriteByte('m')
	p.WriteString(short(dx))
	if dy >= 0 {
		p.WriteByte(' ')
	}
	p.WriteString(short(dy))
	p.x, p.y = p.x+dx, p.y+dy
}

// hline draws w to the right from the position.
func (p *relPath) hline(w float64) {
	w = round2(w)
	p.WriteByte('h')
	p.WriteString(short(w))
	p.x += w
}

// round2 rounds x to two decimals, as num writes it.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

// short is num without a leading zero: ".5", "-.25".
func short(x float64) string {
	s := num(x)
	switch {
	case strings.HasPrefix(s, "0."):
		return s[1:]
	case strings.HasPrefix(s, "-0."):
		return "-" + s[2:]
	}
	return s
}
