//! The CUDA device runtime's system calls `vprintf` and `__assertfail`: what one call does,
//! shared by the interpreter (a `call` of the bodiless `.extern .func`) and the SASS emulator
//! (`crates/emu`: `CALL.ABS.NOINC` to the function's address in constant bank 4), so that the
//! launch harness can compare kernels that print or assert.
//!
//! Neither side prints. A call appends a record to the [`DeviceLog`] of the run's
//! [`crate::Memory`] (the log outlives a trap, so an assertion that ends the run is kept):
//!
//! * `vprintf(format, args)`: `format` is the generic address of a NUL-terminated format
//!   string, `args` that of the argument buffer the kernel built (in local memory, with
//!   `st.local`), or 0. [`decode_args`] walks the format's conversions as CUDA's printf lays
//!   the buffer out (checked against nvcc 13.0's `st.local` offsets): each argument at the
//!   next multiple of its own size; `%d %i %u %x %X %o` take 4 bytes, 8 with `l`, `ll`, `z`,
//!   `j`, `t` (or `L`, `q`); `%c` 4 (an `int`, or C's `wint_t` with `l`); `%f %F %e %E %g %G
//!   %a %A` an 8-byte double (floats are promoted); `%s`, `%p` (and `%n`) an 8-byte pointer;
//!   a `*` width or precision an `int` before the value; `%%` none. `short` and `char`
//!   arguments are promoted to 4 bytes whatever the length modifier says (`%hd`, `%hhd`). The
//!   string of a `%s` is recorded by content (at most [`STRING_CAP`] bytes), a `%p` only as
//!   "a pointer": pointer values differ between the interpreter's and the emulator's memory
//!   layouts. The result is the number of arguments decoded (`*` included), -1 for a null
//!   format pointer (then nothing is recorded).
//! * `__assertfail(message, file, line, function, charSize)`: the strings are read, an
//!   [`AssertRecord`] is appended, and the caller ends the run with a trap naming the
//!   assertion ([`AssertRecord::trap_message`]), as the GPU does.
//!
//! A byte the call cannot read (the format, the buffer, a string) is a memory fault: the
//! functions return `Err` with a description and the caller traps.
//!
//! Records carry the thread's CTA and thread index and a per-thread sequence number (the
//! thread's n-th system call), so that both sides' logs sorted by (CTA, thread, sequence)
//! compare equal whatever order the threads ran in ([`first_difference`]).

use std::collections::HashMap;
use std::fmt::Write as _;

/// Bytes of a `%s` string (and of each `__assertfail` string) recorded at most; a longer one
/// is cut there.
pub const STRING_CAP: usize = 4096;

/// The device-runtime functions both executors implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SysCall {
    /// `int vprintf(const char *format, void *args)`.
    Vprintf,
    /// `void __assertfail(const char *message, const char *file, unsigned line,
    /// const char *function, size_t charSize)`.
    Assertfail,
    /// `void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned value)`:
    /// sets a conditional graph node's value for after the kernel (recorded here).
    GraphSetConditional,
}

impl SysCall {
    /// The function called `name` (its PTX/ELF symbol name), if it is one of them.
    pub fn from_name(name: &str) -> Option<SysCall> {
        match name {
            "vprintf" => Some(SysCall::Vprintf),
            "__assertfail" => Some(SysCall::Assertfail),
            "cudaGraphSetConditional" => Some(SysCall::GraphSetConditional),
            _ => None,
        }
    }

    /// The symbol name.
    pub fn name(self) -> &'static str {
        match self {
            SysCall::Vprintf => "vprintf",
            SysCall::Assertfail => "__assertfail",
            SysCall::GraphSetConditional => "cudaGraphSetConditional",
        }
    }

    /// Byte sizes of the parameters, in order (as nvcc declares them).
    pub fn param_sizes(self) -> &'static [u64] {
        match self {
            SysCall::Vprintf => &[8, 8],
            SysCall::Assertfail => &[8, 8, 4, 8, 8],
            SysCall::GraphSetConditional => &[8, 4],
        }
    }
}

/// One decoded `vprintf` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrintfArg {
    /// An integer conversion's argument (or a `*` width/precision): its `size` (4 or 8)
    /// bytes as an unsigned number.
    Int { size: u8, bits: u64 },
    /// A floating-point conversion's argument: the bits of the double.
    Double(u64),
    /// `%s`: the string's bytes without the NUL (at most [`STRING_CAP`]); `None` for a null
    /// pointer.
    Str(Option<Vec<u8>>),
    /// `%p` or `%n`: a pointer was passed (its value is not recorded).
    Pointer,
}

impl std::fmt::Display for PrintfArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrintfArg::Int { size: 4, bits } => write!(f, "{}", *bits as u32 as i32),
            PrintfArg::Int { bits, .. } => write!(f, "{}", *bits as i64),
            PrintfArg::Double(b) => write!(f, "{:?}", f64::from_bits(*b)),
            PrintfArg::Str(Some(s)) => write!(f, "\"{}\"", s.escape_ascii()),
            PrintfArg::Str(None) => f.write_str("(null)"),
            PrintfArg::Pointer => f.write_str("<pointer>"),
        }
    }
}

/// One `vprintf` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintfRecord {
    pub ctaid: [u32; 3],
    pub tid: [u32; 3],
    /// The thread's system calls before this one.
    pub seq: u32,
    /// The format string without its NUL.
    pub format: Vec<u8>,
    pub args: Vec<PrintfArg>,
}

impl PrintfRecord {
    /// `printf("format", args..)` with the format escaped, for messages.
    pub fn describe(&self) -> String {
        let mut s = format!("printf(\"{}\"", self.format.escape_ascii());
        for a in &self.args {
            let _ = write!(s, ", {a}");
        }
        s.push(')');
        s
    }
}

/// One `__assertfail` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssertRecord {
    pub ctaid: [u32; 3],
    pub tid: [u32; 3],
    /// The thread's system calls before this one.
    pub seq: u32,
    /// The asserted expression's text.
    pub message: Vec<u8>,
    pub file: Vec<u8>,
    pub line: u32,
    pub function: Vec<u8>,
}

impl AssertRecord {
    /// The message of the trap that ends the run, in the CUDA runtime's words:
    /// `file:line: function: block: [..], thread: [..] Assertion `message` failed.`
    pub fn trap_message(&self) -> String {
        format!(
            "{}:{}: {}: block: [{},{},{}], thread: [{},{},{}] Assertion `{}` failed.",
            self.file.escape_ascii(),
            self.line,
            self.function.escape_ascii(),
            self.ctaid[0],
            self.ctaid[1],
            self.ctaid[2],
            self.tid[0],
            self.tid[1],
            self.tid[2],
            self.message.escape_ascii()
        )
    }

    /// The assertion without the thread that failed it.
    fn site(&self) -> (&[u8], &[u8], u32, &[u8]) {
        (&self.message, &self.file, self.line, &self.function)
    }
}

/// The records of one run's system calls, in the order they were made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceLog {
    pub printf: Vec<PrintfRecord>,
    pub asserts: Vec<AssertRecord>,
    /// `cudaGraphSetConditional` calls.
    pub conditionals: Vec<ConditionalRecord>,
    /// Calls made so far per (CTA, thread).
    calls: HashMap<([u32; 3], [u32; 3]), u32>,
}

/// One `cudaGraphSetConditional(handle, value)` call.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ConditionalRecord {
    pub ctaid: [u32; 3],
    pub tid: [u32; 3],
    /// The thread's n-th system call.
    pub seq: u32,
    pub handle: u64,
    pub value: u32,
}

impl DeviceLog {
    /// Records a `cudaGraphSetConditional` call of thread `tid` of CTA `ctaid`.
    pub fn record_conditional(&mut self, ctaid: [u32; 3], tid: [u32; 3], handle: u64, value: u32) {
        let seq = self.next_seq(ctaid, tid);
        self.conditionals.push(ConditionalRecord {
            ctaid,
            tid,
            seq,
            handle,
            value,
        });
    }

    fn next_seq(&mut self, ctaid: [u32; 3], tid: [u32; 3]) -> u32 {
        let n = self.calls.entry((ctaid, tid)).or_default();
        *n += 1;
        *n - 1
    }

    /// Records a `vprintf` call of thread `tid` of CTA `ctaid` ([`decode_vprintf`]'s result)
    /// and returns the call's result.
    pub fn record_printf(
        &mut self,
        ctaid: [u32; 3],
        tid: [u32; 3],
        call: Option<PrintfCall>,
    ) -> i32 {
        let seq = self.next_seq(ctaid, tid);
        let Some(call) = call else {
            return -1;
        };
        let n = call.args.len() as i32;
        self.printf.push(PrintfRecord {
            ctaid,
            tid,
            seq,
            format: call.format,
            args: call.args,
        });
        n
    }

    /// Records an `__assertfail` call and returns the trap message that ends the run.
    pub fn record_assert(&mut self, ctaid: [u32; 3], tid: [u32; 3], call: AssertCall) -> String {
        let seq = self.next_seq(ctaid, tid);
        let r = AssertRecord {
            ctaid,
            tid,
            seq,
            message: call.message,
            file: call.file,
            line: call.line,
            function: call.function,
        };
        let m = r.trap_message();
        self.asserts.push(r);
        m
    }

    /// The `vprintf` records sorted by (CTA, thread, sequence): independent of the order in
    /// which threads ran.
    pub fn sorted_printf(&self) -> Vec<&PrintfRecord> {
        let mut v: Vec<&PrintfRecord> = self.printf.iter().collect();
        v.sort_by_key(|r| {
            (
                r.ctaid[2], r.ctaid[1], r.ctaid[0], r.tid[2], r.tid[1], r.tid[0], r.seq,
            )
        });
        v
    }

    /// The `__assertfail` records sorted like [`DeviceLog::sorted_printf`].
    pub fn sorted_asserts(&self) -> Vec<&AssertRecord> {
        let mut v: Vec<&AssertRecord> = self.asserts.iter().collect();
        v.sort_by_key(|r| {
            (
                r.ctaid[2], r.ctaid[1], r.ctaid[0], r.tid[2], r.tid[1], r.tid[0], r.seq,
            )
        });
        v
    }
}

/// At most 200 characters of `s` (records can hold 4 KiB strings), for messages.
fn short(s: String) -> String {
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

/// What to compare of two logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogComparison {
    /// Both runs completed: every record, sorted by (CTA, thread, sequence).
    Complete,
    /// Both runs trapped: which threads ran before the trap depends on the order warps run
    /// in (the interpreter and the emulator count different instructions per turn), so only
    /// the failed assertions' sites (message, file, line, function) are compared, and only
    /// when both runs recorded one.
    Trapped,
}

/// The first difference between two runs' logs (`names` are the two sides' names for the
/// message), or `None` when they agree.
pub fn first_difference(
    a: &DeviceLog,
    b: &DeviceLog,
    how: LogComparison,
    names: (&str, &str),
) -> Option<String> {
    let (na, nb) = names;
    if how == LogComparison::Trapped {
        let (Some(x), Some(y)) = (a.asserts.first(), b.asserts.first()) else {
            return None;
        };
        return (x.site() != y.site()).then(|| {
            format!(
                "failed assertion differs: {na} {}, {nb} {}",
                short(x.trap_message()),
                short(y.trap_message())
            )
        });
    }
    let (pa, pb) = (a.sorted_printf(), b.sorted_printf());
    let key = |r: &PrintfRecord| {
        (
            r.ctaid[2], r.ctaid[1], r.ctaid[0], r.tid[2], r.tid[1], r.tid[0], r.seq,
        )
    };
    let (mut i, mut j) = (0, 0);
    loop {
        let (only, r) = match (pa.get(i), pb.get(j)) {
            (None, None) => break,
            (Some(x), Some(y)) if key(x) == key(y) => {
                if x != y {
                    return Some(format!(
                        "printf log differs at CTA {:?} thread {:?} call {}: {na} {}, {nb} {}",
                        x.ctaid,
                        x.tid,
                        x.seq,
                        short(x.describe()),
                        short(y.describe())
                    ));
                }
                i += 1;
                j += 1;
                continue;
            }
            (Some(x), None) => (na, x),
            (Some(x), Some(y)) if key(x) < key(y) => (na, x),
            (_, Some(y)) => (nb, y),
        };
        return Some(format!(
            "printf log: {na} has {} records, {nb} {}; CTA {:?} thread {:?} call {} only in {only}: {}",
            pa.len(),
            pb.len(),
            r.ctaid,
            r.tid,
            r.seq,
            short(r.describe())
        ));
    }
    let (xa, xb) = (a.sorted_asserts(), b.sorted_asserts());
    if xa != xb {
        let show = |v: &[&AssertRecord]| v.first().map_or("none".to_string(), |r| r.trap_message());
        return Some(format!(
            "assertion log differs: {na} {} record(s) (first: {}), {nb} {} (first: {})",
            xa.len(),
            show(&xa),
            xb.len(),
            show(&xb)
        ));
    }
    let sorted = |l: &DeviceLog| {
        let mut v = l.conditionals.clone();
        v.sort();
        v
    };
    let (ca, cb) = (sorted(a), sorted(b));
    if ca != cb {
        let first = ca
            .iter()
            .zip(&cb)
            .find(|(x, y)| x != y)
            .map_or(String::new(), |(x, y)| {
                format!("; first difference: {x:?} / {y:?}")
            });
        return Some(format!(
            "cudaGraphSetConditional log differs: {na} {} call(s), {nb} {}{first}",
            ca.len(),
            cb.len()
        ));
    }
    None
}

/// Reads bytes at a generic address for the calling thread; `false` when any byte is not
/// readable.
pub type ReadFn<'a> = dyn FnMut(u64, &mut [u8]) -> bool + 'a;

/// A decoded `vprintf` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintfCall {
    pub format: Vec<u8>,
    pub args: Vec<PrintfArg>,
}

/// A decoded `__assertfail` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssertCall {
    pub message: Vec<u8>,
    pub file: Vec<u8>,
    pub line: u32,
    pub function: Vec<u8>,
}

/// The NUL-terminated string at generic address `addr` (at most [`STRING_CAP`] bytes),
/// `None` for a null pointer.
pub fn read_cstr(addr: u64, read: &mut ReadFn<'_>) -> Result<Option<Vec<u8>>, String> {
    if addr == 0 {
        return Ok(None);
    }
    let mut s = Vec::new();
    while s.len() < STRING_CAP {
        let mut b = [0u8];
        let a = addr.wrapping_add(s.len() as u64);
        if !read(a, &mut b) {
            return Err(format!(
                "string at {addr:#x} is unreadable at byte {} ({a:#x})",
                s.len()
            ));
        }
        if b[0] == 0 {
            break;
        }
        s.push(b[0]);
    }
    Ok(Some(s))
}

/// What one conversion takes from the argument buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Take {
    Int(u8),
    Double,
    Str,
    Pointer,
}

/// The arguments the conversions of `format` take, in order (module docs).
fn takes(format: &[u8]) -> Vec<Take> {
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| format.get(i).copied();
    while i < format.len() {
        if format[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        while matches!(at(i), Some(b'-' | b'+' | b' ' | b'#' | b'0' | b'\'')) {
            i += 1;
        }
        // Width, then precision: `*` takes an int argument.
        if at(i) == Some(b'*') {
            out.push(Take::Int(4));
            i += 1;
        }
        while at(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        if at(i) == Some(b'.') {
            i += 1;
            if at(i) == Some(b'*') {
                out.push(Take::Int(4));
                i += 1;
            }
            while at(i).is_some_and(|c| c.is_ascii_digit()) {
                i += 1;
            }
        }
        let mut long = false;
        while let Some(c @ (b'h' | b'l' | b'L' | b'q' | b'j' | b'z' | b't')) = at(i) {
            long |= c != b'h';
            i += 1;
        }
        let Some(conv) = at(i) else { break };
        i += 1;
        match conv {
            b'd' | b'i' | b'u' | b'x' | b'X' | b'o' => {
                out.push(Take::Int(if long { 8 } else { 4 }));
            }
            b'c' => out.push(Take::Int(4)),
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => out.push(Take::Double),
            b's' => out.push(Take::Str),
            b'p' | b'n' => out.push(Take::Pointer),
            // `%%` and unknown conversions take nothing.
            _ => {}
        }
    }
    out
}

/// Decodes the arguments `format` takes from the buffer at generic address `buf` (module
/// docs): each at the next multiple of its size; `%s` strings are read.
pub fn decode_args(
    format: &[u8],
    buf: u64,
    read: &mut ReadFn<'_>,
) -> Result<Vec<PrintfArg>, String> {
    let mut args = Vec::new();
    let mut off = 0u64;
    for t in takes(format) {
        let size: u64 = match t {
            Take::Int(n) => u64::from(n),
            Take::Double | Take::Str | Take::Pointer => 8,
        };
        off = off.next_multiple_of(size);
        let a = buf.wrapping_add(off);
        let mut b = [0u8; 8];
        if !read(a, &mut b[..size as usize]) {
            return Err(format!(
                "argument {} of the format at {a:#x} (buffer {buf:#x} + {off}) is unreadable",
                args.len()
            ));
        }
        off += size;
        let bits = u64::from_le_bytes(b);
        args.push(match t {
            Take::Int(n) => PrintfArg::Int { size: n, bits },
            Take::Double => PrintfArg::Double(bits),
            Take::Str => PrintfArg::Str(read_cstr(bits, read)?),
            Take::Pointer => PrintfArg::Pointer,
        });
    }
    Ok(args)
}

/// Decodes a `vprintf(format, args)` call: `None` when `format` is null.
pub fn decode_vprintf(
    format: u64,
    args: u64,
    read: &mut ReadFn<'_>,
) -> Result<Option<PrintfCall>, String> {
    let Some(fmt) = read_cstr(format, read).map_err(|e| format!("vprintf format: {e}"))? else {
        return Ok(None);
    };
    let args = decode_args(&fmt, args, read).map_err(|e| format!("vprintf: {e}"))?;
    Ok(Some(PrintfCall { format: fmt, args }))
}

/// Decodes an `__assertfail(message, file, line, function, charSize)` call (`charSize` is
/// 1 for the strings nvcc passes and not used); a null string reads as empty.
pub fn decode_assertfail(
    message: u64,
    file: u64,
    line: u32,
    function: u64,
    read: &mut ReadFn<'_>,
) -> Result<AssertCall, String> {
    let mut s = |what: &str, a: u64| -> Result<Vec<u8>, String> {
        read_cstr(a, read)
            .map(Option::unwrap_or_default)
            .map_err(|e| format!("__assertfail {what}: {e}"))
    };
    Ok(AssertCall {
        message: s("message", message)?,
        file: s("file", file)?,
        line,
        function: s("function", function)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A memory of one buffer at 0x1000 and strings at 0x2000.., readable nowhere else.
    struct Mem {
        buf: Vec<u8>,
        strings: Vec<u8>,
    }

    impl Mem {
        fn read(&self, a: u64, out: &mut [u8]) -> bool {
            let (base, data) = if a >= 0x2000 {
                (0x2000, &self.strings)
            } else {
                (0x1000, &self.buf)
            };
            let Some(off) = a.checked_sub(base) else {
                return false;
            };
            let off = off as usize;
            if off + out.len() > data.len() {
                return false;
            }
            out.copy_from_slice(&data[off..off + out.len()]);
            true
        }
    }

    fn put(buf: &mut Vec<u8>, off: usize, b: &[u8]) {
        if buf.len() < off + b.len() {
            buf.resize(off + b.len(), 0);
        }
        buf[off..off + b.len()].copy_from_slice(b);
    }

    #[test]
    fn conversions_take_their_sizes() {
        use Take::*;
        assert_eq!(
            takes(b"%d %f %ld %s %hd %c %f %lld %u %p %zu %%\n"),
            [
                Int(4),
                Double,
                Int(8),
                Str,
                Int(4),
                Int(4),
                Double,
                Int(8),
                Int(4),
                Pointer,
                Int(8)
            ]
        );
        assert_eq!(
            takes(b"%*d|%.*f|%-*.*s"),
            [Int(4), Int(4), Int(4), Double, Int(4), Int(4), Str]
        );
        assert_eq!(takes(b"100%% %5%"), []);
        assert_eq!(
            takes(b"%+08.3e %#x %hhd %jd %td %Lf %le %lc"),
            [
                Double,
                Int(4),
                Int(4),
                Int(8),
                Int(8),
                Double,
                Double,
                Int(4)
            ]
        );
        // A conversion cut off by the end of the string takes nothing.
        assert_eq!(takes(b"%d %l"), [Int(4)]);
    }

    /// The buffer nvcc 13.0 builds for
    /// `printf("%d %f %ld %s %hd %c %f %lld %u %p %zu %%\n", int, double, long, char*,
    /// short, char, float, long long, unsigned, void*, size_t)`: offsets 0, 8, 16, 24, 32,
    /// 36, 40, 48, 56, 64, 72 (the `st.local` offsets of its PTX).
    #[test]
    fn arguments_are_aligned_to_their_size() {
        let mut m = Mem {
            buf: Vec::new(),
            strings: b"hello\0".to_vec(),
        };
        put(&mut m.buf, 0, &(-7i32).to_le_bytes());
        put(&mut m.buf, 8, &2.5f64.to_le_bytes());
        put(&mut m.buf, 16, &(-3i64).to_le_bytes());
        put(&mut m.buf, 24, &0x2000u64.to_le_bytes());
        put(&mut m.buf, 32, &(-2i32).to_le_bytes());
        put(&mut m.buf, 36, &65u32.to_le_bytes());
        put(&mut m.buf, 40, &0.5f64.to_le_bytes());
        put(&mut m.buf, 48, &(1u64 << 40).to_le_bytes());
        put(&mut m.buf, 56, &9u32.to_le_bytes());
        put(&mut m.buf, 64, &0x1234u64.to_le_bytes());
        put(&mut m.buf, 72, &77u64.to_le_bytes());
        let fmt = b"%d %f %ld %s %hd %c %f %lld %u %p %zu %%\n";
        let args = decode_args(fmt, 0x1000, &mut |a, o| m.read(a, o)).unwrap();
        let int = |size, bits| PrintfArg::Int { size, bits };
        assert_eq!(
            args,
            [
                int(4, 0xffff_fff9),
                PrintfArg::Double(2.5f64.to_bits()),
                int(8, (-3i64) as u64),
                PrintfArg::Str(Some(b"hello".to_vec())),
                int(4, 0xffff_fffe),
                int(4, 65),
                PrintfArg::Double(0.5f64.to_bits()),
                int(8, 1 << 40),
                int(4, 9),
                PrintfArg::Pointer,
                int(8, 77),
            ]
        );
    }

    /// `printf("%*d|%.*f|%-*.*s", w, v, p, d, w, p, s)`: nvcc stores 0, 4, 8, 16, 24, 28, 32.
    #[test]
    fn star_width_and_precision_take_ints() {
        let mut m = Mem {
            buf: Vec::new(),
            strings: b"abc\0".to_vec(),
        };
        for (off, v) in [(0, 5u32), (4, 42), (8, 3), (24, 6), (28, 2)] {
            put(&mut m.buf, off, &v.to_le_bytes());
        }
        put(&mut m.buf, 16, &1.25f64.to_le_bytes());
        put(&mut m.buf, 32, &0x2000u64.to_le_bytes());
        let args = decode_args(b"%*d|%.*f|%-*.*s", 0x1000, &mut |a, o| m.read(a, o)).unwrap();
        let int = |bits| PrintfArg::Int { size: 4, bits };
        assert_eq!(
            args,
            [
                int(5),
                int(42),
                int(3),
                PrintfArg::Double(1.25f64.to_bits()),
                int(6),
                int(2),
                PrintfArg::Str(Some(b"abc".to_vec()))
            ]
        );
    }

    #[test]
    fn strings_are_read_by_content_and_capped() {
        let mut m = Mem {
            buf: Vec::new(),
            strings: vec![b'x'; STRING_CAP + 10],
        };
        put(&mut m.buf, 0, &0u64.to_le_bytes());
        put(&mut m.buf, 8, &0x2000u64.to_le_bytes());
        let args = decode_args(b"%s %s", 0x1000, &mut |a, o| m.read(a, o)).unwrap();
        assert_eq!(args[0], PrintfArg::Str(None));
        assert_eq!(args[1], PrintfArg::Str(Some(vec![b'x'; STRING_CAP])));
        // Unterminated before the end of readable memory: a fault.
        m.strings.truncate(10);
        assert!(decode_args(b"%s %s", 0x1000, &mut |a, o| m.read(a, o)).is_err());
    }

    #[test]
    fn vprintf_results_and_records() {
        let mut m = Mem {
            buf: 7u32.to_le_bytes().to_vec(),
            strings: b"v=%d\n\0no args\0".to_vec(),
        };
        let mut log = DeviceLog::default();
        let mut rd = |a: u64, o: &mut [u8]| m.read(a, o);
        let c = decode_vprintf(0x2000, 0x1000, &mut rd).unwrap();
        assert_eq!(log.record_printf([1, 0, 0], [3, 0, 0], c), 1);
        let c = decode_vprintf(0x2006, 0, &mut rd).unwrap();
        assert_eq!(log.record_printf([1, 0, 0], [3, 0, 0], c), 0);
        let c = decode_vprintf(0, 0x1000, &mut rd).unwrap();
        assert_eq!(log.record_printf([1, 0, 0], [3, 0, 0], c), -1);
        assert!(decode_vprintf(0x9000, 0, &mut rd).is_err());
        assert_eq!(log.printf.len(), 2);
        assert_eq!(log.printf[0].describe(), "printf(\"v=%d\\n\", 7)");
        assert_eq!((log.printf[0].seq, log.printf[1].seq), (0, 1));
        m.strings = b"a[i] != 7\0pf.cu\0void k2(int *)\0".to_vec();
        let mut rd = |a: u64, o: &mut [u8]| m.read(a, o);
        let c = decode_assertfail(0x2000, 0x200a, 4, 0x2010, &mut rd).unwrap();
        let msg = log.record_assert([1, 0, 0], [3, 0, 0], c);
        assert_eq!(
            msg,
            "pf.cu:4: void k2(int *): block: [1,0,0], thread: [3,0,0] Assertion `a[i] != 7` failed."
        );
        assert_eq!(log.asserts[0].seq, 3);
    }

    #[test]
    fn logs_compare_sorted_by_thread_and_sequence() {
        let rec = |t: u32, seq: u32, v: u64| PrintfRecord {
            ctaid: [0; 3],
            tid: [t, 0, 0],
            seq,
            format: b"%d".to_vec(),
            args: vec![PrintfArg::Int { size: 4, bits: v }],
        };
        let mut a = DeviceLog::default();
        let mut b = DeviceLog::default();
        a.printf = vec![rec(0, 0, 1), rec(1, 0, 2), rec(0, 1, 3)];
        b.printf = vec![rec(1, 0, 2), rec(0, 0, 1), rec(0, 1, 3)];
        let how = LogComparison::Complete;
        assert_eq!(first_difference(&a, &b, how, ("a", "b")), None);
        b.printf[2] = rec(0, 1, 4);
        let d = first_difference(&a, &b, how, ("a", "b")).unwrap();
        assert!(d.contains("thread [0, 0, 0] call 1"), "{d}");
        b.printf.pop();
        let d = first_difference(&a, &b, how, ("a", "b")).unwrap();
        assert!(d.contains("a has 3 records, b 2"), "{d}");
        assert!(d.contains("thread [0, 0, 0] call 1 only in a"), "{d}");
        // A thread's call only in the second log.
        let d = first_difference(&b, &a, how, ("b", "a")).unwrap();
        assert!(d.contains("only in a"), "{d}");
        // After traps only the assertion sites are compared.
        assert_eq!(
            first_difference(&a, &b, LogComparison::Trapped, ("a", "b")),
            None
        );
    }
}
