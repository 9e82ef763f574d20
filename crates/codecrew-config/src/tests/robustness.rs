//! Robustness: any mix of valid and broken fragments gives errors, never a panic.

use super::*;

const FRAGMENTS: &[&str] = &[
    "[agents.a]\n",
    "[agents.\"b c\"]\n",
    "[agents.a.command]\n",
    "[permissions]\n",
    "[limits]\n",
    "provider = \"command\"\n",
    "provider = \"x\"\n",
    "argv = []\n",
    "argv = [\"{prompt}\"]\n",
    "prompt = \"arg\"\n",
    "tools = [\"nope\", \"grep\"]\n",
    "allow = [\"x(\", \"grep\"]\n",
    "max_turns = 0\n",
    "default_agent = \"a\"\n",
    "trusted_projects = [\"rel\"]\n",
    "é = \"\n",
    "= \n",
    "[[agents]]\n",
    "\"\"\"\n",
    "\r\n",
    "\t",
];

proptest! {
    #[test]
    fn no_input_makes_loading_panic(
        picks in proptest::collection::vec(0..FRAGMENTS.len(), 0..12),
        noise in ".{0,20}",
    ) {
        let mut text: String = picks.iter().map(|&i| FRAGMENTS[i]).collect();
        text.push_str(&noise);
        for kind in [FileKind::User, FileKind::Project] {
            if let Ok(file) = parse(Path::new("f.toml"), text.clone(), kind) {
                for diagnostic in super::validate::file(&file) {
                    prop_assert!(diagnostic.line >= 1 && diagnostic.column >= 1);
                    let _ = diagnostic.to_string();
                }
            } else if let Err(diagnostic) = parse(Path::new("f.toml"), text.clone(), kind) {
                prop_assert!(diagnostic.line >= 1 && diagnostic.column >= 1);
                prop_assert!(!diagnostic.hint.is_empty());
            }
        }
    }
}
