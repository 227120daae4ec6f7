//! The `ferry` binary: the command line (src/cli/) over the library.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
