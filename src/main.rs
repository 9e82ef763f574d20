use clap::Parser;

fn main() {
    let cli = codecrew::cli::Cli::parse();
    println!("{cli:?}");
}
