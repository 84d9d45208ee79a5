//! Checks shared by the fuzz target and the arbtest smoke test (feature `fuzzing`).
//!
//! [`check_plan_input`] takes arbitrary bytes, parses them as a planning input and, when they
//! form a valid problem, plans it and checks the result with an independent checker: every
//! planned layout is valid, busy instances are kept as the mode demands, and the reported
//! figures match the layouts. [`check_structured`] builds valid-shaped inputs from arbitrary
//! data so the planner itself is exercised, not only the parser.

use arbitrary::{Arbitrary, Unstructured};

use crate::catalogue::Catalogue;
use crate::input::{DemandSpec, GpuSpec, InstanceSpec, Mode, PlanRequest, WeightPolicy};
use crate::plan::{PlanOptions, plan};

/// Parsing and planning never panic; a plan passes [`crate::Plan::verify`]'s checker.
pub fn check_plan_input(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // mig-parted configs and node labels: validation and expansion never panic.
    if let Ok(docs) = crate::documents::read_documents(text) {
        for cfg in &docs.configs {
            let _ = crate::parted::validate_config(Catalogue::builtin(), cfg);
        }
    }
    let Ok((req, _, _)) = PlanRequest::from_yaml(text) else {
        return;
    };
    run(&req);
}

/// Builds a small valid-shaped request from arbitrary bytes and checks the plan.
pub fn check_structured(data: &[u8]) {
    let mut u = Unstructured::new(data);
    if let Ok(req) = structured(&mut u) {
        run(&req);
    }
}

fn structured(u: &mut Unstructured<'_>) -> arbitrary::Result<PlanRequest> {
    let c = Catalogue::builtin();
    let models = c.models();
    let ngpus = u.int_in_range(0..=3)?;
    let mut gpus = Vec::new();
    for index in 0..ngpus {
        let m = &models[u.choose_index(models.len())?];
        let instances = if bool::arbitrary(u)? {
            None
        } else {
            let layouts = m.layouts();
            let l = &layouts[u.choose_index(layouts.len())?];
            let mut v = Vec::new();
            for i in l.instances() {
                let p = &m.profiles()[usize::from(i.profile.0)];
                v.push(InstanceSpec {
                    profile: p.name().into(),
                    start: i.start,
                    busy: bool::arbitrary(u)?,
                });
            }
            Some(v)
        };
        gpus.push(GpuSpec {
            node: format!("n{}", u.int_in_range(0..=1)?),
            index,
            model: m.name().into(),
            instances,
            busy: false,
        });
    }
    let mut demand = Vec::new();
    for _ in 0..u.int_in_range(0..=3)? {
        let m = &models[u.choose_index(models.len())?];
        if m.profiles().is_empty() {
            continue;
        }
        let p = &m.profiles()[u.choose_index(m.profiles().len())?];
        let resource = p.resource_name().to_owned();
        if demand
            .iter()
            .any(|d: &DemandSpec| d.resource.as_deref() == Some(resource.as_str()))
        {
            continue;
        }
        demand.push(DemandSpec {
            resource: Some(resource),
            profile: None,
            count: u.int_in_range(0..=5)?,
            weight: None,
        });
    }
    Ok(PlanRequest {
        mode: if bool::arbitrary(u)? {
            Mode::KeepBusyGpus
        } else {
            Mode::PinBusyInstances
        },
        weights: *u.choose(&[
            WeightPolicy::Count,
            WeightPolicy::ComputeSlices,
            WeightPolicy::MemorySlices,
        ])?,
        gpus,
        demand,
        ..PlanRequest::default()
    })
}

fn run(req: &PlanRequest) {
    let c = Catalogue::builtin();
    let Ok(problem) = req.resolve(c) else {
        return;
    };
    if problem.gpus.len() > 4 || problem.demand.iter().any(|d| d.count > 64) {
        return;
    }
    // The per-GPU programme, then the class branch and bound (budget 0) and the fast path.
    for options in [
        PlanOptions::default().with_budget(2_000_000),
        PlanOptions::default().with_budget(0),
        PlanOptions::default().with_fast(true),
    ] {
        if let Ok(p) = plan(&problem, &options)
            && let Err(e) = crate::verify::verify(&problem, &p)
        {
            panic!("invalid plan: {e:?}\n{p:?}");
        }
    }
}
