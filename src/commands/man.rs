//! `codecrew man`: the manual page, generated from the clap definitions so it never drifts
//! from `--help`.
//!
//! On stdout it is one page: codecrew's own sections, then a COMMANDS section with every
//! command's synopsis, description and options. With `--dir` it is the usual set of pages,
//! one per command (`codecrew.1`, `codecrew-query.1`, `codecrew-tools-list.1`, ...).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::CommandFactory;
use clap_mangen::Man;
use codecrew::cli::{CommandLine, ManArgs};
use codecrew::output::console::{self, Text};

pub fn run(args: &ManArgs) -> anyhow::Result<ExitCode> {
    let mut out = console::stdout();
    match &args.dir {
        Some(dir) => {
            let mut written = String::new();
            for path in write_pages(dir)? {
                written.push_str(&format!("{}\n", path.display()));
            }
            out.show(&Text::plain(&written))?;
        }
        // roff, for `man` to read.
        None => out.exact(&page()?)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The whole CLI as it is documented: no `help` subcommand (`--help` is on every command).
fn documented() -> clap::Command {
    let mut root = CommandLine::command().disable_help_subcommand(true);
    root.build();
    root
}

/// The footer's "source" for every page: subcommands have no version of their own.
fn source() -> String {
    format!("codecrew {}", env!("CARGO_PKG_VERSION"))
}

/// One page for codecrew and every command.
pub fn page() -> std::io::Result<Vec<u8>> {
    let root = documented();
    let man = Man::new(root.clone()).source(source());
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    // In place of clap_mangen's list, which points at one page per command.
    writeln!(page, ".SH COMMANDS")?;
    for command in root.get_subcommands().filter(|c| !c.is_hide_set()) {
        command_section(command, &mut page)?;
    }
    man.render_extra_section(&mut page)?;
    man.render_version_section(&mut page)?;
    Ok(without_repeated_preamble(&page))
}

/// clap_mangen opens every section it renders with the same two-line preamble (it
/// defines the `Aq` string); a page needs it once, at the top.
fn without_repeated_preamble(page: &[u8]) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut out = Vec::with_capacity(page.len());
    for line in page.split_inclusive(|byte| *byte == b'\n') {
        let preamble = line.starts_with(b".ie \\n(.g .ds Aq") || line.starts_with(b".el .ds Aq");
        if preamble && seen.contains(&line) {
            continue;
        }
        if preamble {
            seen.push(line);
        }
        out.extend_from_slice(line);
    }
    out
}

/// One command (and, after it, its subcommands) as a `.SS` subsection: the sections
/// clap_mangen renders for the command's own page, each heading turned into a paragraph
/// break. The global options and `--help` are left to the page's OPTIONS section.
fn command_section(command: &clap::Command, page: &mut Vec<u8>) -> std::io::Result<()> {
    let own_options = command.clone().mut_args(|arg| {
        let shared = arg.is_global_set() || arg.get_id() == "help";
        arg.hide(shared)
    });
    let has_options = own_options.get_arguments().any(|arg| !arg.is_hide_set());
    let man = Man::new(own_options);
    let mut body = Vec::new();
    man.render_synopsis_section(&mut body)?;
    man.render_description_section(&mut body)?;
    if has_options {
        man.render_options_section(&mut body)?;
    }
    if command.get_after_help().is_some() || command.get_after_long_help().is_some() {
        man.render_extra_section(&mut body)?;
    }
    let name = command.get_bin_name().unwrap_or(command.get_name());
    writeln!(page, ".SS \"{}\"", name.replace('"', ""))?;
    // roff escapes a leading dot in text, so a line that starts with `.SH` is a heading.
    for line in body.split_inclusive(|byte| *byte == b'\n') {
        if line.starts_with(b".SH") {
            page.extend_from_slice(b".PP\n");
        } else {
            page.extend_from_slice(line);
        }
    }
    for sub in command.get_subcommands().filter(|c| !c.is_hide_set()) {
        command_section(sub, page)?;
    }
    Ok(())
}

/// One page per command in `dir` (created if needed); the paths written.
fn write_pages(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot create the folder {} for the manual pages (give --dir one you can write to)",
            dir.display()
        )
    })?;
    let mut written = Vec::new();
    let mut pending = vec![documented()];
    while let Some(command) = pending.pop() {
        pending.extend(
            command
                .get_subcommands()
                .filter(|c| !c.is_hide_set())
                .cloned(),
        );
        let path = Man::new(command)
            .source(source())
            .generate_to(dir)
            .with_context(|| format!("cannot write a manual page into {}", dir.display()))?;
        written.push(path);
    }
    written.sort();
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_documents_every_command_once() {
        let page = String::from_utf8(page().unwrap()).unwrap();
        assert!(page.contains("\n.TH codecrew 1 "), "{page}");
        assert_eq!(page.matches(".TH ").count(), 1, "{page}");
        assert_eq!(page.matches(".ds Aq").count(), 2, "{page}");
        for command in [
            "query",
            "execute",
            "tools list",
            "tools call",
            "agents list",
            "man",
        ] {
            assert!(
                page.contains(&format!(".SS \"codecrew {command}\"")),
                "no section for {command}"
            );
        }
        assert!(!page.contains(".SS \"codecrew help\""));
    }
}
