//! Plain-text tables: the one layout every engine renders its report's table with.
//!
//! A [`Table`] holds cells as the report's own strings (a table never parses a formatted
//! number back) and lays them out with [`comfy_table`]: columns two spaces apart, each as wide
//! as its widest cell, left- or right-aligned, no borders, no trailing spaces. A value is
//! never cut:
//!
//! - [`Width::Full`] (the default, and what a command prints when its output is not a
//!   terminal) gives every column its full width, however wide the table grows;
//! - [`Width::Fit`] keeps the table within that many columns by wrapping the widest text
//!   cells onto further lines of the same row, between words: it never drops a character and
//!   never splits a word or a number. A table whose longest words and numbers need more
//!   columns than that stays as wide as they need.
//!
//! ```
//! use gpuquota_model::text::{Table, Width};
//!
//! let mut t = Table::new(["QUEUE", "GPUS"]).right([1]);
//! t.row(["data-science", "8"]);
//! t.row(["batch", "18922Gi"]);
//! assert_eq!(
//!     t.render(Width::Full),
//!     "QUEUE            GPUS\ndata-science        8\nbatch         18922Gi\n"
//! );
//! // a narrow terminal wraps between words
//! t.row(["nightly batch jobs", "4"]);
//! let narrow = t.render(Width::Fit(21));
//! assert!(narrow.lines().all(|l| l.chars().count() <= 21), "{narrow}");
//! assert!(narrow.contains("nightly             4\nbatch jobs\n"), "{narrow}");
//! // and no narrower than its longest word and number (12 + 2 + 7): nothing is split
//! assert_eq!(t.render(Width::Fit(16)), narrow);
//! ```
//!
//! Lives in `gpuquota-model` (feature `text`, on by default) because every engine already
//! depends on this crate: one layout, one dependency edge, no extra package to publish.
//!
//! # Complexity
//! Rendering is O(cells · cell length), plus comfy-table's width search in [`Width::Fit`].

use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, TableComponent, presets};

/// How wide a rendered table may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Width {
    /// Every column as wide as its widest cell (for pipes, files and `--wide`).
    #[default]
    Full,
    /// At most this many columns: wide cells wrap onto more lines, nothing is cut.
    Fit(u16),
}

/// A table of text cells under a header row.
#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    right: Vec<usize>,
}

/// Every border and separator comfy-table could draw: a gpuquota table has none.
const NO_LINES: [TableComponent; 19] = [
    TableComponent::LeftBorder,
    TableComponent::RightBorder,
    TableComponent::TopBorder,
    TableComponent::BottomBorder,
    TableComponent::LeftHeaderIntersection,
    TableComponent::HeaderLines,
    TableComponent::MiddleHeaderIntersections,
    TableComponent::RightHeaderIntersection,
    TableComponent::VerticalLines,
    TableComponent::HorizontalLines,
    TableComponent::MiddleIntersections,
    TableComponent::LeftBorderIntersections,
    TableComponent::RightBorderIntersections,
    TableComponent::TopBorderIntersections,
    TableComponent::BottomBorderIntersections,
    TableComponent::TopLeftCorner,
    TableComponent::TopRightCorner,
    TableComponent::BottomLeftCorner,
    TableComponent::BottomRightCorner,
];

impl Table {
    /// A table with this header row; every column left-aligned.
    pub fn new<I, S>(header: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            right: Vec::new(),
        }
    }

    /// Right-aligns these columns (0-based), header included: numbers.
    #[must_use]
    pub fn right(mut self, columns: impl IntoIterator<Item = usize>) -> Self {
        self.right.extend(columns);
        self
    }

    /// Appends a row; missing cells are empty, extra cells are a column without header.
    pub fn row<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// True when no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as lines, each ending in `\n`, without trailing spaces.
    pub fn render(&self, width: Width) -> String {
        if let Width::Fit(w) = width {
            // a table that fits is printed as it is: only a too-wide one wraps
            let full = self.layout(Width::Full);
            if full.lines().all(|l| l.chars().count() <= usize::from(w)) {
                return full;
            }
        }
        self.layout(width)
    }

    fn layout(&self, width: Width) -> String {
        let mut t = comfy_table::Table::new();
        t.load_preset(presets::NOTHING);
        for c in NO_LINES {
            t.remove_style(c);
        }
        t.set_header(self.header.clone());
        for r in &self.rows {
            t.add_row(r.clone());
        }
        let columns = t.column_count();
        let chars = |s: &str| s.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        let padding = |i: usize| if i + 1 < columns { 2 } else { 0 };
        // Fit wraps text columns only, between words: a number (right-aligned) is never
        // split, and a text column keeps at least its header's width and its longest word's,
        // so no word is split either; a table too narrow for its words stays wider than asked.
        let floors: Vec<usize> = (0..columns)
            .map(|i| {
                let header = self.header.get(i).map_or(0, |h| chars(h));
                let cells = self.rows.iter().filter_map(|r| r.get(i));
                let floor = if self.right.contains(&i) {
                    cells.map(|c| chars(c)).fold(header, usize::max)
                } else {
                    cells
                        .flat_map(|c| c.split_whitespace())
                        .map(|w| w.chars().count())
                        .fold(header, usize::max)
                };
                floor + padding(i)
            })
            .collect();
        for (i, col) in t.column_iter_mut().enumerate() {
            col.set_padding((0, u16::try_from(padding(i)).unwrap_or(0)));
            if self.right.contains(&i) {
                col.set_cell_alignment(CellAlignment::Right);
            }
            // comfy-table's boundary counts the padding
            let floor = u16::try_from(floors.get(i).copied().unwrap_or(0)).unwrap_or(u16::MAX);
            col.set_constraint(ColumnConstraint::LowerBoundary(comfy_table::Width::Fixed(
                floor,
            )));
        }
        match width {
            Width::Full => {
                t.set_content_arrangement(ContentArrangement::Disabled);
            }
            Width::Fit(w) => {
                t.set_content_arrangement(ContentArrangement::Dynamic);
                t.set_width(w);
            }
        }
        let mut out = String::new();
        for line in t.lines() {
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Splits prose into lines of at most `width` characters at spaces; a word longer than
/// `width` keeps a line of its own, whole.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(["NODE", "NOMINAL", "MAX"]).right([1, 2]);
        t.row(["  assistant", "8", "12"]);
        t.row([
            "platform-with-a-rather-long-cohort-name (cohort)",
            "18922Gi",
            "18922Gi",
        ]);
        t
    }

    #[test]
    fn full_width_keeps_every_value_and_aligns() {
        let s = sample().render(Width::Full);
        let rows = [
            format!("{:<48}  {:>7}  {:>7}", "NODE", "NOMINAL", "MAX"),
            format!("{:<48}  {:>7}  {:>7}", "  assistant", "8", "12"),
            format!(
                "{:<48}  {:>7}  {:>7}",
                "platform-with-a-rather-long-cohort-name (cohort)", "18922Gi", "18922Gi"
            ),
        ];
        assert_eq!(s, format!("{}\n", rows.join("\n")));
    }

    #[test]
    fn fit_wraps_instead_of_cutting() {
        let s = sample().render(Width::Fit(40));
        // the longest word (39) and the numbers need 39 + 2 + 7 + 2 + 7 = 57 columns: the
        // table wraps "(cohort)" and stays that wide rather than split a word
        assert!(s.lines().all(|l| l.chars().count() <= 57), "{s}");
        assert!(
            s.contains("platform-with-a-rather-long-cohort-name "),
            "{s}"
        );
        assert!(s.contains("\n(cohort)\n"), "{s}");
        // every character of every cell is still printed
        let letters = |x: &str| x.chars().filter(|c| !c.is_whitespace()).count();
        assert_eq!(letters(&s), letters(&sample().render(Width::Full)), "{s}");
        assert_eq!(s.matches("18922Gi").count(), 2, "{s}");
        assert!(!s.contains('~'));
    }

    #[test]
    fn fit_never_splits_a_word_or_number() {
        let mut t = Table::new(["NAME", "WHY", "GPUS"]).right([2]);
        t.row([
            "data-science-fine-tuning",
            "waits for quota in cohort platform-wide-sharing",
            "1234567",
        ]);
        t.row(["b", "preempted by data-science-fine-tuning", "8"]);
        let words = |s: &str| -> Vec<String> {
            let mut w: Vec<String> = s.split_whitespace().map(str::to_owned).collect();
            w.sort();
            w
        };
        // the words need 24 + 2 + 24 + 2 + 7 = 59 columns: from there on none is split
        for width in [59, 60, 80] {
            let s = t.render(Width::Fit(width));
            // every word of every cell is a whole word of the output
            for cell in [
                "data-science-fine-tuning",
                "platform-wide-sharing",
                "1234567",
                "preempted",
            ] {
                assert!(words(&s).iter().any(|w| w == cell), "{width}: {s}");
            }
            assert_eq!(words(&s), words(&t.render(Width::Full)), "{width}: {s}");
        }
        // at 59 columns it fits by wrapping the WHY column (24 wide) between words: "waits for
        // quota in" / "cohort" / "platform-wide-sharing", "preempted by" /
        // "data-science-fine-tuning"
        let s = t.render(Width::Fit(59));
        assert!(s.lines().all(|l| l.chars().count() <= 59), "{s}");
        assert_eq!(s.lines().count(), 1 + 3 + 2, "{s}");
    }

    #[test]
    fn a_table_that_fits_is_not_wrapped() {
        let mut t = Table::new(["NODE", "INSTANCES (profile@start, * busy)"]);
        t.row(["rtx-b", "1g.24gb@0 1g.24gb@3 1g.24gb@6 1g.24gb@9"]);
        assert_eq!(t.render(Width::Fit(80)), t.render(Width::Full));
        assert_eq!(t.render(Width::Fit(80)).lines().count(), 2);
    }

    #[test]
    fn a_table_without_rows_prints_its_header() {
        assert_eq!(Table::new(["A", "B"]).render(Width::Full), "A  B\n");
    }

    #[test]
    fn wrap_breaks_at_spaces_and_keeps_long_words() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("abcdefgh x", 4), ["abcdefgh", "x"]);
        assert!(wrap("", 10).is_empty());
    }
}
