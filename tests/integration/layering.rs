//! The workspace's layering rule, checked on the manifests: each crate depends only on the
//! crates below it, and the interception engine on nothing that runs (no async runtime,
//! no processes). Cargo refuses a cycle, but not an engine that starts importing the
//! policy, or a policy that starts importing the engine's callers' runtime.

use std::path::Path;

/// The layers, lowest first, and what each may use besides the layers below it.
const LAYERS: [&str; 4] = [
    "codecrew-intercept",
    "codecrew-policy",
    "codecrew-tools",
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
