//! The `perfgate` binary: parse the command line, run the app, map the outcome to an exit code.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = perfgate::cli::Cli::parse();
    perfgate::app::main(cli)
}
