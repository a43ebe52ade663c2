//! A client of GNU make's jobserver, so that `make -jN` running many `kiln` processes (each
//! compiling its kernels in parallel) keeps to N jobs in all.
//!
//! make passes the jobserver in `MAKEFLAGS` as `--jobserver-auth=fifo:PATH` (make 4.4 and
//! later) or `--jobserver-auth=R,W` / `--jobserver-fds=R,W` (inherited pipe descriptors). A
//! process started by make holds one job implicitly; each further job needs a token, one byte
//! read from the jobserver, written back when the job ends. kiln takes the tokens it can get
//! at once, without waiting (at most one per kernel beyond the first), runs that many extra
//! threads, and gives every token back when it is done, panics included ([`Tokens`]'s `Drop`).
//!
//! The pipe is opened anew through its path (`/proc/self/fd/R` for inherited descriptors),
//! which gives kiln its own open file description: it can read without blocking while make's
//! descriptors stay as they are. A jobserver named in `MAKEFLAGS` that cannot be opened (make
//! ran kiln without `+` in the recipe, so the descriptors were closed) means one job: kiln
//! compiles serially, as make expects of a job it gave no jobserver access.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;

/// Linux's `O_NONBLOCK` (the same value on every architecture Rust's Linux targets use but
/// alpha, mips, sparc and parisc, which kiln is not built for).
const O_NONBLOCK: i32 = 0o4000;

/// Where `MAKEFLAGS` says the jobserver is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    Fifo(String),
    Fds(u32, u32),
}

/// The jobserver named in a `MAKEFLAGS` value, if any (the last one wins, as in make).
pub fn parse_makeflags(flags: &str) -> Option<Auth> {
    let mut auth = None;
    for word in flags.split_whitespace() {
        let Some(value) = word
            .strip_prefix("--jobserver-auth=")
            .or_else(|| word.strip_prefix("--jobserver-fds="))
        else {
            continue;
        };
        if let Some(path) = value.strip_prefix("fifo:") {
            auth = Some(Auth::Fifo(path.to_string()));
        } else if let Some((r, w)) = value.split_once(',')
            && let (Ok(r), Ok(w)) = (r.parse(), w.parse())
        {
            auth = Some(Auth::Fds(r, w));
        }
    }
    auth
}

/// Tokens taken from the jobserver; written back when dropped.
pub struct Tokens {
    pipe: Option<File>,
    bytes: Vec<u8>,
}

impl Tokens {
    /// Extra jobs this process may run besides its implicit one.
    pub fn extra(&self) -> usize {
        self.bytes.len()
    }
}

impl Drop for Tokens {
    fn drop(&mut self) {
        if let Some(pipe) = &mut self.pipe
            && !self.bytes.is_empty()
        {
            // make's own tokens go back as they came (it may use their values).
            let _ = pipe.write_all(&self.bytes);
        }
    }
}

/// What the environment allows: `None` without a jobserver in `MAKEFLAGS`; otherwise up to
/// `want` tokens taken without waiting (none where the jobserver cannot be opened).
pub fn acquire(want: usize) -> Option<Tokens> {
    let flags = std::env::var("MAKEFLAGS").ok()?;
    Some(acquire_from(&parse_makeflags(&flags)?, want))
}

/// Up to `want` tokens from the jobserver at `auth`, taken without waiting.
pub fn acquire_from(auth: &Auth, want: usize) -> Tokens {
    let path = match auth {
        Auth::Fifo(p) => p.clone(),
        Auth::Fds(r, _) => format!("/proc/self/fd/{r}"),
    };
    let pipe = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(O_NONBLOCK)
        .open(&path)
        .ok();
    let mut tokens = Tokens {
        pipe,
        bytes: Vec::new(),
    };
    if let Some(pipe) = &mut tokens.pipe {
        let mut byte = [0u8; 1];
        while tokens.bytes.len() < want {
            match pipe.read(&mut byte) {
                Ok(1) => tokens.bytes.push(byte[0]),
                // Empty (WouldBlock), closed or failing: no more tokens now.
                _ => break,
            }
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makeflags_forms() {
        assert_eq!(parse_makeflags("-j4"), None);
        assert_eq!(
            parse_makeflags(" -j4 --jobserver-auth=fifo:/tmp/GMfifo123"),
            Some(Auth::Fifo("/tmp/GMfifo123".into()))
        );
        assert_eq!(
            parse_makeflags("-j --jobserver-auth=3,4"),
            Some(Auth::Fds(3, 4))
        );
        assert_eq!(
            parse_makeflags("--jobserver-fds=5,6 -j"),
            Some(Auth::Fds(5, 6))
        );
        assert_eq!(
            parse_makeflags("--jobserver-auth=3,4 --jobserver-auth=fifo:/x"),
            Some(Auth::Fifo("/x".into()))
        );
        assert_eq!(parse_makeflags("--jobserver-auth=x,y"), None);
    }

    /// A FIFO holding `n` tokens, kept open (a FIFO's bytes last while a descriptor does).
    fn fifo_with(name: &str, n: usize) -> (std::path::PathBuf, File) {
        let path = std::env::temp_dir().join(format!("kiln-js-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let ok = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mkfifo");
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(O_NONBLOCK)
            .open(&path)
            .unwrap();
        f.write_all(&vec![b'+'; n]).unwrap();
        (path, f)
    }

    fn left_in(f: &mut File) -> usize {
        let mut buf = [0u8; 64];
        f.read(&mut buf).unwrap_or(0)
    }

    #[test]
    fn takes_what_is_there_and_gives_it_back() {
        let (path, mut f) = fifo_with("a", 3);
        let auth = Auth::Fifo(path.to_string_lossy().into_owned());
        {
            let t = acquire_from(&auth, 2);
            assert_eq!(t.extra(), 2);
            let t2 = acquire_from(&auth, 5);
            assert_eq!(t2.extra(), 1, "only one token left");
        }
        assert_eq!(left_in(&mut f), 3, "every token back");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn an_empty_jobserver_means_no_extra_job_and_no_wait() {
        let (path, mut f) = fifo_with("b", 0);
        let t = acquire_from(&Auth::Fifo(path.to_string_lossy().into_owned()), 4);
        assert_eq!(t.extra(), 0);
        drop(t);
        assert_eq!(left_in(&mut f), 0);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn inherited_descriptors_are_reopened() {
        use std::os::fd::AsRawFd;
        let (path, mut f) = fifo_with("c", 2);
        let fd = f.as_raw_fd() as u32;
        {
            let t = acquire_from(&Auth::Fds(fd, fd), 8);
            assert_eq!(t.extra(), 2);
        }
        assert_eq!(left_in(&mut f), 2);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_closed_jobserver_means_serial() {
        let t = acquire_from(&Auth::Fifo("/nonexistent/kiln-jobserver".into()), 4);
        assert_eq!(t.extra(), 0);
    }
}
