//! `codecrew init`: writes the commented starter `codecrew.toml` in the workspace.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use codecrew::cli::InitArgs;
use codecrew::output::console::{self, Text};
use codecrew_config::starter::STARTER;
use codecrew_config::{PROJECT_FILE, find_project_file};

use super::EXIT_USAGE;

pub fn run(args: &InitArgs, workspace: &Path) -> anyhow::Result<ExitCode> {
    let path = workspace.join(PROJECT_FILE);
    if path.symlink_metadata().is_ok() && !args.force {
        return Ok(refuse(&path));
    }
    // A file higher up in the repository that this one will take the place of.
    let shadowed = find_project_file(workspace).filter(|found| *found != path);

    let mut file = tempfile::NamedTempFile::new_in(workspace)
        .with_context(|| format!("cannot write in {}", workspace.display()))?;
    file.write_all(STARTER.as_bytes())
        .and_then(|()| file.flush())
        .with_context(|| format!("cannot write {}", path.display()))?;
    let persisted = if args.force {
        file.persist(&path)
    } else {
        file.persist_noclobber(&path)
    };
    if let Err(error) = persisted {
        if !args.force && path.symlink_metadata().is_ok() {
            return Ok(refuse(&path));
        }
        return Err(error.error).with_context(|| format!("cannot write {}", path.display()));
    }

    let mut out = String::new();
    writeln!(out, "Wrote {}", path.display())?;
    if let Some(other) = shadowed {
        writeln!(
            out,
            "It takes the place of {} for this directory and below.",
            other.display()
        )?;
    }
    writeln!(
        out,
        "Edit it, then check the result with `codecrew agents list`."
    )?;
    console::stdout().show(&Text::plain(&out))?;
    Ok(ExitCode::SUCCESS)
}

fn refuse(path: &Path) -> ExitCode {
    console::error(format_args!(
        "{} already exists; edit it, or run `codecrew init --force` to replace it with the \
         starter file",
        path.display()
    ));
    ExitCode::from(EXIT_USAGE)
}
