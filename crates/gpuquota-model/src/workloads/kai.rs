//! KAI's pod grouper (placeholder; filled below).
use super::Warnings;
use crate::core::Pod;
use crate::import::Model;
use crate::import::Origin;
use crate::kai::PodGroup;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Default)]
pub(crate) struct Output {
    pub pod_groups: BTreeMap<String, (Option<Origin>, PodGroup)>,
    pub pods: BTreeMap<String, Pod>,
    pub used: BTreeSet<String>,
}

pub(crate) fn convert(_model: &Model, _w: &mut Warnings) -> Output {
    Output::default()
}
