package dashboard

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Charts are drawn with gonum/plot and inlined as SVG: no script, no
// font or file fetched when the page is viewed, and they print.

// palette is a colour-blind-friendly qualitative palette (Okabe–Ito) with
// a grey for "other".
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xff}, {0xE6, 0x9F, 0x00, 0xff}, {0x00, 0x9E, 0x73, 0xff}, {0xCC, 0x79, 0xA7, 0xff},
	{0x56, 0xB4, 0xE9, 0xff}, {0xD5, 0x5E, 0x00, 0xff}, {0xF0, 0xE4, 0x42, 0xff}, {0x33, 0x33, 0x33, 0xff},
}

var otherColor = color.RGBA{0xaa, 0xaa, 0xaa, 0xff}

func init() {
	// Sans-serif text, like the page around the charts (gonum/plot's
	// default is Liberation Serif; this package is its only user here).
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
}

func colorAt(i int) color.RGBA { return palette[i%len(palette)] }

// series is one stack of a stacked bar chart.
type series struct {
	name   string
	values []float64
	color  color.Color
}

// svgOf renders p at w×h points as an SVG element for inlining in HTML:
// without the XML prelude, the namespace declarations (HTML parsers put
// <svg> in its namespace) and the fixed size (the page's CSS scales it);
// label is its accessible name.
func svgOf(p *plot.Plot, w, h vg.Length, label string) (string, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("chart %q: no <svg> element", label)
	}
	s = s[i:]
	s = svgHead.ReplaceAllString(s, `<svg class="chart" role="img" aria-label="`+attrEscape(label)+`" viewBox="$1"`)
	return s, nil
}

var svgHead = regexp.MustCompile(`(?s)^<svg width="[^"]*" height="[^"]*" viewBox="([^"]*)"\s*xmlns="[^"]*"\s*xmlns:xlink="[^"]*"`)

func attrEscape(s string) string {
	r := strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;")
	return r.Replace(s)
}

// shorten cuts a label to n runes.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// newPlot is a plot with dollar ticks on Y. Charts carry no title: the
// page's heading names them (and their aria-label).
func newPlot(ylabel string) *plot.Plot {
	p := plot.New()
	p.Y.Label.Text = ylabel
	p.Y.Tick.Marker = moneyTicks{}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Padding = vg.Points(1.5)
	return p
}

// moneyTicks are the default ticks labelled in dollars.
type moneyTicks struct{}

func (moneyTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = "$" + ts[i].Label
		}
	}
	return ts
}

// everyNth marks and labels every n-th of the category positions
// 0..len(labels)-1.
type everyNth struct {
	labels []string
	n      int
}

func (e everyNth) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for i, l := range e.labels {
		if i%e.n == 0 {
			ts = append(ts, plot.Tick{Value: float64(i), Label: l})
		}
	}
	return ts
}

// stackedBars is a vertical bar chart of series stacked per category.
func stackedBars(title string, labels []string, ss []series, w, h vg.Length) (string, error) {
	p := newPlot("cost (USD)")
	width := vg.Length(math.Max(1, math.Min(18, float64(w)*0.8/float64(max(len(labels), 1)))))
	// Room above the highest stack for the legend (one line per series).
	top := 0.0
	for i := range labels {
		sum := 0.0
		for _, s := range ss {
			sum += s.values[i]
		}
		top = math.Max(top, sum)
	}
	if len(ss) > 1 {
		p.Y.Max = top * (1 + 0.1*float64(len(ss)))
	}
	var prev *plotter.BarChart
	for _, s := range ss {
		bars, err := plotter.NewBarChart(plotter.Values(s.values), width)
		if err != nil {
			return "", err
		}
		bars.Color = s.color
		bars.LineStyle.Width = 0
		if prev != nil {
			bars.StackOn(prev)
		}
		p.Add(bars)
		if len(ss) > 1 {
			p.Legend.Add(s.name, bars)
		}
		prev = bars
	}
	n := max(1, (len(labels)+11)/12)
	p.X.Tick.Marker = everyNth{labels: labels, n: n}
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.X.Min, p.X.Max = -1, float64(len(labels))
	p.Y.Min = 0
	return svgOf(p, w, h, title)
}

// hbars is a horizontal bar chart, the first value at the top.
func hbars(title, xlabel string, labels []string, values []float64, money bool, w vg.Length) (string, error) {
	p := plot.New()
	p.X.Label.Text = xlabel
	if money {
		p.X.Tick.Marker = moneyTicks{}
	}
	n := len(values)
	rev := make(plotter.Values, n)
	names := make([]string, n)
	for i := range values {
		rev[n-1-i] = values[i]
		names[n-1-i] = shorten(labels[i], 32)
	}
	bars, err := plotter.NewBarChart(rev, vg.Points(12))
	if err != nil {
		return "", err
	}
	bars.Horizontal = true
	bars.Color = colorAt(0)
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.NominalY(names...)
	p.X.Min = 0
	h := vg.Points(float64(60 + 20*max(n, 1)))
	return svgOf(p, w, h, title)
}
