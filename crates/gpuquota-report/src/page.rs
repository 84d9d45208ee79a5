//! The page: sections of blocks (sentences, key figures, tables, charts with the table
//! behind them, collapsed inputs), rendered as one self-contained HTML document.

use std::fmt::Write as _;

use gpuquota_sim::chart::escape;

/// One cell of a [`Table`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cell {
    /// The text shown.
    pub text: String,
    /// A name the cell's figure is found by in the page (`data-figure`), for readers and
    /// tests that check the page against the JSON.
    pub figure: Option<String>,
}

impl Cell {
    /// A cell of `text`.
    pub fn new(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            figure: None,
        }
    }

    /// A cell whose figure is named `figure` (`data-figure`).
    pub fn figure(text: impl Into<String>, figure: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            figure: Some(figure.into()),
        }
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::new(s)
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::new(s)
    }
}

/// One row of a [`Table`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Row {
    /// The cells, one per column.
    pub cells: Vec<Cell>,
    /// The department the row belongs to: hidden with it by the page's department switches.
    pub department: Option<String>,
    /// A key naming the row in the page (`data-row`).
    pub key: Option<String>,
    /// A total or summary row (drawn bold).
    pub total: bool,
}

impl Row {
    /// A row of `cells`.
    pub fn new<C: Into<Cell>>(cells: impl IntoIterator<Item = C>) -> Row {
        Row {
            cells: cells.into_iter().map(Into::into).collect(),
            ..Row::default()
        }
    }

    /// The row, belonging to `department`.
    #[must_use]
    pub fn of(mut self, department: impl Into<String>) -> Row {
        self.department = Some(department.into());
        self
    }

    /// The row, named `key` (`data-row`).
    #[must_use]
    pub fn keyed(mut self, key: impl Into<String>) -> Row {
        self.key = Some(key.into());
        self
    }

    /// The row, as a total.
    #[must_use]
    pub fn as_total(mut self) -> Row {
        self.total = true;
        self
    }
}

/// A table with a caption and a header row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// The caption (what the table shows).
    pub caption: String,
    /// The column headers.
    pub head: Vec<String>,
    /// The rows.
    pub rows: Vec<Row>,
}

impl Table {
    /// An empty table with `caption` and `head`.
    pub fn new(caption: impl Into<String>, head: &[&str]) -> Table {
        Table {
            caption: caption.into(),
            head: head.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row.
    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }
}

/// A key figure: a label and its value, named for readers and tests (`data-figure`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// What the figure is.
    pub label: String,
    /// Its value as shown.
    pub value: String,
    /// Its name in the page (`data-figure`).
    pub key: String,
}

/// One piece of a section.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Block {
    /// A paragraph of text.
    Paragraph(String),
    /// Sentences, one list item each.
    Sentences(Vec<String>),
    /// Key figures side by side.
    Facts(Vec<Fact>),
    /// A table.
    Table(Table),
    /// A chart (an inline SVG made by [`gpuquota_sim::chart::inline`], with its text
    /// alternative) and the table of the figures it draws, open below it.
    Chart {
        /// The inline SVG.
        svg: String,
        /// The table behind the chart.
        table: Option<Table>,
    },
    /// Preformatted text (inputs, JSON).
    Pre(String),
    /// A collapsed part, opened by its summary line.
    Details {
        /// The summary line.
        summary: String,
        /// What it holds.
        blocks: Vec<Block>,
    },
    /// Columns side by side (stacked on a narrow screen), each with a heading.
    Columns(Vec<(String, Vec<Block>)>),
    /// Parts of which one is shown at a time, chosen by a row of links (a day of the month
    /// to zoom on, say): following a link shows its part (CSS `:target`, no script); none
    /// shows before a link is followed.
    Choice {
        /// What the links choose (`Zoom on a day`), read before them.
        label: String,
        /// The parts: anchor (`id`, unique in the page), link text and blocks.
        parts: Vec<(String, String, Vec<Block>)>,
    },
}

/// A section of the page: a heading and its blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The heading.
    pub heading: String,
    /// Its anchor in the page (`id`), unique.
    pub id: String,
    /// The blocks, in order.
    pub blocks: Vec<Block>,
}

impl Section {
    /// An empty section.
    pub fn new(id: impl Into<String>, heading: impl Into<String>) -> Section {
        Section {
            heading: heading.into(),
            id: id.into(),
            blocks: Vec::new(),
        }
    }

    /// Adds a block.
    pub fn push(&mut self, b: Block) -> &mut Section {
        self.blocks.push(b);
        self
    }
}

/// A whole page: a title, a line under it, the departments its switches show and hide,
/// and the sections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Page {
    /// The page's title.
    pub title: String,
    /// The line under the title (what was run).
    pub subtitle: String,
    /// The departments, in the pictures' colour order: one switch each, hiding the rows
    /// that belong to it. None: no switches.
    pub departments: Vec<String>,
    /// The metering departments' colours, as CSS text, in `departments` order.
    pub colours: Vec<String>,
    /// The sections, in order.
    pub sections: Vec<Section>,
}

/// The page's style: readable on a phone (one column, tables scroll sideways, charts scale
/// to the width), printable (no switches, collapsed parts' summaries kept, no page break
/// inside a chart), dark text on white (contrast above 7:1).
const STYLE: &str = "\
:root{color-scheme:light}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1200px;padding:12px;font:16px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1a1a1a;background:#fff}
h1{font-size:1.6em;margin:.3em 0}h2{font-size:1.3em;margin:1.4em 0 .4em;border-bottom:2px solid #ccc}
h3{font-size:1.1em;margin:1em 0 .3em}
p.sub{color:#333;margin:0 0 1em}
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3em 1em}
a{color:#0b4f9c}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(11em,1fr));gap:.5em;margin:.5em 0}
.facts div{border:1px solid #bbb;border-radius:4px;padding:.4em .6em}
.facts dt{font-size:.85em;color:#333}.facts dd{margin:0;font-size:1.25em;font-weight:600}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.4em 0 1em;font-size:.92em}
caption{text-align:left;font-weight:600;padding:.2em 0}
th,td{border:1px solid #bbb;padding:.2em .5em;text-align:left;vertical-align:top}
th{background:#eee}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.total td{font-weight:700;border-top:2px solid #555}
svg.chart{width:100%;height:auto;display:block;border:1px solid #ddd}
figure{margin:.5em 0}
pre{white-space:pre;overflow-x:auto;max-width:100%;background:#f6f6f6;padding:.5em;font-size:.85em}
details{margin:.4em 0}summary{cursor:pointer;font-weight:600}
.choice ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.2em .8em;margin:.2em 0}
.choice .part{display:none}.choice .part:target{display:block}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(20em,1fr));gap:1em}
fieldset.switches{border:1px solid #bbb;margin:.5em 0}
fieldset.switches label{display:inline-block;margin-right:1em;white-space:nowrap}
.sw{display:inline-block;width:.9em;height:.9em;border:1px solid #333;vertical-align:-.1em;margin-right:.2em}
@media (max-width:600px){body{font-size:15px;padding:6px}th,td{padding:.15em .3em}}
@media print{fieldset.switches,nav,.choice{display:none}body{max-width:none;font-size:11pt}section{break-inside:auto}figure,table{break-inside:avoid}details>*{display:block}a{color:#000}}
";

impl Page {
    /// An empty page.
    pub fn new(title: impl Into<String>, subtitle: impl Into<String>) -> Page {
        Page {
            title: title.into(),
            subtitle: subtitle.into(),
            ..Page::default()
        }
    }

    /// Adds a section.
    pub fn push(&mut self, s: Section) -> &mut Page {
        self.sections.push(s);
        self
    }

    /// The page as one HTML document: no script, no external resource; the department
    /// switches work with CSS alone.
    ///
    /// # Complexity
    /// O(size of the page).
    pub fn render(&self) -> String {
        let mut h = String::with_capacity(64 * 1024);
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n<title>{}</title>\n<style>\n{STYLE}",
            escape(&self.title)
        );
        for i in 0..self.departments.len() {
            let _ = writeln!(
                h,
                "body:has(#dep-{i}:not(:checked)) .dep-{i}{{display:none}}"
            );
        }
        let _ = write!(
            h,
            "</style>\n</head>\n<body>\n<header>\n<h1>{}</h1>\n<p class=\"sub\">{}</p>\n",
            escape(&self.title),
            escape(&self.subtitle)
        );
        h.push_str("<nav aria-label=\"Sections\"><ul>");
        for s in &self.sections {
            let _ = write!(
                h,
                "<li><a href=\"#{}\">{}</a></li>",
                escape(&s.id),
                escape(&s.heading)
            );
        }
        h.push_str("</ul></nav>\n");
        if !self.departments.is_empty() {
            h.push_str(
                "<fieldset class=\"switches\"><legend>Departments shown in the tables</legend>",
            );
            for (i, d) in self.departments.iter().enumerate() {
                let colour = self.colours.get(i).map_or("#BAB0AC", String::as_str);
                let _ = write!(
                    h,
                    "<label><input type=\"checkbox\" id=\"dep-{i}\" checked> <span class=\"sw\" style=\"background:{colour}\" aria-hidden=\"true\"></span>{}</label>",
                    escape(d)
                );
            }
            h.push_str("</fieldset>\n");
        }
        h.push_str("</header>\n<main>\n");
        for s in &self.sections {
            let _ = write!(
                h,
                "<section id=\"{}\" aria-labelledby=\"{}-h\">\n<h2 id=\"{}-h\">{}</h2>\n",
                escape(&s.id),
                escape(&s.id),
                escape(&s.id),
                escape(&s.heading)
            );
            for b in &s.blocks {
                self.block(&mut h, b);
            }
            h.push_str("</section>\n");
        }
        h.push_str("</main>\n</body>\n</html>\n");
        h
    }

    fn block(&self, h: &mut String, b: &Block) {
        match b {
            Block::Paragraph(t) => {
                let _ = writeln!(h, "<p>{}</p>", escape(t));
            }
            Block::Sentences(v) => {
                h.push_str("<ul class=\"sentences\">");
                for s in v {
                    let _ = write!(h, "<li>{}</li>", escape(s));
                }
                h.push_str("</ul>\n");
            }
            Block::Facts(v) => {
                h.push_str("<dl class=\"facts\">");
                for f in v {
                    let _ = write!(
                        h,
                        "<div><dt>{}</dt><dd data-figure=\"{}\">{}</dd></div>",
                        escape(&f.label),
                        escape(&f.key),
                        escape(&f.value)
                    );
                }
                h.push_str("</dl>\n");
            }
            Block::Table(t) => self.table(h, t),
            Block::Chart { svg, table } => {
                h.push_str("<figure>");
                h.push_str(svg);
                h.push_str("</figure>\n");
                if let Some(t) = table {
                    self.table(h, t);
                }
            }
            Block::Pre(t) => {
                let _ = writeln!(h, "<pre>{}</pre>", escape(t));
            }
            Block::Details { summary, blocks } => {
                let _ = writeln!(h, "<details><summary>{}</summary>", escape(summary));
                for b in blocks {
                    self.block(h, b);
                }
                h.push_str("</details>\n");
            }
            Block::Choice { label, parts } => {
                let _ = write!(h, "<div class=\"choice\"><p>{}</p><ul>", escape(label));
                for (id, text, _) in parts {
                    let _ = write!(
                        h,
                        "<li><a href=\"#{}\">{}</a></li>",
                        escape(id),
                        escape(text)
                    );
                }
                h.push_str("</ul>\n");
                for (id, _, blocks) in parts {
                    let _ = writeln!(h, "<div class=\"part\" id=\"{}\">", escape(id));
                    for b in blocks {
                        self.block(h, b);
                    }
                    h.push_str("</div>\n");
                }
                h.push_str("</div>\n");
            }
            Block::Columns(cols) => {
                h.push_str("<div class=\"cols\">");
                for (title, blocks) in cols {
                    let _ = writeln!(h, "<div><h3>{}</h3>", escape(title));
                    for b in blocks {
                        self.block(h, b);
                    }
                    h.push_str("</div>");
                }
                h.push_str("</div>\n");
            }
        }
    }

    fn table(&self, h: &mut String, t: &Table) {
        h.push_str("<div class=\"scroll\"><table>");
        if !t.caption.is_empty() {
            let _ = write!(h, "<caption>{}</caption>", escape(&t.caption));
        }
        h.push_str("<thead><tr>");
        for c in &t.head {
            let _ = write!(h, "<th scope=\"col\">{}</th>", escape(c));
        }
        h.push_str("</tr></thead><tbody>\n");
        for r in &t.rows {
            let mut class: Vec<String> = Vec::new();
            if let Some(i) = r
                .department
                .as_ref()
                .and_then(|d| self.departments.iter().position(|x| x == d))
            {
                class.push(format!("dep-{i}"));
            }
            if r.total {
                class.push("total".to_owned());
            }
            h.push_str("<tr");
            if !class.is_empty() {
                let _ = write!(h, " class=\"{}\"", class.join(" "));
            }
            if let Some(k) = &r.key {
                let _ = write!(h, " data-row=\"{}\"", escape(k));
            }
            h.push('>');
            for c in &r.cells {
                h.push_str("<td");
                if numeric(&c.text) {
                    h.push_str(" class=\"n\"");
                }
                if let Some(f) = &c.figure {
                    let _ = write!(h, " data-figure=\"{}\"", escape(f));
                }
                let _ = write!(h, ">{}</td>", escape(&c.text));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody></table></div>\n");
    }
}

/// Whether `s` reads as a figure (right-aligned): a digit first, after an optional sign.
fn numeric(s: &str) -> bool {
    let t = s.trim_start_matches(['-', '+', '−']);
    t.chars().next().is_some_and(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_a_department_hide_with_its_switch_and_text_is_escaped() {
        let mut p = Page::new("Bill <April>", "gpuquota meter");
        p.departments = vec!["research".into(), "vision".into()];
        let mut t = Table::new("lines", &["department", "total"]);
        t.push(
            Row::new(["vision", "12.00"])
                .of("vision")
                .keyed("vision|H200"),
        );
        t.push(Row::new([Cell::new("total"), Cell::figure("12.00", "bill-total")]).as_total());
        let mut s = Section::new("bill", "The bill");
        s.push(Block::Table(t));
        p.push(s);
        let h = p.render();
        assert!(h.contains("<title>Bill &lt;April&gt;</title>"));
        assert!(h.contains("body:has(#dep-1:not(:checked)) .dep-1{display:none}"));
        assert!(h.contains("<tr class=\"dep-1\" data-row=\"vision|H200\"><td>vision</td><td class=\"n\">12.00</td></tr>"));
        assert!(h.contains("<td class=\"n\" data-figure=\"bill-total\">12.00</td>"));
        assert!(!h.contains("<script"));
        assert!(!h.contains("http://") && !h.contains("https://"));
    }
}
