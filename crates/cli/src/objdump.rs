//! `kiln objdump FILE.cubin [--json]`: sections, symbols and EIATTR records of a cubin in a
//! listing equivalent to `cuobjdump -elf` (see `cubin::listing`), or as JSON.

use std::path::PathBuf;

use crate::Status;

/// Arguments of `kiln objdump`.
#[derive(clap::Args, Debug)]
pub struct ObjdumpArgs {
    /// The cubin to list.
    pub file: PathBuf,
    /// Print JSON instead of the cuobjdump-style listing.
    #[arg(long)]
    pub json: bool,
}

/// Exit status: 0 listed, 1 not a valid cubin, 2 the file could not be read.
pub fn run(args: &ObjdumpArgs) -> Status {
    let data = match std::fs::read(&args.file) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {}: {e}", args.file.display());
            return Status::Failure;
        }
    };
    let c = match cubin::read(&data) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {}: not a valid cubin: {e}", args.file.display());
            return Status::InputErrors;
        }
    };
    let text = if args.json {
        cubin::listing::json(&c)
    } else {
        cubin::listing::listing(&c)
    };
    use std::io::Write;
    // A closed pipe (`kiln objdump x | head`) is not an error worth a panic.
    let _ = std::io::stdout().write_all(text.as_bytes());
    Status::Ok
}
