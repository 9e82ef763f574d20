//! Placeholder scanner: passes all text through (the real one lands next).

use super::Segment;

#[derive(Debug, Clone)]
pub struct ScannerLimits;

#[derive(Debug, Default)]
pub struct Scanner;

impl Scanner {
    pub fn push(&mut self, chunk: &str, out: &mut Vec<Segment>) {
        out.push(Segment::Text(chunk.to_owned()));
    }
    pub fn end_message(&mut self, _out: &mut Vec<Segment>) {}
    pub fn finish(&mut self, _out: &mut Vec<Segment>) {}
}
