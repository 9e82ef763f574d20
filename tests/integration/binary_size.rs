//! The binary's size, kept honest: a test fails when the `codecrew` binary this test run
//! built grows past the bound of its profile. `cargo test` checks the debug profile's;
//! `cargo test --release --test integration binary_size` checks the bound a user's
//! `cargo install` meets, as CI's last step does on a release build of its own
//! (`.ci/binary-size`, which reads `RELEASE_BOUND` from this file). docs/PERFORMANCE.md
//! has the figures of each release.

/// The release binary (`cargo install`): 30.1 MB at the time of writing (issue 52).
const RELEASE_BOUND: u64 = 32_000_000;

/// The debug binary `cargo test` builds, what CI can check without a release build of
/// its own: 364 MB at the time of writing. It grows with the same dependencies.
const DEBUG_BOUND: u64 = 400_000_000;

#[test]
fn the_binary_stays_under_its_bound() {
    let binary = env!("CARGO_BIN_EXE_codecrew");
    let size = std::fs::metadata(binary).unwrap().len();
    let (profile, bound) = if cfg!(debug_assertions) {
        ("debug", DEBUG_BOUND)
    } else {
        ("release", RELEASE_BOUND)
    };
    assert!(
        size <= bound,
        "the {profile} binary {binary} is {size} bytes, over its bound of {bound}: find what \
         grew (docs/PERFORMANCE.md says how to measure each dependency's share) and trim \
         it, or raise the bound here and say why in docs/PERFORMANCE.md"
    );
}
