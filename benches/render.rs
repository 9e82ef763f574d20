//! What showing an answer costs at a terminal: the markdown renderer (pulldown-cmark per
//! block, syntect per code line) and the inert door, against passing the text through.
//!
//! `cargo bench --bench render` streams a 2 MB answer (prose, lists, a table and Rust
//! blocks, repeated) in pieces of 16 bytes, as a CLI's deltas arrive, through:
//! - `inert`: the console's stream filter alone (every answer at a pipe or `--raw`);
//! - `markdown`: the renderer with codecrew's styles (an answer at a terminal).
//!
//! It prints MB/s, the median of five rounds. Figures are in docs/PERFORMANCE.md.

use std::time::{Duration, Instant};

use codecrew::output::color::Palette;
use codecrew::output::console::{Inert, Text};
use codecrew::output::markdown::Markdown;

const BLOCK: &str = "## Step\n\nThe **answer** has `code`, a [link](https://example.com/x) and \
    prose long enough to wrap at the terminal's width more than once, as models write it.\n\n\
    - first point\n- second point with more words\n\n| Name | Size |\n|---|---:|\n| core | 12 |\n\n\
    ```rust\nfn main() {\n    let total: u32 = (1..10).map(|n| n * 2).sum();\n    println!(\"{total}\");\n}\n```\n\n";

fn answer(size: usize) -> String {
    let mut text = String::with_capacity(size + BLOCK.len());
    while text.len() < size {
        text.push_str(BLOCK);
    }
    text
}

fn pieces(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + 16).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(&text[start..end]);
        start = end;
    }
    pieces
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let text = answer(2 * 1024 * 1024);
    let pieces = pieces(&text);
    let megabytes = text.len() as f64 / (1024.0 * 1024.0);
    let mut shown = 0;
    let inert = median(
        (0..5)
            .map(|_| {
                let started = Instant::now();
                let mut stream = Inert::default();
                let mut out = Text::new();
                for piece in &pieces {
                    out.push_streamed(&mut stream, piece);
                }
                shown = out.as_str().len();
                started.elapsed()
            })
            .collect(),
    );
    let markdown = median(
        (0..5)
            .map(|_| {
                let started = Instant::now();
                let mut renderer = Markdown::new(Palette::ANSI, 100);
                let mut out = Text::new();
                for piece in &pieces {
                    out.append(&renderer.push(piece));
                }
                out.append(&renderer.finish());
                shown = shown.max(out.as_str().len());
                started.elapsed()
            })
            .collect(),
    );
    println!(
        "answer: {megabytes:.1} MB in {} pieces of 16 bytes ({shown} bytes shown at most)",
        pieces.len()
    );
    for (name, time) in [("inert", inert), ("markdown", markdown)] {
        println!(
            "{name:<9} {:>8.1} ms  {:>8.1} MB/s",
            time.as_secs_f64() * 1000.0,
            megabytes / time.as_secs_f64()
        );
    }
}
