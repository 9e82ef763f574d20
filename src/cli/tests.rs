use clap::CommandFactory;

use super::*;

/// `intercept --from` offers exactly the engine's decoders, by their own names.
#[test]
fn from_offers_every_decoder_by_its_name() {
    let command = Cli::command();
    let intercept = command
        .find_subcommand("intercept")
        .expect("intercept is a command");
    let from = intercept
        .get_arguments()
        .find(|arg| arg.get_id() == "from")
        .expect("--from");
    let offered: Vec<String> = from
        .get_possible_values()
        .iter()
        .map(|value| value.get_name().to_owned())
        .collect();
    let decoders: Vec<String> = Format::ALL.iter().map(|f| f.name().to_owned()).collect();
    assert_eq!(offered, decoders);
    for format in Format::ALL {
        let parsed = Cli::try_parse_from(["codecrew", "intercept", "--from", format.name()])
            .expect("parses");
        let Command::Intercept(args) = parsed.command else {
            panic!("not intercept");
        };
        assert_eq!(args.from, format);
    }
}
