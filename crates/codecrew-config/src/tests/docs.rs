//! docs/CONFIG.md: its examples load and it describes every key.

use pretty_assertions::assert_eq;

use super::*;

/// The ```toml blocks of docs/CONFIG.md, in order.
fn doc_examples() -> Vec<String> {
    let doc = include_str!("../../../../docs/CONFIG.md");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```toml") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

#[test]
fn the_documented_example_loads() {
    let examples = doc_examples();
    assert_eq!(examples.len(), 2, "a user and a project example");
    let repo = Repo::new();
    repo.write_user(&examples[0]);
    repo.write_project(&examples[1]);
    let loaded = repo.load().unwrap();
    assert_eq!(loaded.config.default_agent, "fast");
    assert_eq!(
        loaded.config.agents["claude"].model.as_deref(),
        Some("opus")
    );
    assert_eq!(loaded.config.limits.turn_timeout_secs, 300);
    assert!(
        !loaded
            .config
            .permissions
            .allow
            .contains(&"write_file(src/**)".to_owned())
    );
    assert!(
        loaded
            .config
            .permissions
            .deny
            .contains(&"read_file(secrets/**)".to_owned())
    );
}

#[test]
fn the_docs_describe_every_key() {
    let doc = include_str!("../../../../docs/CONFIG.md");
    for (path, _, _) in super::keys::KEYS {
        let key = path.rsplit('.').next().unwrap();
        if key == "*" {
            continue;
        }
        assert!(
            doc.contains(&format!("| `{key}`"))
                || doc.contains(&format!("| `{key}."))
                || doc.contains(&format!("| `args.{key}`"))
                || doc.contains(&format!("| `exports.{key}`")),
            "docs/CONFIG.md has no table row for {path}"
        );
    }
}
