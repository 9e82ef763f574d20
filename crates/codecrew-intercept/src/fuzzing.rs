//! The fuzzing oracle, one entry point for every fuzzer of the engine: the cargo-fuzz
//! target in `fuzz/` (libFuzzer, nightly) and the time-bounded run on the stable
//! toolchain in `tests/fuzz.rs`, which CI runs. Not part of the engine's API.

use crate::decode::Format;
use crate::{Interceptor, Item, ScannerLimits, Segment};

/// Arbitrary bytes through every decoder and the scanner, whole and in chunks.
///
/// The first byte picks the format, the envelope size limit and the chunk size; the rest
/// is the CLI's "output". Nothing may panic, and whatever the chunking the items must be
/// the same. Panics (the fuzzer's finding) when they are not.
pub fn decode_and_scan(data: &[u8]) {
    let Some((&selector, data)) = data.split_first() else {
        return;
    };
    let format = Format::ALL[usize::from(selector) % Format::ALL.len()];
    let limits = ScannerLimits {
        max_envelope_bytes: if selector & 0x80 != 0 { 64 } else { 1 << 20 },
        max_calls_per_message: 16,
    };
    let whole = run(format, &limits, data, data.len());
    let chunk = usize::from(selector >> 3 & 0x0f) + 1;
    let chunked = run(format, &limits, data, chunk);
    assert_eq!(
        whole, chunked,
        "chunking into {chunk}-byte pieces changed what {format:?} gives"
    );
}

fn run(format: Format, limits: &ScannerLimits, data: &[u8], chunk: usize) -> Vec<Item> {
    let mut interceptor = Interceptor::new(format, limits.clone());
    let mut out = Vec::new();
    for piece in data.chunks(chunk.max(1)) {
        interceptor.feed(piece, &mut out);
    }
    interceptor.finish(&mut out);
    merge_text(out)
}

/// Joins adjacent text segments, since chunking may split text differently.
fn merge_text(items: Vec<Item>) -> Vec<Item> {
    let mut merged: Vec<Item> = Vec::new();
    for item in items {
        match (merged.last_mut(), item) {
            (Some(Item::Segment(Segment::Text(last))), Item::Segment(Segment::Text(text))) => {
                last.push_str(&text)
            }
            (_, Item::Segment(Segment::Text(text))) if text.is_empty() => {}
            (_, item) => merged.push(item),
        }
    }
    merged
}
