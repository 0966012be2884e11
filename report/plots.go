package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// Plot geometry, like Jepsen's perf checker: time on x, shaded fault
// windows, one colour per function.
const (
	plotW  = 1200
	plotH  = 300
	plotML = 64 // left margin: y labels
	plotMR = 12
	plotMT = 10
	plotMB = 30 // bottom margin: x labels
	plotIW = plotW - plotML - plotMR
	plotIH = plotH - plotMT - plotMB
)

// plotFuncs returns the client functions in pairs in plot order: acquire,
// cs, release, then any other (crash is not an operation a client asked
// for, and is left out).
func plotFuncs(pairs []history.Pair) []string {
	seen := make(map[string]bool)
	var other []string
	for _, pr := range pairs {
		f := pr.Invoke.F
		if pr.Invoke.IsNemesis() || f == history.FCrash || seen[f] {
			continue
		}
		seen[f] = true
		if f != history.FAcquire && f != history.FCS && f != history.FRelease {
			other = append(other, f)
		}
	}
	slices.Sort(other)
	var fs []string
	for _, f := range []string{history.FAcquire, history.FCS, history.FRelease} {
		if seen[f] {
			fs = append(fs, f)
		}
	}
	return append(fs, other...)
}

// funcClass returns the CSS colour class of function index i.
func funcClass(i int) string { return fmt.Sprintf("s%d", min(i, 5)) }

// plotFrame opens a plot: background, fault windows and the x axis (seconds
// over [0, end]).
func plotFrame(b *svgBuf, id, label string, faults []history.Fault, end time.Duration) {
	b.f(`<svg id="%s" class="plot" viewBox="0 0 %d %d" role="img" aria-label="%s">`, id, plotW, plotH, label)
	b.f(`<rect class="bg" x="%d" y="%d" width="%d" height="%d"/>`, plotML, plotMT, plotIW, plotIH)
	T := end.Seconds()
	for _, f := range faults {
		x1 := plotML + f.Start.Seconds()/T*plotIW
		x2 := plotML + f.End.Seconds()/T*plotIW
		b.f(`<rect class="fb fb-%s" x="%s" y="%d" width="%s" height="%d">`, faultClass(f.F), num(x1), plotMT, num(max(x2-x1, 1)), plotIH)
		b.title(faultText(f))
		b.f(`</rect>`)
	}
	step := niceStep(T, 12)
	b.f(`<g class="axis">`)
	for t := 0.0; t <= T+1e-9; t += step {
		x := plotML + t/T*plotIW
		b.f(`<line x1="%s" x2="%s" y1="%d" y2="%d"/><text x="%s" y="%d">%s</text>`,
			num(x), num(x), plotMT, plotMT+plotIH+4, num(x), plotH-12, tickLabel(t, step))
	}
	b.f(`</g>`)
}

// renderLatency plots each op's latency (completion minus invocation, log
// scale) at its invocation time: a dot for ok, a cross for fail, a ring for
// info. Points that fall on the same half pixel are drawn once.
func renderLatency(pairs []history.Pair, faults []history.Fault, end time.Duration) template.HTML {
	fs := plotFuncs(pairs)
	if len(fs) == 0 {
		return ""
	}
	lo, hi := math.Inf(1), 0.0
	for _, pr := range pairs {
		if pr.Invoke.IsNemesis() || pr.Complete == nil || pr.Invoke.F == history.FCrash {
			continue
		}
		v := max(ms(pr.Complete.Time-pr.Invoke.Time), 0.001)
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi == 0 {
		return ""
	}
	dlo, dhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dhi <= dlo {
		dhi = dlo + 1
	}
	y := func(v float64) float64 {
		return plotMT + plotIH - (math.Log10(max(v, 0.001))-dlo)/(dhi-dlo)*plotIH
	}
	T := end.Seconds()

	var b svgBuf
	plotFrame(&b, "latency", "latency over time", faults, end)
	b.f(`<g class="axis y">`)
	for d := dlo; d <= dhi; d++ {
		v := math.Pow(10, d)
		b.f(`<line x1="%d" x2="%d" y1="%s" y2="%s"/><text x="%d" y="%s">%s</text>`,
			plotML-4, plotML+plotIW, num(y(v)), num(y(v)), plotML-6, num(y(v)+4), latencyLabel(v))
	}
	b.f(`</g>`)
	type key struct {
		f   int
		typ history.Type
	}
	paths := make(map[key]*relPath)
	seen := make(map[[3]int]bool)
	// Points on the same cell are drawn once: half a pixel, or a whole
	// pixel for a long run, whose dots would otherwise be megabytes.
	res := 2.0
	switch {
	case len(pairs) > 4*maxMarks:
		res = 0.5
	case len(pairs) > maxMarks:
		res = 1
	}
	for _, pr := range pairs {
		if pr.Invoke.IsNemesis() || pr.Complete == nil || pr.Invoke.F == history.FCrash {
			continue
		}
		fi := slices.Index(fs, pr.Invoke.F)
		x := plotML + pr.Invoke.Time.Seconds()/T*plotIW
		yy := y(ms(pr.Complete.Time - pr.Invoke.Time))
		typ := pr.Complete.Type
		cell := [3]int{fi*3 + typeIndex(typ), int(x * res), int(yy * res)}
		if seen[cell] {
			continue
		}
		if res < 2 {
			// Drawn at the cell's centre: shorter numbers.
			x, yy = (float64(cell[1])+0.5)/res, (float64(cell[2])+0.5)/res
		}
		seen[cell] = true
		k := key{fi, typ}
		pb := paths[k]
		if pb == nil {
			pb = &relPath{}
			paths[k] = pb
		}
		switch typ {
		case history.OK:
			pb.move(x, yy)
			pb.WriteString("h0")
		case history.Fail:
			pb.move(x-2.5, yy-2.5)
			pb.WriteString("l5 5m0-5l-5 5")
			pb.y += 5 // the cross ends below its start
		default:
			pb.move(x, yy-3)
			pb.WriteString("l3 3l-3 3l-3-3z") // closed: back at its start
		}
	}
	for fi := range fs {
		for _, typ := range []history.Type{history.OK, history.Fail, history.Info} {
			if pb := paths[key{fi, typ}]; pb != nil {
				b.f(`<path class="pt %s %s" d="%s"/>`, funcClass(fi), typ, pb.String())
			}
		}
	}
	b.f(`</svg>`)
	b.WriteString(legend(fs, true))
	return template.HTML(b.String())
}

// typeIndex numbers the completion types for de-duplication.
func typeIndex(t history.Type) int {
	switch t {
	case history.OK:
		return 0
	case history.Fail:
		return 1
	}
	return 2
}

// bucketSize returns the throughput bucket: the shortest round length, at
// least 100 ms, that cuts the run into at most 80 buckets (a 60 s run: 1 s,
// a rate per second; a 20 s run: 250 ms).
func bucketSize(end time.Duration) time.Duration {
	for _, s := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond,
		500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
		30 * time.Second, time.Minute, 5 * time.Minute} {
		if end/s <= 80 {
			return s
		}
	}
	return end / 80
}

// renderThroughput plots completions per second of each function over
// time: ok as a solid line, fail and info together as a dashed one.
func renderThroughput(pairs []history.Pair, faults []history.Fault, end time.Duration) template.HTML {
	fs := plotFuncs(pairs)
	if len(fs) == 0 {
		return ""
	}
	bucket := bucketSize(end)
	n := int(end/bucket) + 1
	ok := make([][]int, len(fs))
	bad := make([][]int, len(fs))
	for i := range fs {
		ok[i], bad[i] = make([]int, n), make([]int, n)
	}
	anyBad := make([]bool, len(fs))
	for _, pr := range pairs {
		if pr.Invoke.IsNemesis() || pr.Complete == nil || pr.Invoke.F == history.FCrash {
			continue
		}
		fi := slices.Index(fs, pr.Invoke.F)
		i := min(int(pr.Complete.Time/bucket), n-1)
		if pr.Complete.Type == history.OK {
			ok[fi][i]++
		} else {
			bad[fi][i]++
			anyBad[fi] = true
		}
	}
	per := bucket.Seconds()
	top := 0.0
	for fi := range fs {
		for i := range n {
			top = max(top, float64(ok[fi][i])/per, float64(bad[fi][i])/per)
		}
	}
	step := niceStep(max(top, 1), 5)
	top = math.Ceil(max(top, 1)/step) * step
	y := func(v float64) float64 { return plotMT + plotIH - v/top*plotIH }
	T := end.Seconds()

	var b svgBuf
	plotFrame(&b, "throughput", "throughput over time", faults, end)
	b.f(`<g class="axis y">`)
	for v := 0.0; v <= top+1e-9; v += step {
		b.f(`<line x1="%d" x2="%d" y1="%s" y2="%s"/><text x="%d" y="%s">%s/s</text>`,
			plotML-4, plotML+plotIW, num(y(v)), num(y(v)), plotML-6, num(y(v)+4), num(v))
	}
	b.f(`</g>`)
	line := func(counts []int, cls string) {
		b.f(`<polyline class="%s" points="`, cls)
		for i, c := range counts {
			t := min((float64(i)+0.5)*per, T)
			if i > 0 {
				b.WriteByte(' ')
			}
			b.f("%s,%s", num(plotML+t/T*plotIW), num(y(float64(c)/per)))
		}
		b.f(`"/>`)
	}
	for fi := range fs {
		line(ok[fi], "ln "+funcClass(fi))
		if anyBad[fi] {
			line(bad[fi], "ln bad "+funcClass(fi))
		}
	}
	b.f(`</svg>`)
	b.WriteString(legend(fs, false))
	return template.HTML(b.String())
}

// legend explains a plot's colours (and, for latency, its shapes).
func legend(fs []string, shapes bool) string {
	var b svgBuf
	b.f(`<div class="legend">`)
	for i, f := range fs {
		b.f(`<span><i class="sw %s"></i>%s</span>`, funcClass(i), html.EscapeString(f))
	}
	if shapes {
		b.f(`<span>● ok</span><span>× fail</span><span>◇ info</span>`)
	} else {
		b.f(`<span>solid: ok per second</span><span>dashed: fail + info per second</span>`)
	}
	b.f(`<span><i class="sw fb-process"></i>fault window</span></div>`)
	return b.String()
}
