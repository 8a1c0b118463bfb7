package report

// A report's content is computed once, as a page of sections made of blocks (paragraphs,
// tables, lists, charts), and written twice: as Markdown (render.go, markdownPage) and as one
// self-contained HTML page (htmlPage). The two differ only in what their medium can hold: the
// HTML draws the charts inline and links each value an expectation read to the chart or table
// that holds it; the Markdown links the timeline picture and the HTML report.

// page is a report's content.
type page struct {
	title, outcome, doc string
	// leftBehind is set when the run left objects its cleanup could not remove: the title
	// says it beside the verdict (exit 4 outranks the verdict).
	leftBehind bool
	// mayFailed says, beside the verdict, which steps that may fail (mayFail) did not pass:
	// "1 step that may fail failed: busy (wait)", or "". A run passes with them, and a
	// reader of the report alone would otherwise see it only in the timeline's rows.
	mayFailed string
	// warned says, beside a passed verdict, the lints' warnings in its scenario (Warned).
	warned string
	// warnings are the lints' findings in the scenario, as the run printed them.
	warnings []string
	// meta are the run's facts: scenario, target, start, duration, vars.
	meta []metaRow
	// expectations are the verdicts with their evidence.
	expectations []expectationView
	notes        []string
	sections     []*section
	// jsonFile is the complete record's file name.
	jsonFile string
}

type metaRow struct {
	label string
	value inline
	// class is the HTML class of the value ("err").
	class string
}

type expectationView struct {
	outcome string // passed, failed, error, skipped
	src     string
	// shown is the expression with the value of each part (interp's explanation).
	shown  string
	reason string
	parts  []Part
}

// section is a titled part of a report; id is its HTML anchor.
type section struct {
	id, title string
	blocks    []block
}

// block is one of: a heading (h3), a paragraph (hint: a quieter one), a table, a list, a row
// of charts (HTML only; mdNote says in the Markdown where they are), a picture (the HTML
// inlines svg, the Markdown links file).
type block struct {
	heading string
	id      string
	text    inline
	hint    bool
	table   *table
	list    []inline
	charts  []chart
	mdNote  inline
	svg     string
	file    string
	// htmlOnly and mdOnly blocks are written by one renderer only.
	htmlOnly, mdOnly bool
}

// inline is a run of text spans.
type inline []piece

type piece struct {
	text string
	code bool
	// link is a relative URL or an #anchor.
	link  string
	class string
}

func txt(s string) inline               { return inline{{text: s}} }
func code(s string) piece               { return piece{text: s, code: true} }
func plain(s string) piece              { return piece{text: s} }
func linked(s, link string) piece       { return piece{text: s, link: link} }
func classed(s, class string) piece     { return piece{text: s, class: class} }
func (in inline) add(s ...piece) inline { return append(in, s...) }

// table is a table; num marks the columns of numbers (right-aligned in HTML).
type table struct {
	id   string
	head []string
	num  []bool
	rows []row
}

type row struct {
	id, class string
	// cluster is the cluster of a step's row, shown when the run has clusters.
	cluster string
	cells   []inline
}

func (t *table) addRow(r row) { t.rows = append(t.rows, r) }

// cells makes a row's cells of plain strings.
func cells(ss ...string) []inline {
	out := make([]inline, len(ss))
	for i, s := range ss {
		out[i] = txt(s)
	}
	return out
}
