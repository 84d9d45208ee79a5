//! Check functions for the fuzz target and the arbtest smoke test.

use crate::check::check_invariants;
use crate::cycle::Scheduler;
use crate::world::World;

/// Imports arbitrary text as manifests; if they build, schedules them (classically, then
/// with fair sharing) and panics if the engine panics or an invariant the engine promises is
/// broken.
pub fn check_schedule(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(imported) = gpuquota_model::import_str("fuzz.yaml", text) else {
        return;
    };
    // The validated build must not panic either; the engine then runs on what its own checks
    // accept, a superset of what the validator lets through, so the fuzzer reaches it more.
    let _ = World::build(&imported.model);
    let Ok(world) = World::build_unvalidated(&imported.model) else {
        return;
    };
    let mut s = Scheduler::new(std::sync::Arc::new(world.clone()));
    let before = check_invariants(&world, s.reservations()).is_ok();
    s.run(Some(8));
    if before {
        assert_eq!(check_invariants(&world, s.reservations()), Ok(()));
    }
    let _ = crate::report::ScheduleReport::from_scheduler(&world, &s);
    let _ = crate::report::QuotasReport::build(&world);
    // the same under fair sharing (and admission fair sharing when configured)
    let config = imported.model.configuration.as_ref();
    if let Ok(settings) = gpuquota_fairshare::config::settings_from_configuration(config, true)
        && let Ok(policy) = crate::fair::FairSharing::new(&world, &imported.model, settings)
    {
        let mut f = Scheduler::with_policy(std::sync::Arc::new(world.clone()), policy);
        f.run(Some(8));
        if before {
            assert_eq!(check_invariants(&world, f.reservations()), Ok(()));
        }
        let _ = crate::report::ScheduleReport::from_scheduler(&world, &f);
    }
}
