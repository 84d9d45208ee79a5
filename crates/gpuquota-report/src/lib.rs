//! One self-contained HTML page per gpuquota run, for the people a platform team reports
//! to: a simulated month (Kueue or ResourceQuota: [`sim`]; KAI: [`kai`]), a what-if
//! comparison ([`diff`]), a policy sweep ([`sweep`]), a metering bill ([`meter`]) and the
//! seed platform's default run ([`seed`]); plus the Grafana dashboard of the metering
//! metrics ([`grafana`]).
//!
//! Every page is rendered from the typed reports the JSON is written from (never from
//! printed text), so each figure on the page is the JSON's. The page is one file that
//! needs nothing else: styles inline, no script, no external resource (a
//! `Content-Security-Policy` forbids any), readable on a phone (one column; tables scroll
//! sideways; charts scale to the width) and printable (the department switches and the
//! section links are left out).
//!
//! - Charts are the simulator's pictures ([`gpuquota_sim::chart`]: one palette, the same
//!   as the `--plot` SVGs), inlined with a `<title>` and a `<desc>` as their text
//!   alternative, and each is followed by the table of the figures it draws. Bars carry
//!   their count as text and as a hover `<title>`; no figure is told by colour alone.
//! - Department switches (checkboxes, CSS only) hide and show a department's rows in every
//!   table of the page.
//! - Pages stay aggregated: per-day and per-bucket series, the ten longest waiters, never
//!   one element per workload, so a month of 100,000 workloads gives a page of the same
//!   size as one of 1,000.
//! - Key figures carry a `data-figure` name (`bill-total`, `line-total`,
//!   `preemption-count`, `preemptions`, `bill`; prefixed `a:`/`b:` for the two runs of a
//!   diff, whose per-department cells are `a:department-METRIC`; `kueue:`,
//!   `resourcequota:`, `kai:` on the seed page; `runN:preemptions`, `runN:cost` on a
//!   sweep's; `fidelity-…` in the fidelity section of a recorded month) and table rows a
//!   `data-row` key (`department|card type` for bill lines), so a reader's tools and the
//!   tests find them.
//!
//! A new kind of report builds a [`Page`] of [`Section`]s of [`Block`]s (sentences, key
//! figures, tables, charts with their table, collapsed parts, columns side by side) and
//! calls [`Page::render`]; the building blocks of the bill and the budgets are public
//! ([`bill_table`]).

mod advise;
mod fidelity;
pub mod grafana;
mod month;
mod others;
mod page;

pub use advise::{WhatIf, advise};
pub use month::{WAIT_BUCKETS, bill_table, sections as month_sections, wait_histogram};
pub use others::{diff, diff_runs, kai, meter, seed, sim, sweep};
pub use page::{Block, Cell, Fact, Page, Row, Section, Table};
