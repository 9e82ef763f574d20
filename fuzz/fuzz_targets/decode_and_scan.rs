//! Arbitrary bytes through every decoder and the scanner, in arbitrary chunks: nothing
//! may panic, and whatever the chunking, the segments must be the same. The oracle is
//! `codecrew_intercept::fuzzing::decode_and_scan`, which the stable, time-bounded run in
//! `crates/codecrew-intercept/tests/fuzz.rs` shares.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    codecrew_intercept::fuzzing::decode_and_scan(data);
});
