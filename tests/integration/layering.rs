//! The workspace's layering rule, checked on the manifests: each crate depends only on the
//! crates below it, and the interception engine on nothing that runs (no async runtime,
//! no processes). Cargo refuses a cycle, but not an engine that starts importing the
//! policy, or a policy that starts importing the engine's callers' runtime.

use std::path::Path;

/// The layers, lowest first, and what each may use besides the layers below it.
const LAYERS: [&str; 7] = [
    "codecrew-intercept",
    "codecrew-policy",
    "codecrew-tools",
    "codecrew-config",
    "codecrew-agents",
    "codecrew-core",
    "codecrew",
];

fn manifest(crate_name: &str) -> toml::Table {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = if crate_name == "codecrew" {
        root.join("Cargo.toml")
    } else {
        root.join("crates").join(crate_name).join("Cargo.toml")
    };
    std::fs::read_to_string(&path).unwrap().parse().unwrap()
}

fn dependencies(manifest: &toml::Table, section: &str) -> Vec<String> {
    manifest
        .get(section)
        .and_then(toml::Value::as_table)
        .map(|table| table.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    for (level, name) in LAYERS.iter().enumerate() {
        let manifest = manifest(name);
        for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
            for dependency in dependencies(&manifest, section) {
                if let Some(other) = LAYERS.iter().position(|layer| *layer == dependency) {
                    assert!(
                        other < level,
                        "{name} depends on {dependency} ({section}), a layer at or above it"
                    );
                }
            }
        }
    }
}

#[test]
fn the_interception_engine_runs_nothing() {
    let manifest = manifest("codecrew-intercept");
    let dependencies = dependencies(&manifest, "dependencies");
    for forbidden in ["tokio", "nix", "rmcp", "landlock", "ignore", "tempfile"] {
        assert!(
            !dependencies.iter().any(|d| d == forbidden),
            "codecrew-intercept depends on {forbidden}: it must stay bytes in, events out"
        );
    }
    assert!(
        !dependencies.iter().any(|d| d.starts_with("codecrew")),
        "codecrew-intercept is the lowest layer"
    );
}

#[test]
fn versions_are_set_once_for_the_workspace() {
    for name in LAYERS {
        let manifest = manifest(name);
        for section in ["dependencies", "dev-dependencies"] {
            let Some(table) = manifest.get(section).and_then(toml::Value::as_table) else {
                continue;
            };
            for (dependency, spec) in table {
                let inherited = spec
                    .as_table()
                    .and_then(|spec| spec.get("workspace"))
                    .and_then(toml::Value::as_bool)
                    == Some(true);
                assert!(
                    inherited,
                    "{name}: {dependency} ({section}) should be `.workspace = true`, its \
                     version set once in [workspace.dependencies]"
                );
            }
        }
    }
}

/// The binary crate's library modules, lowest first: a module may use the modules of its
/// own layer and those below it, never one above. Cargo cannot see inside a crate, so this
/// reads the source: every `crate::<module>` a file names (in a path or a `use`).
const MODULE_LAYERS: &[&[&str]] = &[
    &["output"],
    &["chat", "mcp_server"],
    // The editor's front end holds its sessions to the home rules, as the commands are.
    &["cli", "home", "acp_server"],
];

/// Inside `output/`, the palette is below the console that uses it.
const OUTPUT_LAYERS: &[&[&str]] = &[&["color"], &["console"]];

fn layer_of(layers: &[&[&str]], module: &str) -> Option<usize> {
    layers.iter().position(|layer| layer.contains(&module))
}

/// Every `.rs` file under `dir`, with its path.
fn sources(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                files.push((path, text));
            }
        }
    }
    files
}

/// The names that follow `prefix` in `text`: `crate::run::x` and `crate::{run, clis}`
/// both name `run`.
fn named_after(text: &str, prefix: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in text.match_indices(prefix) {
        let rest = &text[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(
                group
                    .split(',')
                    .map(|item| item.trim().split("::").next().unwrap_or("").to_owned()),
            );
        } else {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            names.push(rest[..end].to_owned());
        }
    }
    names.retain(|name| !name.is_empty());
    names
}

#[test]
fn the_binary_crates_modules_import_only_their_layer_and_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (path, text) in sources(&src) {
        let relative = path.strip_prefix(&src).unwrap();
        let module = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        // The binary's own files (main.rs, commands/) and lib.rs sit above every layer.
        let Some(own) = layer_of(MODULE_LAYERS, &module) else {
            continue;
        };
        for used in named_after(&text, "crate::") {
            if let Some(layer) = layer_of(MODULE_LAYERS, &used)
                && layer > own
            {
                violations.push(format!("{}: crate::{used}", relative.display()));
            }
        }
        if module == "output" {
            let part = relative
                .components()
                .nth(1)
                .map(|part| {
                    part.as_os_str()
                        .to_string_lossy()
                        .trim_end_matches(".rs")
                        .to_owned()
                })
                .unwrap_or_default();
            if let Some(own) = layer_of(OUTPUT_LAYERS, &part) {
                for used in named_after(&text, "crate::output::") {
                    if layer_of(OUTPUT_LAYERS, &used).is_some_and(|layer| layer > own) {
                        violations.push(format!("{}: crate::output::{used}", relative.display()));
                    }
                }
            }
        }
    }
    violations.sort();
    assert!(
        violations.is_empty(),
        "imports that run back up the layers ({MODULE_LAYERS:?}):\n{}",
        violations.join("\n")
    );
}

/// The check itself reads both spellings of an import.
#[test]
fn the_layer_check_reads_paths_and_groups() {
    assert_eq!(
        named_after("use crate::run::x; f(crate::{clis, config::Y})", "crate::"),
        ["run", "clis", "config"]
    );
}

/// The library crates, whose top-level modules must not import each other in a circle.
const LIBRARIES: [&str; 6] = [
    "codecrew-intercept",
    "codecrew-policy",
    "codecrew-tools",
    "codecrew-config",
    "codecrew-agents",
    "codecrew-core",
];

/// What a file says outside its comments and its unit tests: a doc link or a test's
/// import is no dependency of the module.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each top-level module of the crate at `src` and the top-level modules it names
/// (`crate::<module>`); lib.rs, the crate's door, is left out.
fn module_graph(src: &Path) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut graph: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let top = |relative: &Path| {
        relative
            .components()
            .next()
            .map(|part| {
                part.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_owned()
            })
            .unwrap_or_default()
    };
    let files = sources(src);
    for (path, _) in &files {
        let module = top(path.strip_prefix(src).unwrap());
        if module != "lib" {
            graph.entry(module).or_default();
        }
    }
    for (path, text) in &files {
        let relative = path.strip_prefix(src).unwrap();
        let module = top(relative);
        let in_tests = relative
            .components()
            .any(|part| part.as_os_str() == "tests" || part.as_os_str() == "tests.rs");
        if module == "lib" || in_tests {
            continue;
        }
        for used in named_after(&code_of(text), "crate::") {
            if used != module && graph.contains_key(&used) {
                let edges = graph.get_mut(&module).unwrap();
                if !edges.contains(&used) {
                    edges.push(used);
                }
            }
        }
    }
    graph
}

/// A circle of `graph`, as the modules along it (the first again at the end), if any.
fn circle(graph: &std::collections::BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    fn visit(
        graph: &std::collections::BTreeMap<String, Vec<String>>,
        module: &str,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut circle = path[at..].to_vec();
            circle.push(module.to_owned());
            return Some(circle);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_owned());
        for next in graph.get(module).into_iter().flatten() {
            if let Some(circle) = visit(graph, next, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(module.to_owned());
        None
    }
    let mut done = std::collections::BTreeSet::new();
    graph
        .keys()
        .find_map(|module| visit(graph, module, &mut Vec::new(), &mut done))
}

/// With no circle, every library crate's modules stand in layers (each imports only
/// modules below it in some order): a module that starts importing one that imports it
/// fails here, naming the circle.
#[test]
fn no_library_crates_modules_import_each_other_in_a_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in LIBRARIES {
        let graph = module_graph(&root.join("crates").join(name).join("src"));
        assert!(graph.len() > 1, "{name}: no modules read");
        if let Some(circle) = circle(&graph) {
            panic!("{name}: modules import each other: {}", circle.join(" -> "));
        }
    }
}

/// The circle check finds a circle where there is one, and none in layers.
#[test]
fn the_circle_check_finds_circles() {
    let graph = |edges: &[(&str, &[&str])]| {
        edges
            .iter()
            .map(|(module, uses)| {
                (
                    (*module).to_owned(),
                    uses.iter().map(|used| (*used).to_owned()).collect(),
                )
            })
            .collect()
    };
    let layered = graph(&[("a", &["b", "c"]), ("b", &["c"]), ("c", &[])]);
    assert_eq!(circle(&layered), None);
    let circular = graph(&[("a", &["b"]), ("b", &["c"]), ("c", &["a"])]);
    assert_eq!(
        circle(&circular),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    assert_eq!(
        code_of("use crate::x;\n// [`crate::y`]\n#[cfg(test)]\nmod tests { use crate::z; }"),
        "use crate::x;"
    );
}
