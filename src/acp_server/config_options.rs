//! What the editor may choose in a session, as its config options: the agent a prompt
//! with no mention goes to, that agent's model and (where its CLI has one) its reasoning
//! effort, and the mode. The whole list is what
//! `session/new`, `session/load`, `session/resume` and every `session/set_config_option`
//! answer, and what a `config_option_update` carries when it changes otherwise.
//!
//! The mode is an option too, besides the legacy `session/set_mode`: an editor that
//! shows config options (Zed) shows no mode selector of its own once it has them.

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue,
    SessionConfigSelectOption, SessionMode, SessionModeState,
};

use codecrew_agents::Provider;
use codecrew_config::{AgentConfig, Config};
use codecrew_tools::Mode;

/// The option that picks the agent a prompt without a mention goes to.
pub const AGENT: &str = "agent";
/// The option that picks the chosen agent's model.
pub const MODEL: &str = "model";
/// The option that picks the chosen agent's reasoning effort, where its CLI has one.
pub const EFFORT: &str = "effort";
/// The option that picks the mode (`session/set_mode` does too).
pub const MODE: &str = "mode";
/// The model value of an agent whose config names no model: its CLI's own default.
pub const CLI_DEFAULT: &str = "default";

/// What one `session/set_config_option` chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Agent(String),
    /// A model of the chosen agent, as its option lists it.
    Model(String),
    /// An effort level of the chosen agent's CLI, or [`CLI_DEFAULT`].
    Effort(String),
    Mode(Mode),
}

impl Choice {
    /// The choice `option` = `value` names, or why it names none.
    pub fn of(option: &str, value: SessionConfigOptionValue) -> Result<Choice, String> {
        let SessionConfigOptionValue::ValueId { value } = value else {
            return Err(format!("`{option}` takes one of its values' ids"));
        };
        let value = value.0.to_string();
        match option {
            AGENT => Ok(Choice::Agent(value)),
            MODEL => Ok(Choice::Model(value)),
            EFFORT => Ok(Choice::Effort(value)),
            MODE => mode_named(&value)
                .map(Choice::Mode)
                .ok_or_else(|| format!("no mode {value:?}: query (read only) or execute")),
            other => Err(format!(
                "no option {other:?}: codecrew's sessions have `{AGENT}`, `{MODEL}`, \
                 `{EFFORT}` (where the agent's CLI has one) and `{MODE}`"
            )),
        }
    }
}

/// A session's choices as they stand.
pub struct Choices<'a> {
    pub config: &'a Config,
    /// The agent a prompt with no mention goes to.
    pub agent: &'a str,
    /// The model chosen for that agent, when the editor chose one other than its default.
    pub model: Option<&'a str>,
    pub mode: Mode,
}

impl Choices<'_> {
    /// Every option, the agent first.
    pub fn options(&self) -> Vec<SessionConfigOption> {
        let mut options = vec![self.agent_option()];
        if let Some(agent) = self.config.agents.get(self.agent) {
            options.push(self.model_option(agent));
            options.extend(self.effort_option(agent));
        }
        options.push(self.mode_option());
        options
    }

    fn agent_option(&self) -> SessionConfigOption {
        let agents: Vec<SessionConfigSelectOption> = self
            .config
            .agents
            .iter()
            .map(|(id, agent)| {
                SessionConfigSelectOption::new(id.clone(), format!("@{id}"))
                    .description(format!("{} CLI", agent.provider.name()))
            })
            .collect();
        SessionConfigOption::select(AGENT, "Agent", self.agent.to_owned(), agents).description(
            "Who answers a prompt that mentions no agent (@claude, @gemini:flash... in a \
             prompt choose for it)"
                .to_owned(),
        )
    }

    fn model_option(&self, agent: &AgentConfig) -> SessionConfigOption {
        let models = models(self.agent, agent);
        let current = self
            .model
            .map_or_else(|| default_model(agent).to_owned(), str::to_owned);
        let values = models
            .into_iter()
            .map(|(value, name)| SessionConfigSelectOption::new(value, name))
            .collect::<Vec<_>>();
        SessionConfigOption::select(MODEL, "Model", current, values)
            .category(SessionConfigOptionCategory::Model)
            .description(format!(
                "The model @{} runs when a prompt names none (@{}:haiku in a prompt names one)",
                self.agent, self.agent
            ))
    }

    /// The chosen agent's effort: its CLI's default, then the levels its CLI accepts;
    /// none for a CLI without such a setting.
    fn effort_option(&self, agent: &AgentConfig) -> Option<SessionConfigOption> {
        let levels = agent.provider.effort_levels();
        if levels.is_empty() {
            return None;
        }
        let mut values = vec![SessionConfigSelectOption::new(
            CLI_DEFAULT,
            "The CLI's default".to_owned(),
        )];
        values.extend(
            levels
                .iter()
                .map(|level| SessionConfigSelectOption::new(*level, (*level).to_owned())),
        );
        let current = agent.effort.as_deref().unwrap_or(CLI_DEFAULT).to_owned();
        Some(
            SessionConfigOption::select(EFFORT, "Effort", current, values)
                .category(SessionConfigOptionCategory::ThoughtLevel)
                .description(format!(
                    "How hard @{}'s model thinks ({}'s own setting)",
                    self.agent,
                    agent.provider.name()
                )),
        )
    }

    fn mode_option(&self) -> SessionConfigOption {
        let values = modes(self.mode)
            .available_modes
            .into_iter()
            .map(|mode| {
                let option = SessionConfigSelectOption::new(mode.id.0.to_string(), mode.name);
                match mode.description {
                    Some(description) => option.description(description),
                    None => option,
                }
            })
            .collect::<Vec<_>>();
        SessionConfigOption::select(MODE, "Mode", self.mode.name(), values)
            .category(SessionConfigOptionCategory::Mode)
            .description("What the agents may do".to_owned())
    }
}

/// The model values the editor offers for `agent`, each with its name: its default (the
/// model its config names, else its CLI's own), then the names its CLI resolves itself.
pub fn models(id: &str, agent: &AgentConfig) -> Vec<(String, String)> {
    let mut models = vec![match &agent.model {
        Some(model) => (model.clone(), format!("{model} (the agent's default)")),
        None => (CLI_DEFAULT.to_owned(), "The CLI's default".to_owned()),
    }];
    for alias in Provider::new(id, agent.clone()).model_aliases() {
        if models.iter().all(|(value, _)| value != alias) {
            models.push(((*alias).to_owned(), (*alias).to_owned()));
        }
    }
    models
}

/// The value of `agent`'s default model: the one its config names, else the CLI's.
pub fn default_model(agent: &AgentConfig) -> &str {
    agent.model.as_deref().unwrap_or(CLI_DEFAULT)
}

/// Query and execute, as the editor lists them.
pub fn modes(current: Mode) -> SessionModeState {
    SessionModeState::new(
        current.name(),
        vec![
            SessionMode::new("query", "Query").description(
                "Read only: the agents read and search the workspace; nothing is written"
                    .to_owned(),
            ),
            SessionMode::new("execute", "Execute").description(
                "The agents may write files and run commands, under codecrew's permission \
                 policy (what it would ask is asked here)"
                    .to_owned(),
            ),
        ],
    )
}

/// The mode a `session/set_mode` or the mode option names.
pub fn mode_named(name: &str) -> Option<Mode> {
    match name {
        "query" => Some(Mode::Query),
        "execute" => Some(Mode::Execute),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn listed(choices: &Choices<'_>) -> Value {
        serde_json::to_value(choices.options()).unwrap()
    }

    /// The model option lists the chosen agent's models and follows the agent; the mode
    /// is an option of category `mode`.
    #[test]
    fn the_options_follow_the_chosen_agent() {
        let config = Config::default();
        let claude = listed(&Choices {
            config: &config,
            agent: "claude",
            model: Some("haiku"),
            mode: Mode::Execute,
        });
        let ids: Vec<&str> = claude
            .as_array()
            .unwrap()
            .iter()
            .map(|option| option["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [AGENT, MODEL, EFFORT, MODE]);
        assert_eq!(claude[1]["category"], "model");
        assert_eq!(claude[1]["currentValue"], "haiku");
        let values: Vec<&str> = claude[1]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|value| value["value"].as_str().unwrap())
            .collect();
        assert!(
            values.contains(&"haiku") && values.contains(&"opus"),
            "{values:?}"
        );
        assert_eq!(claude[2]["category"], "thought_level");
        assert_eq!(claude[2]["currentValue"], json!(CLI_DEFAULT));
        let levels: Vec<&str> = claude[2]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|value| value["value"].as_str().unwrap())
            .collect();
        assert_eq!(
            levels,
            [CLI_DEFAULT, "low", "medium", "high", "xhigh", "max"]
        );
        assert_eq!(claude[3]["category"], "mode");
        assert_eq!(claude[3]["currentValue"], "execute");

        let codex = listed(&Choices {
            config: &config,
            agent: "codex",
            model: None,
            mode: Mode::Query,
        });
        assert_eq!(codex[1]["currentValue"], json!(CLI_DEFAULT));
        assert_eq!(codex[1]["options"].as_array().unwrap().len(), 1, "{codex}");
        // Gemini CLI has no effort setting: no option for it.
        let gemini = listed(&Choices {
            config: &config,
            agent: "gemini",
            model: None,
            mode: Mode::Query,
        });
        let ids: Vec<&str> = gemini
            .as_array()
            .unwrap()
            .iter()
            .map(|option| option["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [AGENT, MODEL, MODE]);
    }

    #[test]
    fn a_choice_names_its_option_and_a_good_value() {
        let value = |id: &str| SessionConfigOptionValue::value_id(id.to_owned());
        assert_eq!(
            Choice::of(MODE, value("execute")),
            Ok(Choice::Mode(Mode::Execute))
        );
        assert_eq!(
            Choice::of(MODEL, value("haiku")),
            Ok(Choice::Model("haiku".to_owned()))
        );
        assert!(
            Choice::of(MODE, value("nope"))
                .unwrap_err()
                .contains("query")
        );
        assert_eq!(
            Choice::of(EFFORT, value("high")),
            Ok(Choice::Effort("high".to_owned()))
        );
        assert!(
            Choice::of("temperature", value("high"))
                .unwrap_err()
                .contains("no option")
        );
        assert!(
            Choice::of(AGENT, SessionConfigOptionValue::boolean(true))
                .unwrap_err()
                .contains("values' ids")
        );
    }
}
