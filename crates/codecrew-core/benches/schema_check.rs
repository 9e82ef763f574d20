//! The check of a final answer against `--schema`, on answers of about 1 MiB.
//!
//! `cargo bench -p codecrew-core --bench schema_check` prints, best of 5, the time to
//! take the JSON document out of an answer (a ```json fence after some prose) and check
//! it: a list of 10,000 objects that fits, the same list with every object wrong (the
//! checker stops at its first 11 errors), and one 1 MiB string field. Compiling the
//! schema is measured apart: it happens once per run.
//!
//! Figures from this machine are in docs/PERFORMANCE.md.

use std::path::Path;
use std::time::{Duration, Instant};

use codecrew_core::schema::AnswerSchema;

const MIB: usize = 1024 * 1024;

fn fenced(document: &str) -> String {
    format!("Here is what I found.\n\n```json\n{document}\n```\n")
}

/// `{"items": [{"file": "src/module_N.rs", "risk": N, "why": "..."}, ...]}` of about 1 MiB.
fn list(risk: impl Fn(usize) -> String) -> String {
    let mut items = Vec::new();
    let mut size = 0;
    let mut n = 0;
    while size < MIB {
        let item = format!(
            r#"{{"file": "src/module_{n}.rs", "risk": {}, "why": "it parses untrusted input by hand"}}"#,
            risk(n)
        );
        size += item.len() + 2;
        items.push(item);
        n += 1;
    }
    fenced(&format!("{{\"items\": [{}]}}", items.join(", ")))
}

fn best_of(runs: usize, mut work: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let here = Path::new(".");
    let started = Instant::now();
    let multi = AnswerSchema::from_argument("file, risk int, why: a sentence", true, here);
    let compiled = started.elapsed();
    let Ok(multi) = multi else {
        eprintln!("the bench's schema does not compile");
        return;
    };
    let Ok(single) = AnswerSchema::from_argument("text, risk int", false, here) else {
        return;
    };
    let fits = list(|n| (n % 5).to_string());
    let wrong = list(|_| "\"high\"".to_owned());
    let big_string = fenced(&format!(
        "{{\"text\": \"{}\", \"risk\": 3}}",
        "x".repeat(MIB)
    ));
    println!("schema compiled once per run: {compiled:?}");
    for (name, schema, answer, should_fit) in [
        ("10,000 objects that fit", &multi, &fits, true),
        ("10,000 objects, every one wrong", &multi, &wrong, false),
        ("one 1 MiB string", &single, &big_string, true),
    ] {
        let time = best_of(5, || {
            let fitted = schema.check_answer(std::hint::black_box(answer)).is_ok();
            assert_eq!(fitted, should_fit, "{name}");
        });
        let mib = answer.len() as f64 / MIB as f64;
        let throughput = mib / time.as_secs_f64();
        println!("{name} ({mib:.2} MiB): {time:?}, {throughput:.0} MiB/s");
    }
}
