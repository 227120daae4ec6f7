//! The `ferry` binary: everything is in the library; see `ferry::cli`.

fn main() -> std::process::ExitCode {
    ferry::cli::main()
}
