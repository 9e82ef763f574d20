//! The built-in tools, one per file. File tools resolve every path through
//! [`crate::path`]; what they share lives in `support`.

mod edit_file;
mod glob;
mod grep;
mod grep_sink;
mod help;
mod list_directory;
mod read_file;
mod refusals;
mod run_command;
pub(crate) mod support;
mod write_file;

use std::sync::Arc;

use super::Tool;

pub use edit_file::EditFile;
pub use glob::Glob;
pub use grep::Grep;
pub use help::{Help, HelpSource, NoCommands};
pub use list_directory::ListDirectory;
pub use read_file::ReadFile;
pub use run_command::RunCommand;
pub use write_file::WriteFile;

/// Every built-in tool; `help` explains the commands of `help`'s source.
pub fn all(help: Arc<dyn HelpSource>) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(Help::new(help)),
        Arc::new(ReadFile),
        Arc::new(WriteFile),
        Arc::new(EditFile),
        Arc::new(ListDirectory),
        Arc::new(Glob),
        Arc::new(Grep),
        Arc::new(RunCommand),
    ]
}
