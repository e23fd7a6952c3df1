//! The `perfgate` binary: parse the command line, run the app, map the outcome to an exit code.

fn main() -> std::process::ExitCode {
    // A write past `ulimit -f` fails with an error instead of killing perfgate mid-write.
    perfgate::atomic::ignore_file_size_signal();
    let cli = match perfgate::cli::parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        // --help and --version exit 0; usage errors exit 2 (clap's own codes).
        Err(e) => e.exit(),
    };
    perfgate::app::main(cli)
}
