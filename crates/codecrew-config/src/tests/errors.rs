//! Errors: each names file:line:column and says what to do.

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn unknown_keys_are_reported_with_a_suggestion() {
    let repo = Repo::new();
    let (path, message) = repo.user_error("[agents.mine]\nprovider = \"claude\"\nmodle = \"x\"\n");
    assert_reported(
        &message,
        &path,
        3,
        1,
        &[
            "unknown key `modle` in `agents.mine`",
            "did you mean `model`?",
        ],
    );
    let (path, message) = repo.user_error("[limits]\nmax_turn = 3\n");
    assert_reported(
        &message,
        &path,
        2,
        1,
        &["unknown key `max_turn`", "`max_turns`"],
    );
    let (path, message) = repo.user_error("colour = \"blue\"\n");
    assert_reported(
        &message,
        &path,
        1,
        1,
        &[
            "unknown key `colour` at the top level",
            "default_agent, agents",
        ],
    );
}

#[test]
fn wrong_types_say_what_was_expected() {
    let repo = Repo::new();
    let (path, message) = repo.user_error("[limits]\nmax_turns = \"8\"\n");
    assert_reported(
        &message,
        &path,
        2,
        13,
        &[
            "wrong value for `limits.max_turns`",
            "found string",
            "e.g. `max_turns = 8`",
        ],
    );
    let (path, message) =
        repo.user_error("[agents.mine]\nprovider = \"claude\"\ntools = \"grep\"\n");
    assert_reported(
        &message,
        &path,
        3,
        9,
        &["`agents.mine.tools`", "a list of built-in tool names"],
    );
    let (path, message) = repo.user_error("[permissions]\nallow_network = \"yes\"\n");
    assert_reported(&message, &path, 2, 17, &["true or false"]);
}

#[test]
fn an_unknown_provider_lists_the_valid_ones() {
    let repo = Repo::new();
    let (path, message) = repo.project_error("[agents.mine]\nprovider = \"openai\"\n");
    assert_reported(
        &message,
        &path,
        2,
        12,
        &[
            "unknown provider `openai`",
            &format!("valid providers: {}", ProviderKind::NAMES.join(", ")),
            &format!("use one of {};", ProviderKind::NAMES.join(", ")),
            "`command` runs any other CLI",
        ],
    );
}

#[test]
fn a_file_agent_without_provider_is_explained() {
    let repo = Repo::new();
    let (path, message) = repo.user_error("[agents.claude]\nmodel = \"opus\"\n");
    assert_reported(
        &message,
        &path,
        1,
        1,
        &[
            "agent `claude` has no `provider`",
            "add `provider = \"claude\"`",
            "replaces the built-in agent",
        ],
    );
    let (path, message) = repo.user_error("[agents.mine]\nmodel = \"x\"\n");
    assert_reported(
        &message,
        &path,
        1,
        1,
        &["agent `mine` has no `provider`", "provider = "],
    );
}

#[test]
fn default_agent_must_exist() {
    let repo = Repo::new();
    repo.write_user("");
    let (path, message) = repo.project_error("\n\ndefault_agent = \"claud\"\n");
    assert_reported(
        &message,
        &path,
        3,
        17,
        &["no agent `claud`", "did you mean `claude`?"],
    );
    let (path, message) = repo.project_error("default_agent = \"\"\n");
    assert_reported(&message, &path, 1, 17, &["default_agent is empty"]);
}

#[test]
fn command_providers_are_checked() {
    let repo = Repo::new();
    let (path, message) = repo.user_error("[agents.mine]\nprovider = \"command\"\n");
    assert_reported(
        &message,
        &path,
        1,
        9,
        &["no `command` table", "[agents.mine.command]"],
    );
    let (path, message) =
        repo.user_error("[agents.mine]\nprovider = \"command\"\ncommand = { argv = [] }\n");
    assert_reported(&message, &path, 3, 20, &["empty command.argv", "program"]);
    let (path, message) =
        repo.user_error("[agents.mine]\nprovider = \"command\"\ncommand = { argv = [\"\"] }\n");
    assert_reported(&message, &path, 3, 21, &["empty program name"]);
    let (path, message) = repo.user_error(
        "[agents.mine]\nprovider = \"command\"\n[agents.mine.command]\nargv = [\"llm\"]\nprompt = \"arg\"\n",
    );
    assert_reported(
        &message,
        &path,
        5,
        10,
        &["prompt = \"arg\" but no `{prompt}`", "\"{prompt}\""],
    );
    let (path, message) = repo.user_error(
        "[agents.mine]\nprovider = \"command\"\n[agents.mine.command]\nargv = [\"llm\", \"--text={prompt}\"]\n",
    );
    assert_reported(
        &message,
        &path,
        4,
        16,
        &["sends the prompt on stdin", "prompt = \"arg\""],
    );
    let (path, message) =
        repo.user_error("[agents.mine]\nprovider = \"codex\"\ncommand = { argv = [\"x\"] }\n");
    assert_reported(
        &message,
        &path,
        3,
        1,
        &[
            "only provider = \"command\" uses",
            "remove the `command` table",
        ],
    );
    let (path, message) = repo.user_error(
        "[agents.mine]\nprovider = \"command\"\n[agents.mine.command]\nprompt = \"arg\"\n",
    );
    assert_reported(&message, &path, 3, 1, &["has no `argv`", "argv = ["]);
    let (path, message) = repo.user_error(
        "[agents.mine]\nprovider = \"command\"\ncommand = { argv = [\"x\"], output = \"json\" }\n",
    );
    assert_reported(
        &message,
        &path,
        3,
        36,
        &["unknown value `json`", "text, claude, gemini, codex"],
    );
}

#[test]
fn agent_ids_are_letters_digits_dash_and_underscore() {
    let repo = Repo::new();
    let (path, message) = repo.user_error("[agents.\"my agent\"]\nprovider = \"claude\"\n");
    assert_reported(&message, &path, 1, 9, &["agent id `my agent`", "rename it"]);
    let (path, message) = repo.user_error("[agents.\"a.b\"]\nprovider = \"claude\"\n");
    assert_reported(&message, &path, 1, 9, &["agent id `a.b`"]);
    repo.write_user("[agents.My_agent-2]\nprovider = \"claude\"\n");
    assert!(repo.load().is_ok());
}

#[test]
fn unknown_tools_are_all_reported() {
    let repo = Repo::new();
    let (path, message) = repo.user_error(
        "[agents.mine]\nprovider = \"claude\"\ntools = [\"read_file\", \"reed_file\", \"codecrew:grep\", \"web\"]\n",
    );
    assert_reported(
        &message,
        &path,
        3,
        23,
        &["unknown tool `reed_file`", "did you mean `read_file`?"],
    );
    assert_reported(
        &message,
        &path,
        3,
        36,
        &[
            "unknown tool `codecrew:grep`",
            "write `grep`, without the prefix",
        ],
    );
    assert_reported(
        &message,
        &path,
        3,
        53,
        &[
            "unknown tool `web`",
            "known tools: edit_file, glob, grep, help",
        ],
    );
}

#[test]
fn permission_rules_are_checked() {
    let repo = Repo::new();
    let (path, message) = repo.project_error(
        "[permissions]\ndeny = [\"read_file(secrets/**)\", \"raed_file(x)\", \"run_command(\", \"mcp__server__tool\"]\n",
    );
    assert_reported(
        &message,
        &path,
        2,
        34,
        &[
            "names unknown tool `raed_file`",
            "did you mean `read_file`?",
        ],
    );
    assert_reported(
        &message,
        &path,
        2,
        50,
        &["`run_command(` is malformed", "`tool(pattern)`"],
    );
    assert_eq!(message.matches("hint:").count(), 2, "{message}");
    let (path, message) = repo.project_error("[permissions]\npass_env = [\"OK_1\", \"1BAD\"]\n");
    assert_reported(
        &message,
        &path,
        2,
        21,
        &["`1BAD` is not an environment variable name"],
    );
}

#[test]
fn limits_must_be_positive() {
    let repo = Repo::new();
    let (path, message) = repo.user_error("[limits]\nmax_turns = 0\nturn_timeout_secs = 0\n");
    assert_reported(
        &message,
        &path,
        2,
        13,
        &["limits.max_turns must be positive", "max_turns = 8"],
    );
    assert_reported(
        &message,
        &path,
        3,
        21,
        &["limits.turn_timeout_secs must be positive"],
    );
    let (path, message) = repo.user_error("[limits]\nmax_calls_per_message = -4\n");
    assert_reported(
        &message,
        &path,
        2,
        25,
        &["found integer `-4`", "a positive integer"],
    );
}

#[test]
fn a_project_cannot_trust_itself() {
    let repo = Repo::new();
    let (path, message) =
        repo.project_error("default_agent = \"claude\"\ntrusted_projects = [\"/\"]\n");
    assert_reported(
        &message,
        &path,
        2,
        1,
        &[
            "trusted_projects cannot be set in a project file",
            "user config file",
        ],
    );
    let (path, message) = repo.user_error("trusted_projects = [\"/ok\", \"~/src\"]\n");
    assert_reported(
        &message,
        &path,
        1,
        28,
        &["`~/src` is not an absolute path", "not expanded"],
    );
}

#[test]
fn only_the_user_names_the_mcp_servers_token() {
    let repo = Repo::new();
    let (path, message) = repo.project_error(
        "default_agent = \"claude\"\n[mcp_server]\ntoken = \"known-to-the-checkout\"\n",
    );
    assert_reported(
        &message,
        &path,
        2,
        2,
        &[
            "mcp_server cannot be set in a project file",
            "user config file",
        ],
    );
    std::fs::remove_file(path).unwrap();
    repo.write_user("[mcp_server]\ntoken = \"the-users-own-token-123\"\n");
    let loaded = repo.load().unwrap();
    assert_eq!(loaded.mcp_token.as_deref(), Some("the-users-own-token-123"));
}

#[test]
fn only_the_user_says_whether_runs_are_kept() {
    let repo = Repo::new();
    assert!(
        repo.load().unwrap().logs_enabled,
        "kept unless the user says otherwise"
    );
    let (path, message) =
        repo.project_error("default_agent = \"claude\"\n[logs]\nenabled = true\n");
    assert_reported(
        &message,
        &path,
        2,
        2,
        &["logs cannot be set in a project file", "user config file"],
    );
    std::fs::remove_file(path).unwrap();
    repo.write_user("[logs]\nenabled = false\n");
    assert!(!repo.load().unwrap().logs_enabled);
}

#[test]
fn syntax_errors_point_at_the_place() {
    let repo = Repo::new();
    let (path, message) = repo.project_error("[agents.mine]\nprovider = \"claude\n");
    assert_reported(&message, &path, 2, 19, &["not valid TOML"]);
    let (path, message) = repo.project_error("[agents.mine\nprovider = \"claude\"\n");
    assert_reported(&message, &path, 1, 13, &["not valid TOML"]);
    let (path, message) =
        repo.project_error("[agents.mine]\nprovider = \"claude\"\nprovider = \"gemini\"\n");
    assert_reported(&message, &path, 3, 1, &[]);
}

#[test]
fn errors_in_the_user_file_name_the_user_file() {
    let repo = Repo::new();
    repo.write_project("default_agent = \"claude\"\n");
    let (path, message) = repo.user_error("\n[limits]\nmax_turns = true\n");
    assert_reported(&message, &path, 3, 13, &["limits.max_turns"]);
    assert!(!message.contains(PROJECT_FILE), "{message}");
}

#[test]
fn unreadable_files_are_errors_not_panics() {
    let repo = Repo::new();
    std::fs::write(repo.user_file(), b"default_agent = \"\xff\"\n").unwrap();
    let error = repo.load().unwrap_err();
    assert!(matches!(error, ConfigError::Read { .. }), "{error}");
    assert!(error.to_string().contains("hint:"), "{error}");

    let repo = Repo::new();
    std::fs::create_dir(repo.user_file()).unwrap();
    let error = repo.load().unwrap_err();
    assert!(matches!(error, ConfigError::Read { .. }), "{error}");
}

#[test]
fn every_problem_in_a_file_is_reported_in_file_order() {
    let repo = Repo::new();
    let error = {
        repo.write_user(
            "[limits]\nmax_turns = 0\n\n[agents.\"x y\"]\nprovider = \"claude\"\ntools = [\"nope\"]\n",
        );
        repo.load().unwrap_err()
    };
    let lines: Vec<usize> = error.diagnostics().iter().map(|d| d.line).collect();
    assert_eq!(lines, [2, 4, 6]);
}

#[test]
fn an_effort_is_one_its_cli_knows() {
    let repo = Repo::new();
    let (path, message) =
        repo.user_error("[agents.claude]\nprovider = \"claude\"\neffort = \"huge\"\n");
    assert_reported(
        &message,
        &path,
        3,
        10,
        &[
            "agent `claude` has an effort its CLI does not know: \"huge\"",
            "one of low, medium, high, xhigh, max",
        ],
    );
    let (path, message) =
        repo.user_error("[agents.gemini]\nprovider = \"gemini\"\neffort = \"high\"\n");
    assert_reported(
        &message,
        &path,
        3,
        1,
        &["agent `gemini`'s CLI (gemini) has no reasoning-effort setting"],
    );
    // A checkout cannot reach the CLI's command line through the value: only a level
    // the CLI lists is passed.
    let (path, message) = repo.project_error(
        "[agents.claude]\nprovider = \"claude\"\neffort = \"high --dangerously-skip-permissions\"\n",
    );
    assert_reported(
        &message,
        &path,
        3,
        10,
        &["has an effort its CLI does not know"],
    );
    std::fs::remove_file(&path).unwrap();
    repo.write_user("[agents.codex]\nprovider = \"codex\"\neffort = \"minimal\"\n");
    let loaded = repo.load().unwrap();
    assert_eq!(
        loaded.config.agents["codex"].effort.as_deref(),
        Some("minimal")
    );
}
